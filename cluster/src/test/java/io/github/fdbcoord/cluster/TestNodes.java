package io.github.fdbcoord.cluster;

import com.apple.foundationdb.Database;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/** Cluster-manager nodes on one Vert.x and one store, as the manager's own tests start them. */
public final class TestNodes {
  private TestNodes() {}

  /** Options with {@code lease} and short intervals, on {@code db}. */
  static FdbClusterManagerOptions.Builder options(Database db, Duration lease) {
    return FdbClusterManagerOptions.builder().database(db)
        .nodeLease(lease)
        .heartbeatInterval(Duration.ofMillis(200))
        .reaperInterval(Duration.ofMillis(100))
        .logRetention(Duration.ofSeconds(10));
  }

  /** A manager with {@code options}, initialised on {@code vertx} and joined (10 s at most). */
  static FdbClusterManager join(Vertx vertx, FdbClusterManagerOptions.Builder options) throws Exception {
    FdbClusterManager m = new FdbClusterManager(options.build());
    m.init(vertx);
    Promise<Void> p = Promise.promise();
    m.join(p);
    p.future().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    return m;
  }

  /** Polls {@code condition} until it holds; fails naming {@code what} after {@code within}. */
  public static void waitUntil(String what, BooleanSupplier condition, Duration within) throws InterruptedException {
    long end = System.nanoTime() + within.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > end) {
        throw new AssertionError("not within " + within + ": " + what);
      }
      Thread.sleep(5);
    }
  }
}
