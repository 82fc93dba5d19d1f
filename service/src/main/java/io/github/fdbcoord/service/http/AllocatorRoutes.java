package io.github.fdbcoord.service.http;

import io.github.fdbcoord.client.wire.AllocatorWire;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;

/** The allocator routes: {@code POST /allocators/:name/allocate} and {@code .../allocate-prefix}. */
final class AllocatorRoutes {
  private final LayerForward forward;
  private final String address;

  AllocatorRoutes(LayerForward forward) {
    this.forward = forward;
    this.address = forward.client().allocatorAddress();
  }

  void mount(Router router) {
    router.post("/allocators/:name/allocate").handler(ctx -> forward.to(ctx, address, AllocatorWire.ALLOCATE,
        new JsonObject().put("name", ctx.pathParam("name")), 200));
    router.post("/allocators/:name/allocate-prefix").handler(ctx -> forward.to(ctx, address,
        AllocatorWire.ALLOCATE_PREFIX, new JsonObject().put("name", ctx.pathParam("name")), 200));
  }
}
