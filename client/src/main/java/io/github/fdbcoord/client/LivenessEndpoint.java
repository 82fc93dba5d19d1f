package io.github.fdbcoord.client;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.json.JsonObject;
import io.github.fdbcoord.client.wire.WireProtocol;

import java.util.UUID;

/**
 * The address at which a client answers the service's liveness pings while its {@code acquire}
 * requests wait: when the node dies, the registration goes with it, and the service takes the
 * waiters out of the queues.
 *
 * <p>The consumer lives on a context of its own, outside every deployment, so that undeploying the
 * verticle that happened to acquire first does not unregister it under the others still waiting.
 * It is registered for the first waiting acquire and unregistered when no acquire has waited for
 * {@link #IDLE_MS}: a clustered registration costs a round trip to the cluster manager, which
 * back-to-back acquires should not pay each time.
 */
final class LivenessEndpoint {
  /** How long the consumer stays registered after the last waiting acquire ended. */
  static final long IDLE_MS = 30_000;

  private final Vertx vertx;
  private final String prefix;
  private final long idleMs;
  /** Guarded by {@code this}: acquires may start on any thread. */
  private Context context;
  private Future<String> registration;
  private MessageConsumer<JsonObject> consumer;
  private int waiting;
  private long idleTimer = -1;

  LivenessEndpoint(Vertx vertx, String prefix) {
    this(vertx, prefix, IDLE_MS);
  }

  LivenessEndpoint(Vertx vertx, String prefix, long idleMs) {
    this.vertx = vertx;
    this.prefix = prefix;
    this.idleMs = idleMs;
  }

  /**
   * The liveness address for one more waiting acquire, completed on the caller's context; call
   * {@link #done()} once that acquire ended, whatever its outcome.
   */
  Future<String> enter() {
    Context caller = vertx.getOrCreateContext();
    Future<String> address;
    synchronized (this) {
      waiting++;
      if (idleTimer >= 0) {
        vertx.cancelTimer(idleTimer);
        idleTimer = -1;
      }
      if (registration == null) {
        registration = register();
      }
      address = registration;
    }
    if (address.isComplete()) {
      return address;
    }
    // The registration completes on the endpoint's context: hand the result back to the caller's.
    Promise<String> onCaller = Promise.promise();
    address.onComplete(ar -> caller.runOnContext(v -> onCaller.handle(ar)));
    return onCaller.future();
  }

  /** One waiting acquire ended: once none waited for the idle time, the consumer is unregistered. */
  void done() {
    synchronized (this) {
      waiting--;
      if (waiting > 0 || registration == null) {
        return;
      }
    }
    // The timer is set from the endpoint's context: one set on the caller's would be cancelled
    // with the caller's deployment and leave the consumer registered for good.
    context.runOnContext(v -> {
      synchronized (this) {
        if (waiting == 0 && idleTimer < 0 && registration != null) {
          idleTimer = vertx.setTimer(idleMs, this::unregisterIfIdle);
        }
      }
    });
  }

  private synchronized void unregisterIfIdle(long timer) {
    if (timer != idleTimer || waiting > 0) {
      return;
    }
    idleTimer = -1;
    registration = null;
    MessageConsumer<JsonObject> gone = consumer;
    consumer = null;
    if (gone != null) {
      gone.unregister();
    }
  }

  /** Registers a fresh address on the endpoint's own context; a failed registration is retried by the next acquire. */
  private Future<String> register() {
    if (context == null) {
      context = ((VertxInternal) vertx).createEventLoopContext();
    }
    String address = WireProtocol.livenessAddress(prefix, UUID.randomUUID().toString());
    Promise<String> registered = Promise.promise();
    context.runOnContext(v -> {
      MessageConsumer<JsonObject> c = vertx.eventBus().consumer(address, m -> m.reply(new JsonObject()));
      synchronized (this) {
        consumer = c;
      }
      c.completion().map(address).onComplete(registered);
    });
    Future<String> result = registered.future();
    result.onFailure(e -> {
      synchronized (this) {
        if (registration == result) {
          registration = null;
        }
      }
    });
    return result;
  }
}
