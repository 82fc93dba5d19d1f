package io.github.fdbcoord.service.http;

import io.github.fdbcoord.client.wire.InternerWire;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;

import java.util.List;

/** The interner routes: namespaces under {@code /interners}, batches posted to {@code /interners/:ns/<action>}. */
final class InternerRoutes {
  private final LayerForward forward;
  private final String address;

  InternerRoutes(LayerForward forward) {
    this.forward = forward;
    this.address = forward.client().internerAddress();
  }

  void mount(Router router) {
    router.get("/interners").handler(ctx -> forward.to(ctx, address, InternerWire.LIST_NAMESPACES,
        new JsonObject(), 200));
    for (String action : List.of(InternerWire.INTERN, InternerWire.LOOKUP, InternerWire.RESOLVE)) {
      router.post("/interners/:ns/" + action).handler(ctx -> {
        JsonObject body = HttpRequests.body(ctx);
        if (body != null) {
          forward.to(ctx, address, action, body.put("namespace", ctx.pathParam("ns")), 200);
        }
      });
    }
    router.delete("/interners/:ns").handler(ctx -> forward.to(ctx, address, InternerWire.REMOVE_NAMESPACE,
        new JsonObject().put("namespace", ctx.pathParam("ns")), 200));
  }
}
