package io.github.fdbcoord.service.eventbus;

import io.github.fdbcoord.client.wire.WireProtocol;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * One layer served on one event-bus address: a request is a JSON object body with an
 * {@code action} header; the reply is a JSON object, or a {@link ReplyException}
 * with a {@link FailureCodes} code. Subclasses register their actions with {@link #action}.
 */
public abstract class LayerVerticle extends VerticleBase {
  /** Header naming the operation. */
  static final String ACTION = WireProtocol.ACTION_HEADER;

  /** The event-bus address this layer answers on. */
  protected final String address;
  /** The store's worker threads, on which {@link #store} runs the layer calls that may block. */
  protected final StoreWorkers workers;
  /** Where each served request's duration and outcome is recorded. */
  protected final Metrics metrics;
  private final Map<String, Function<JsonObject, Future<JsonObject>>> actions = new LinkedHashMap<>();
  private MessageConsumer<Object> consumer;
  /** Where the HTTP routes of this process find this verticle (null: reached over the event bus only). */
  private LocalLayers local;

  LayerVerticle(String address, StoreWorkers workers, Metrics metrics) {
    this.address = address;
    this.workers = workers;
    this.metrics = metrics;
  }

  /** Serves this layer's actions to the HTTP routes of this process directly, besides the event bus. */
  public LayerVerticle servedLocally(LocalLayers local) {
    this.local = local;
    return this;
  }

  /** Registers the handler of {@code action}. */
  protected void action(String name, Function<JsonObject, Future<JsonObject>> handler) {
    actions.put(name, handler);
  }

  /** Registers every action of this layer ({@link #action}); called once, when the verticle starts. */
  protected abstract void registerActions();

  /** Registers the actions, offers them to the local HTTP routes (if served locally) and starts consuming. */
  @Override
  public Future<?> start() {
    registerActions();
    if (local != null) {
      local.serve(address, this);
    }
    consumer = vertx.eventBus().consumer(address, this::handle);
    return consumer.completion();
  }

  /** Withdraws the layer from the local HTTP routes and stops consuming. */
  @Override
  public Future<?> stop() {
    if (local != null) {
      local.withdraw(address, this);
    }
    return consumer == null ? Future.succeededFuture() : consumer.unregister();
  }

  private void handle(Message<Object> message) {
    Object body = message.body();
    Future<JsonObject> result;
    try {
      result = call(message.headers().get(ACTION), Requests.body(body));
    } catch (RuntimeException e) {
      result = Future.failedFuture(e);
    }
    result.onComplete(ar -> {
      if (ar.succeeded()) {
        message.reply(ar.result());
      } else {
        ReplyException failure = FailureCodes.of(ar.cause());
        message.fail(failure.failureCode(), failure.getMessage());
      }
    });
  }

  /**
   * Serves {@code action} with {@code body}: the one implementation behind the event-bus consumer
   * and the HTTP routes ({@link LocalLayers}), so neither pays for the other's hops. Records the
   * request's metrics; fails with the {@link FailureCodes} failure the event bus would carry.
   */
  Future<JsonObject> call(String action, JsonObject body) {
    long start = System.nanoTime();
    Future<JsonObject> result;
    try {
      if (action == null) {
        throw FailureCodes.badRequest("the '" + ACTION + "' header is missing; actions of " + address + ": "
            + actions.keySet());
      }
      Function<JsonObject, Future<JsonObject>> handler = actions.get(action);
      if (handler == null) {
        throw FailureCodes.failure(FailureCodes.NOT_FOUND, "unknown_action", "no action '" + action + "' at "
            + address + "; actions: " + actions.keySet());
      }
      result = handler.apply(body);
    } catch (RuntimeException e) {
      result = Future.failedFuture(e);
    }
    String name = action == null ? "none" : actions.containsKey(action) ? action : "unknown";
    return result.transform(ar -> {
      if (ar.succeeded()) {
        metrics.request(address, name, "ok", System.nanoTime() - start);
        return Future.succeededFuture(ar.result());
      }
      ReplyException failure = FailureCodes.of(ar.cause());
      metrics.request(address, name, FailureCodes.reasonOf(failure), System.nanoTime() - start);
      return Future.failedFuture(failure);
    });
  }

  /**
   * Runs a layer call: on the calling thread when the store's calls never block it (fdb-java's
   * asynchronous API, the in-memory engine), else on a store worker ({@link StoreWorkers#call}).
   * The future completes on the thread that completed the call, so the reply is encoded and sent
   * from there: the event bus delivers it on the caller's context, and a hop back through this
   * verticle's event loop is saved. A call answered at once (a cached intern) costs no hop at all.
   */
  protected <T> Future<T> store(Supplier<? extends CompletableFuture<T>> call) {
    return workers.callAndStay(call);
  }
}
