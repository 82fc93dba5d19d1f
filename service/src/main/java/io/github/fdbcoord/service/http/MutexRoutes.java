package io.github.fdbcoord.service.http;

import io.github.fdbcoord.client.wire.MutexWire;
import io.github.fdbcoord.service.eventbus.Requests;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;

import java.util.List;

/**
 * The mutex routes. A waiting acquire lives as long as its HTTP request ({@link AcquireWaits}): when the client goes
 * away before the answer, the waiter is abandoned (it leaves the queue at once); a grant that arrives after the
 * client went away is released.
 */
final class MutexRoutes {
  private final HttpOptions options;
  private final LayerForward forward;
  private final String address;
  private final AcquireWaits acquires;
  private final AcquireWaits acquiresAll;

  MutexRoutes(Vertx vertx, HttpOptions options, LayerForward forward) {
    this.options = options;
    this.forward = forward;
    this.address = forward.client().mutexAddress();
    this.acquires = new AcquireWaits(vertx, forward.client(), new AcquireWaits.Kind(address, MutexWire.ACQUIRE,
        MutexWire.ABANDON, MutexWire.RELEASE, "name", "owner", "token", MutexWire::isHeld, "acquire"));
    // Abandoned by naming its set; a late grant is given back whole, in one transaction.
    this.acquiresAll = new AcquireWaits(vertx, forward.client(), new AcquireWaits.Kind(address, MutexWire.ACQUIRE_ALL,
        MutexWire.ABANDON, MutexWire.RELEASE_ALL, "names", "owner", MutexWire::isHeld, "acquire of several mutexes",
        (waiter, grant) -> new JsonObject().put("owner", waiter.getValue("owner")).put("grants", grant.getValue("grants"))));
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
      long sendTimeout = AcquireWaits.sendTimeoutMs(body, options);
      if (wait) {
        acquires.send(ctx, body, sendTimeout);
      } else {
        forward.to(ctx, address, MutexWire.TRY_ACQUIRE, body, 200, sendTimeout);
      }
    });
    // Before the routes with a name: "acquire-all" is no mutex's name here (a mutex of that name is still read by GET).
    router.post("/mutexes/acquire-all").handler(ctx -> {
      JsonObject body = HttpRequests.body(ctx);
      if (body != null) {
        acquiresAll.send(ctx, body, AcquireWaits.sendTimeoutMs(body, options));
      }
    });
    router.post("/mutexes/release-all").handler(ctx -> {
      JsonObject body = HttpRequests.body(ctx);
      if (body != null) {
        forward.to(ctx, address, MutexWire.RELEASE_ALL, body, 200);
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

  /** Answers every waiting acquirer 503 closed and takes it out of its queue; later acquires are refused. */
  Future<?> close() {
    return Future.join(acquires.close(), acquiresAll.close());
  }
}
