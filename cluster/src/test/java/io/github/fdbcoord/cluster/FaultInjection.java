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
    io.vertx.core.spi.cluster.NodeInfo bus = manager.crashClosesEventBus() ? manager.getNodeInfo() : null;
    try {
      manager.simulateCrash().get(10, java.util.concurrent.TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new AssertionError("the simulated crash did not close the node's sockets", e);
    }
    if (bus != null && bus.port() > 0) {
      awaitRefused(bus.host(), bus.port());
    }
  }

  /**
   * Waits until {@code host:port} refuses connections. The event bus's close completes before a loaded machine has
   * always unbound its server, which then still accepted a sender's reconnect for a moment (a dead process's port
   * refuses at once): CrashedNodeSendersTest saw two requests written to it wait out their send timeout.
   */
  private static void awaitRefused(String host, int port) {
    long end = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < end) {
      try (java.net.Socket s = new java.net.Socket()) {
        s.connect(new java.net.InetSocketAddress(host == null ? "localhost" : host, port), 1000);
      } catch (java.net.ConnectException refused) {
        return;
      } catch (java.io.IOException other) {
        // a timeout or a reset: try again
      }
      Thread.onSpinWait();
    }
    throw new AssertionError("the crashed node's event-bus port " + host + ":" + port + " still accepts 10 s later");
  }

  /** Stalls {@code manager}'s timer for {@code pause}, as a stopped process (see {@link FdbClusterManager#simulatePause}). */
  public static void pause(FdbClusterManager manager, Duration pause) {
    manager.simulatePause(pause);
  }
}
