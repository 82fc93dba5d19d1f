package io.github.fdbcoord.cluster;

import io.github.fdbcoord.cluster.impl.StoreProbe;

/** The counter transactions a node has run, for the benchmarks (outside this package). */
public final class CounterProbe {
  private CounterProbe() {}

  /** The counter transactions {@code manager}'s node has committed and attempted so far. */
  public static long[] commitsAndAttempts(FdbClusterManager manager) {
    return StoreProbe.counterCommitsAndAttempts(manager.store());
  }
}
