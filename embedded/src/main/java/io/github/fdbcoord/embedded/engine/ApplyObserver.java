package io.github.fdbcoord.embedded.engine;

/**
 * Test seam of one engine ({@link EngineConfig#applyObserver()}): crash tests halt the process at an
 * applier step, back-pressure tests stall the applier there. Called on the applier thread only, once per
 * batch and per eviction chunk.
 */
@FunctionalInterface
public interface ApplyObserver {
  /**
   * The applier reached {@code step} for the batch through {@code version}; {@code more}: WRITTEN,
   * another batch follows in this round (the round was split); EVICTED, more chunks follow.
   */
  void reached(ApplyStep step, long version, boolean more);
}
