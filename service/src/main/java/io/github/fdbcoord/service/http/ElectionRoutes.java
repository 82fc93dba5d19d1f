package io.github.fdbcoord.service.http;

import io.github.fdbcoord.client.wire.ElectionWire;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;

import java.util.List;

/**
 * The election routes, answered by the election's event-bus actions. A campaign lives as long as its HTTP request,
 * as a mutex acquire does ({@link AcquireWaits}): when the client goes away before the answer, the candidate is
 * abandoned (it leaves the queue at once); a leadership that arrives after the client went away is resigned.
 */
final class ElectionRoutes {
  private final HttpOptions options;
  private final LayerForward forward;
  private final String address;
  private final AcquireWaits campaigns;

  ElectionRoutes(Vertx vertx, HttpOptions options, LayerForward forward) {
    this.options = options;
    this.forward = forward;
    this.address = forward.client().electionAddress();
    // Every successful campaign leads: there is no queued answer to tell from a leadership.
    this.campaigns = new AcquireWaits(vertx, forward.client(), new AcquireWaits.Kind(address, ElectionWire.CAMPAIGN,
        ElectionWire.ABANDON, ElectionWire.RESIGN, "election", "candidate", "epoch", reply -> true, "campaign"));
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
      campaigns.send(ctx, body, AcquireWaits.sendTimeoutMs(body, options));
    });
    for (String action : List.of(ElectionWire.RESIGN, ElectionWire.HANDOVER, ElectionWire.HEARTBEAT)) {
      router.post("/elections/:name/" + action).handler(ctx -> {
        JsonObject body = HttpRequests.body(ctx);
        if (body != null) {
          forward.to(ctx, address, action, body.put("election", ctx.pathParam("name")), 200);
        }
      });
    }
  }

  /** Answers every waiting campaign 503 closed and takes its candidate out of the queue; later ones are refused. */
  Future<?> close() {
    return campaigns.close();
  }
}
