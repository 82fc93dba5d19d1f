package io.github.fdbcoord.service.http;

import io.github.fdbcoord.client.CoordinationClient;
import io.github.fdbcoord.client.wire.MutexWire;
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

import static io.github.fdbcoord.service.http.HttpResponses.error;

/**
 * The mutex routes. A waiting acquire lives as long as its HTTP request: when the client goes away
 * before the answer, the waiter is abandoned (it leaves the queue at once); a grant that arrives
 * after the client went away is released.
 */
final class MutexRoutes {
  private final Vertx vertx;
  private final HttpOptions options;
  private final LayerForward forward;
  private final CoordinationClient client;
  private final String address;
  /** Acquire requests waiting for their reply: answered 503 closed on {@link #close()}. */
  private final Map<RoutingContext, JsonObject> acquiring = new ConcurrentHashMap<>();
  private volatile boolean stopping;

  MutexRoutes(Vertx vertx, HttpOptions options, LayerForward forward) {
    this.vertx = vertx;
    this.options = options;
    this.forward = forward;
    this.client = forward.client();
    this.address = client.mutexAddress();
  }

  void mount(Router router) {
    router.get("/mutexes").handler(ctx -> {
      JsonObject body = new JsonObject().put("after", ctx.request().getParam("after"));
      if (HttpRequests.putLimit(ctx, body)) {
        forward.to(ctx, address, MutexWire.HELD, body, 200);
      }
    });
    router.get("/mutexes/:name").handler(ctx -> forward.to(ctx, address, MutexWire.STATE,
        new JsonObject().put("name", ctx.pathParam("name")), 200));
    router.post("/mutexes/:name/acquire").handler(ctx -> {
      JsonObject body = HttpRequests.body(ctx);
      if (body == null) {
        return;
      }
      boolean wait = Requests.optionalBoolean(body, "wait", true);
      body.remove("wait");
      body.put("name", ctx.pathParam("name"));
      Long timeoutMs = Requests.optionalLong(body, "timeoutMs", 0, options.getMaxAcquireTimeout().toMillis());
      long sendTimeout = LayerForward.SEND_TIMEOUT_MS
          + (timeoutMs == null ? options.getMaxAcquireTimeout().toMillis() : timeoutMs);
      if (wait) {
        acquire(ctx, body, sendTimeout);
      } else {
        forward.to(ctx, address, MutexWire.TRY_ACQUIRE, body, 200, sendTimeout);
      }
    });
    for (String action : List.of(MutexWire.RELEASE, MutexWire.HEARTBEAT, MutexWire.LEAVE)) {
      router.post("/mutexes/:name/" + action).handler(ctx -> {
        JsonObject body = HttpRequests.body(ctx);
        if (body != null) {
          forward.to(ctx, address, action, body.put("name", ctx.pathParam("name")), 200);
        }
      });
    }
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
    client.request(address, MutexWire.ACQUIRE, body, sendTimeoutMs).onComplete(ar -> {
      ctx.put(HttpFilters.ACQUIRE_WAIT_ENDED, System.nanoTime());
      if (ar.succeeded() && MutexWire.isHeld(ar.result())) {
        // One event-loop turn before writing a grant: a close the client already sent is handled
        // first, so the grant is given back at once instead of being written to nobody (and held
        // until its lease runs out).
        vertx.setTimer(1, id -> answerAcquire(ctx, ar, name, owner));
      } else {
        answerAcquire(ctx, ar, name, owner);
      }
    });
  }

  private void answerAcquire(RoutingContext ctx, AsyncResult<JsonObject> ar, Object name, Object owner) {
    if (acquiring.remove(ctx) == null) {
      // Nobody to answer (the client left, or 503 closed was sent): a late grant is given back.
      if (ar.succeeded() && MutexWire.isHeld(ar.result())) {
        client.request(address, MutexWire.RELEASE, new JsonObject().put("name", name).put("owner", owner)
            .put("token", ar.result().getString("token")));
      }
      return;
    }
    HttpResponses.reply(ctx, ar, 200);
  }

  private Future<JsonObject> abandon(Object name, Object owner) {
    if (!(name instanceof String) || !(owner instanceof String)) {
      return Future.succeededFuture(); // the acquire itself was refused as a bad request
    }
    return client.request(address, MutexWire.ABANDON, new JsonObject().put("name", name).put("owner", owner));
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
