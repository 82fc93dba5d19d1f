package io.github.fdbcoord.service.eventbus;

import io.github.fdbcoord.api.FailureKind;
import io.github.fdbcoord.client.wire.WireProtocol;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;
import io.vertx.core.json.JsonObject;

import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * One layer served on one event-bus address: a request is a JSON object body with an
 * {@code action} header; the reply is a JSON object, or a {@link ReplyException}
 * with a {@link FailureCodes} code. Subclasses register their actions with {@link #action}.
 *
 * <p>Every action is answered within its bound (the request timeout, or what the action asks for
 * itself, such as an acquire's wait) whatever the store does: past it the request is answered 503
 * {@code store_unavailable}. The store call goes on; an action whose late outcome must not stand
 * (a grant nobody was told of) registers what undoes it.
 */
public abstract class LayerVerticle extends VerticleBase {
  /** Header naming the operation. */
  static final String ACTION = WireProtocol.ACTION_HEADER;
  /** How long an action may wait for the store unless it asks for longer ({@code requestTimeoutMs}). */
  public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(5);
  private static final Logger LOG = LoggerFactory.getLogger(LayerVerticle.class);

  /** The event-bus address this layer answers on. */
  protected final String address;
  /** The store's worker threads, on which {@link #store} runs the layer calls that may block. */
  protected final StoreWorkers workers;
  /** Where each served request's duration and outcome is recorded. */
  protected final Metrics metrics;
  private final Map<String, Function<JsonObject, Future<JsonObject>>> actions = new LinkedHashMap<>();
  private final Map<String, Function<JsonObject, Duration>> bounds = new HashMap<>();
  private final Map<String, BiConsumer<JsonObject, JsonObject>> undos = new HashMap<>();
  private Duration requestTimeout = DEFAULT_REQUEST_TIMEOUT;
  private MessageConsumer<Object> consumer;
  private MessageConsumer<JsonObject> handOffs;
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

  /** Bounds every action that does not ask for longer by {@code timeout} (set before the verticle starts). */
  public LayerVerticle boundedBy(Duration timeout) {
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("the request timeout must be positive, got " + timeout);
    }
    this.requestTimeout = timeout;
    return this;
  }

  /** How long an action may wait for the store unless it asks for longer. */
  public Duration requestTimeout() {
    return requestTimeout;
  }

  /** Registers the handler of {@code action}, answered within {@link #requestTimeout()}. */
  protected void action(String name, Function<JsonObject, Future<JsonObject>> handler) {
    actions.put(name, handler);
  }

  /**
   * Registers the handler of {@code action}, answered within {@code bound.apply(body)}; a reply that
   * comes after the request was answered {@code store_unavailable} is given to {@code undo} (with
   * the request's body), which withdraws it: the requester was told the request failed.
   */
  protected void action(String name, Function<JsonObject, Future<JsonObject>> handler,
      Function<JsonObject, Duration> bound, BiConsumer<JsonObject, JsonObject> undo) {
    actions.put(name, handler);
    bounds.put(name, bound);
    undos.put(name, undo);
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
    if (handOffs != null) {
      handOffs.unregister();
    }
    return consumer == null ? Future.succeededFuture() : consumer.unregister();
  }

  /** Where the hand-off hints of the layer verticles serving {@code address} are published. */
  public static String handOffAddress(String address) {
    return address + ".hand-off";
  }

  /**
   * Publishes, to the verticles serving {@code address} on every node, that {@code owner} was granted {@code name}.
   * An owner names no node, so the hint goes to every node, each filtering by its local waits: one message per
   * node and hand-off, against a per-lock address whose registration would cost a store commit per waited lock.
   */
  public static void publishHandOff(Vertx vertx, String address, String name, String owner) {
    vertx.eventBus().publish(handOffAddress(address), new JsonObject().put("name", name).put("owner", owner));
  }

  /**
   * Listens for the hand-off hints published for this verticle's address ({@link #publishHandOff}) and hands each to
   * {@code recheck}, which has the layer read the lock again when one of its waits is for that owner; unregistered
   * on stop. A hint grants nothing: a malformed one is ignored.
   */
  protected Future<Void> listenForHandOffs(BiConsumer<String, String> recheck) {
    handOffs = vertx.eventBus().consumer(handOffAddress(address), m -> {
      JsonObject hint = m.body();
      try {
        recheck.accept(hint.getString("name"), hint.getString("owner"));
      } catch (IllegalArgumentException | ClassCastException | NullPointerException e) {
        LOG.debug("ignored a malformed hand-off hint " + hint, e);
      }
    });
    return handOffs.completion();
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
      if (!result.isComplete()) {
        Function<JsonObject, Duration> bound = bounds.get(action);
        result = bounded(action, body, result, bound == null ? requestTimeout : bound.apply(body));
      }
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
   * {@code result}, or a {@code store_unavailable} failure once {@code bound} has passed without it.
   * A success that comes later goes to the action's undo, if it has one: nobody will use it.
   */
  private Future<JsonObject> bounded(String action, JsonObject body, Future<JsonObject> result, Duration bound) {
    Promise<JsonObject> answer = Promise.promise();
    BiConsumer<JsonObject, JsonObject> undo = undos.get(action);
    long timer = vertx.setTimer(Math.max(1, bound.toMillis()), id -> answer.tryFail(FailureCodes.failure(
        FailureKind.STORE_UNAVAILABLE, "the store did not answer '" + action + "' at " + address + " within "
            + bound.toMillis() + " ms (it is stopped, unreachable or recovering); " + (undo == null
            ? "a write may still take effect once it answers"
            : "the request will not take effect (whatever it did once the store answers is withdrawn)"))));
    result.onComplete(ar -> {
      vertx.cancelTimer(timer);
      boolean inTime = ar.succeeded() ? answer.tryComplete(ar.result()) : answer.tryFail(ar.cause());
      if (!inTime && ar.succeeded() && undo != null) {
        try {
          undo.accept(body, ar.result());
        } catch (RuntimeException e) {
          LOG.warn("could not withdraw the late outcome of '" + action + "' " + body + ": " + ar.result(), e);
        }
      }
    });
    return answer.future();
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
