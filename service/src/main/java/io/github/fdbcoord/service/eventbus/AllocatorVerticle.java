package io.github.fdbcoord.service.eventbus;

import io.github.fdbcoord.allocator.AllocatorService;
import io.github.fdbcoord.client.wire.AllocatorWire;

/**
 * The high-contention allocator on its address ({@code <prefix>.allocator}). Actions: allocate,
 * allocatePrefix.
 */
public final class AllocatorVerticle extends LayerVerticle {
  private final AllocatorService allocators;

  /** Serves {@code allocators} on {@code address}, running its calls on {@code workers}. */
  public AllocatorVerticle(String address, AllocatorService allocators, StoreWorkers workers, Metrics metrics) {
    super(address, workers, metrics);
    this.allocators = allocators;
  }

  /** Registers allocate and allocatePrefix. */
  @Override
  protected void registerActions() {
    action(AllocatorWire.ALLOCATE, body -> {
      String name = Requests.requiredString(body, "name");
      AllocatorService.validateName(name);
      return store(() -> allocators.allocate(name)).map(v -> AllocatorWire.value(name, v));
    });
    action(AllocatorWire.ALLOCATE_PREFIX, body -> {
      String name = Requests.requiredString(body, "name");
      AllocatorService.validateName(name);
      return store(() -> allocators.allocatePrefix(name))
          .map(p -> AllocatorWire.prefix(name, p));
    });
  }
}
