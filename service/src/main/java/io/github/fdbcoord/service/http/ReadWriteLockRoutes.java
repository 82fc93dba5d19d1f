package io.github.fdbcoord.service.http;

import io.github.fdbcoord.client.CoordinationClient;
import io.github.fdbcoord.client.wire.ReadWriteLockWire;
import io.github.fdbcoord.service.eventbus.Requests;
import io.vertx.core.AsyncResult;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import static io.github.fdbcoord.service.http.HttpResponses.abbreviate;
import static io.github.fdbcoord.service.http.HttpResponses.error;

/**
 * The read-write lock routes, answered by its event-bus actions. An acquire lives as long as its HTTP request, as a
 * mutex acquire does ({@link MutexRoutes}): when the client goes away before the answer, the waiter is abandoned (it
 * leaves the queue at once); a grant that arrives after the client went away is released.
 *
 * <p>The waiting of an acquire is {@link MutexRoutes}'s and {@link ElectionRoutes}'s, written again for this
 * layer's fields and actions: it is to become one helper shared by the three.
 */
final class ReadWriteLockRoutes {
  private final Vertx vertx;
  private final HttpOptions options;
  private final LayerForward forward;
  private final CoordinationClient client;
  private final String address;
  /** Acquire requests waiting for their reply: answered 503 closed on {@link #close()}. */
  private final Map<RoutingContext, JsonObject> acquiring = new ConcurrentHashMap<>();
  private volatile boolean stopping;

  ReadWriteLockRoutes(Vertx vertx, HttpOptions options, LayerForward forward) {
    this.vertx = vertx;
    this.options = options;
    this.forward = forward;
    this.client = forward.client();
    this.address = client.readWriteLockAddress();
  }

  void mount(Router router) {
    router.get("/rwlocks/:name").handler(ctx -> forward.to(ctx, address, ReadWriteLockWire.STATE,
        new JsonObject().put("name", ctx.pathParam("name")), 200));
    router.post("/rwlocks/:name/acquire").handler(ctx -> {
      JsonObject body = HttpRequests.body(ctx);
      if (body == null || !putMode(ctx, body)) {
        return;
      }
      body.put("name", ctx.pathParam("name"));
      Long timeoutMs = Requests.optionalLong(body, "timeoutMs", 0, options.getMaxAcquireTimeout().toMillis());
      long sendTimeout = LayerForward.SEND_TIMEOUT_MS
          + (timeoutMs == null ? options.getMaxAcquireTimeout().toMillis() : timeoutMs);
      acquire(ctx, body, sendTimeout);
    });
    for (String action : List.of(ReadWriteLockWire.RELEASE, ReadWriteLockWire.HEARTBEAT,
        ReadWriteLockWire.DOWNGRADE)) {
      router.post("/rwlocks/:name/" + action).handler(ctx -> {
        JsonObject body = HttpRequests.body(ctx);
        if (body != null && putMode(ctx, body)) {
          forward.to(ctx, address, action, body.put("name", ctx.pathParam("name")), 200);
        }
      });
    }
  }

  /**
   * Copies the query parameter {@code mode} into {@code body}; false (400 sent) when the body names another mode.
   * Its value is checked by the action, as the body's is.
   */
  private static boolean putMode(RoutingContext ctx, JsonObject body) {
    String mode = ctx.request().getParam("mode");
    if (mode == null) {
      return true;
    }
    Object inBody = body.getValue("mode");
    if (inBody != null && !mode.equals(inBody)) {
      error(ctx, 400, "bad_request", "query parameter 'mode' ('" + abbreviate(mode) + "') and field 'mode' ("
          + Requests.describe(inBody) + ") disagree: give one");
      return false;
    }
    body.put("mode", mode);
    return true;
  }

  private void acquire(RoutingContext ctx, JsonObject body, long sendTimeoutMs) {
    if (stopping) {
      error(ctx, 503, "closed", "the service on this node is stopping");
      return;
    }
    Object name = body.getValue("name");
    Object owner = body.getValue("owner");
    acquiring.put(ctx, new JsonObject().put("name", name).put("owner", owner));
    ctx.response().closeHandler(v -> {
      if (acquiring.remove(ctx) != null) {
        abandon(name, owner);
      }
    });
    ctx.put(HttpFilters.ACQUIRE_WAIT_STARTED, System.nanoTime());
    client.request(address, ReadWriteLockWire.ACQUIRE, body, sendTimeoutMs).onComplete(ar -> {
      ctx.put(HttpFilters.ACQUIRE_WAIT_ENDED, System.nanoTime());
      if (ar.succeeded()) {
        // One event-loop turn before writing a grant, as MutexRoutes does: a close the client already sent is
        // handled first, and the grant released at once instead of written to nobody (and held for its lease).
        vertx.setTimer(1, id -> answer(ctx, ar, name, owner));
      } else {
        answer(ctx, ar, name, owner);
      }
    });
  }

  private void answer(RoutingContext ctx, AsyncResult<JsonObject> ar, Object name, Object owner) {
    if (acquiring.remove(ctx) == null) {
      // Nobody to answer (the client left, or 503 closed was sent): a late grant is released.
      if (ar.succeeded()) {
        client.request(address, ReadWriteLockWire.RELEASE, new JsonObject().put("name", name).put("owner", owner)
            .put("mode", ar.result().getString("mode")).put("token", ar.result().getString("token")));
      }
      return;
    }
    HttpResponses.reply(ctx, ar, 200);
  }

  private Future<JsonObject> abandon(Object name, Object owner) {
    if (!(name instanceof String) || !(owner instanceof String)) {
      return Future.succeededFuture(); // the acquire itself was refused as a bad request
    }
    return client.request(address, ReadWriteLockWire.ABANDON, new JsonObject().put("name", name).put("owner", owner));
  }

  /** Answers every waiting acquirer 503 closed and takes it out of its queue; later acquires are refused. */
  Future<?> close() {
    stopping = true;
    List<Future<?>> abandoned = new ArrayList<>();
    for (RoutingContext ctx : new ArrayList<>(acquiring.keySet())) {
      JsonObject waiter = acquiring.remove(ctx);
      if (waiter != null) {
        error(ctx, 503, "closed", "the service on this node is stopping: the acquire was abandoned and its owner"
            + " left the queue");
        abandoned.add(abandon(waiter.getValue("name"), waiter.getValue("owner")));
      }
    }
    return Future.join(abandoned);
  }
}
