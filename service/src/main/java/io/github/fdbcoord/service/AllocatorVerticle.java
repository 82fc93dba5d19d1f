package io.github.fdbcoord.service;

import io.github.fdbcoord.allocator.AllocatorService;
import io.vertx.core.json.JsonObject;

import java.util.HexFormat;

/**
 * The high-contention allocator on its address ({@code <prefix>.allocator}). Actions: allocate,
 * allocatePrefix.
 */
public final class AllocatorVerticle extends LayerVerticle {
  private final AllocatorService allocators;

  public AllocatorVerticle(String address, AllocatorService allocators, StoreWorkers workers, Metrics metrics) {
    super(address, workers, metrics);
    this.allocators = allocators;
  }

  @Override
  protected void registerActions() {
    action("allocate", body -> {
      String name = Requests.requiredString(body, "name");
      AllocatorService.validateName(name);
      return store(() -> allocators.allocate(name)).map(v -> new JsonObject().put("name", name).put("value", v));
    });
    action("allocatePrefix", body -> {
      String name = Requests.requiredString(body, "name");
      AllocatorService.validateName(name);
      return store(() -> allocators.allocatePrefix(name))
          .map(p -> new JsonObject().put("name", name).put("prefix", HexFormat.of().formatHex(p)));
    });
  }
}
