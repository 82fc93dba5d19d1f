package io.github.fdbcoord.service.http;

import io.github.fdbcoord.client.CoordinationClient;
import io.github.fdbcoord.client.wire.ElectionWire;
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
 * The election routes, answered by the election's event-bus actions. A campaign lives as long as its HTTP request,
 * as a mutex acquire does ({@link MutexRoutes}): when the client goes away before the answer, the candidate is
 * abandoned (it leaves the queue at once); a leadership that arrives after the client went away is resigned.
 */
final class ElectionRoutes {
  private final Vertx vertx;
  private final HttpOptions options;
  private final LayerForward forward;
  private final CoordinationClient client;
  private final String address;
  /** Campaigns waiting for their reply: answered 503 closed on {@link #close()}. */
  private final Map<RoutingContext, JsonObject> campaigning = new ConcurrentHashMap<>();
  private volatile boolean stopping;

  ElectionRoutes(Vertx vertx, HttpOptions options, LayerForward forward) {
    this.vertx = vertx;
    this.options = options;
    this.forward = forward;
    this.client = forward.client();
    this.address = client.electionAddress();
  }

  void mount(Router router) {
    router.get("/elections/:name").handler(ctx -> forward.to(ctx, address, ElectionWire.LEADER,
        new JsonObject().put("election", ctx.pathParam("name")), 200));
    router.post("/elections/:name/campaign").handler(ctx -> {
      JsonObject body = HttpRequests.body(ctx);
      if (body == null) {
        return;
      }
      body.put("election", ctx.pathParam("name"));
      Long timeoutMs = Requests.optionalLong(body, "timeoutMs", 0, options.getMaxAcquireTimeout().toMillis());
      long sendTimeout = LayerForward.SEND_TIMEOUT_MS
          + (timeoutMs == null ? options.getMaxAcquireTimeout().toMillis() : timeoutMs);
      campaign(ctx, body, sendTimeout);
    });
    for (String action : List.of(ElectionWire.RESIGN, ElectionWire.HEARTBEAT)) {
      router.post("/elections/:name/" + action).handler(ctx -> {
        JsonObject body = HttpRequests.body(ctx);
        if (body != null) {
          forward.to(ctx, address, action, body.put("election", ctx.pathParam("name")), 200);
        }
      });
    }
  }

  private void campaign(RoutingContext ctx, JsonObject body, long sendTimeoutMs) {
    if (stopping) {
      error(ctx, 503, "closed", "the service on this node is stopping");
      return;
    }
    Object election = body.getValue("election");
    Object candidate = body.getValue("candidate");
    campaigning.put(ctx, new JsonObject().put("election", election).put("candidate", candidate));
    ctx.response().closeHandler(v -> {
      if (campaigning.remove(ctx) != null) {
        abandon(election, candidate);
      }
    });
    ctx.put(HttpFilters.ACQUIRE_WAIT_STARTED, System.nanoTime());
    client.request(address, ElectionWire.CAMPAIGN, body, sendTimeoutMs).onComplete(ar -> {
      ctx.put(HttpFilters.ACQUIRE_WAIT_ENDED, System.nanoTime());
      if (ar.succeeded()) {
        // One event-loop turn before writing a leadership, as MutexRoutes does for a grant: a close the client
        // already sent is handled first, and the leadership resigned at once instead of written to nobody.
        vertx.setTimer(1, id -> answer(ctx, ar, election, candidate));
      } else {
        answer(ctx, ar, election, candidate);
      }
    });
  }

  private void answer(RoutingContext ctx, AsyncResult<JsonObject> ar, Object election, Object candidate) {
    if (campaigning.remove(ctx) == null) {
      // Nobody to answer (the client left, or 503 closed was sent): a late leadership is resigned.
      if (ar.succeeded()) {
        client.request(address, ElectionWire.RESIGN, new JsonObject().put("election", election)
            .put("candidate", candidate).put("epoch", ar.result().getString("epoch")));
      }
      return;
    }
    HttpResponses.reply(ctx, ar, 200);
  }

  private Future<JsonObject> abandon(Object election, Object candidate) {
    if (!(election instanceof String) || !(candidate instanceof String)) {
      return Future.succeededFuture(); // the campaign itself was refused as a bad request
    }
    return client.request(address, ElectionWire.ABANDON, new JsonObject().put("election", election)
        .put("candidate", candidate));
  }

  /** Answers every waiting campaign 503 closed and takes its candidate out of the queue; later ones are refused. */
  Future<?> close() {
    stopping = true;
    List<Future<?>> abandoned = new ArrayList<>();
    for (RoutingContext ctx : new ArrayList<>(campaigning.keySet())) {
      JsonObject waiter = campaigning.remove(ctx);
      if (waiter != null) {
        error(ctx, 503, "closed", "the service on this node is stopping: the campaign was abandoned and its"
            + " candidate left the queue");
        abandoned.add(abandon(waiter.getValue("election"), waiter.getValue("candidate")));
      }
    }
    return Future.join(abandoned);
  }
}
