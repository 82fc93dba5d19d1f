package io.github.fdbcoord.service.http;

import io.github.fdbcoord.client.wire.SemaphoreWire;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;

import java.util.List;

/**
 * The semaphore routes, answered by the semaphore's event-bus actions. An acquire lives as long as its HTTP request,
 * as a mutex acquire does ({@link AcquireWaits}): when the client goes away before the answer, the owner is abandoned
 * (it leaves the queue at once); a permit granted after the client went away is released.
 */
final class SemaphoreRoutes {
  private final HttpOptions options;
  private final LayerForward forward;
  private final String address;
  private final AcquireWaits acquires;

  SemaphoreRoutes(Vertx vertx, HttpOptions options, LayerForward forward) {
    this.options = options;
    this.forward = forward;
    this.address = forward.client().semaphoreAddress();
    // Every successful acquire holds a permit: the semaphore has no queued answer.
    this.acquires = new AcquireWaits(vertx, forward.client(), new AcquireWaits.Kind(address, SemaphoreWire.ACQUIRE,
        SemaphoreWire.ABANDON, SemaphoreWire.RELEASE, "name", "owner", "token", reply -> true, "acquire"));
  }

  void mount(Router router) {
    router.get("/semaphores/:name").handler(ctx -> forward.to(ctx, address, SemaphoreWire.STATE,
        new JsonObject().put("name", ctx.pathParam("name")), 200));
    router.post("/semaphores/:name/acquire").handler(ctx -> {
      JsonObject body = HttpRequests.body(ctx);
      if (body == null) {
        return;
      }
      body.put("name", ctx.pathParam("name"));
      acquires.send(ctx, body, AcquireWaits.sendTimeoutMs(body, options));
    });
    for (String action : List.of(SemaphoreWire.RELEASE, SemaphoreWire.HEARTBEAT)) {
      router.post("/semaphores/:name/" + action).handler(ctx -> {
        JsonObject body = HttpRequests.body(ctx);
        if (body != null) {
          forward.to(ctx, address, action, body.put("name", ctx.pathParam("name")), 200);
        }
      });
    }
  }

  /** Answers every waiting acquirer 503 closed and takes it out of its queue; later acquires are refused. */
  Future<?> close() {
    return acquires.close();
  }
}
