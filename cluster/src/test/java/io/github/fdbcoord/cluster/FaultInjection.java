package io.github.fdbcoord.cluster;

import java.time.Duration;

/**
 * Test-only access to the fault injection of {@link FdbClusterManager} (package-private there, so
 * it is no part of the manager's API): benchmarks in other packages crash and pause nodes through it.
 */
public final class FaultInjection {
  private FaultInjection() {}

  /**
   * Stops {@code manager} as a process crash would (see {@link FdbClusterManager#simulateCrash()}), and
   * returns once its sockets are closed, as a dead process's are the moment it dies.
   */
  public static void crash(FdbClusterManager manager) {
    try {
      manager.simulateCrash().get(10, java.util.concurrent.TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new AssertionError("the simulated crash did not close the node's sockets", e);
    }
  }

  /** Stalls {@code manager}'s timer for {@code pause}, as a stopped process (see {@link FdbClusterManager#simulatePause}). */
  public static void pause(FdbClusterManager manager, Duration pause) {
    manager.simulatePause(pause);
  }
}
