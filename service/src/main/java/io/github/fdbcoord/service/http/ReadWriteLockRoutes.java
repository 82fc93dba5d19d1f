package io.github.fdbcoord.service.http;

import io.github.fdbcoord.client.wire.ReadWriteLockWire;
import io.github.fdbcoord.service.eventbus.Requests;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

import java.util.List;

import static io.github.fdbcoord.service.http.HttpResponses.abbreviate;
import static io.github.fdbcoord.service.http.HttpResponses.error;

/**
 * The read-write lock routes, answered by its event-bus actions. An acquire lives as long as its HTTP request, as a
 * mutex acquire does ({@link AcquireWaits}): when the client goes away before the answer, the waiter is abandoned (it
 * leaves the queue at once); a grant that arrives after the client went away is released. The mode may come as the
 * query parameter {@code mode} or in the body.
 */
final class ReadWriteLockRoutes {
  private final HttpOptions options;
  private final LayerForward forward;
  private final String address;
  private final AcquireWaits acquires;

  ReadWriteLockRoutes(Vertx vertx, HttpOptions options, LayerForward forward) {
    this.options = options;
    this.forward = forward;
    this.address = forward.client().readWriteLockAddress();
    // Every successful acquire holds the lock; the release reads the grant's mode from the lock's holders.
    this.acquires = new AcquireWaits(vertx, forward.client(), new AcquireWaits.Kind(address, ReadWriteLockWire.ACQUIRE,
        ReadWriteLockWire.ABANDON, ReadWriteLockWire.RELEASE, "name", "owner", "token", reply -> true, "acquire"));
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
      acquires.send(ctx, body, AcquireWaits.sendTimeoutMs(body, options));
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

  /** Answers every waiting acquirer 503 closed and takes it out of its queue; later acquires are refused. */
  Future<?> close() {
    return acquires.close();
  }
}
