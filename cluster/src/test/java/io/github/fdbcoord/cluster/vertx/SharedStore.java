package io.github.fdbcoord.cluster.vertx;

import io.github.fdbcoord.cluster.FdbClusterManager;
import io.github.fdbcoord.cluster.FdbClusterManagerOptions;
import io.github.fdbcoord.embedded.EmbeddedDatabase;

import java.time.Duration;

/**
 * One embedded in-memory database shared by every node of one test (what a FoundationDB cluster
 * is to nodes in separate JVMs), and a manager per node on it.
 */
final class SharedStore implements AutoCloseable {
  /** Short enough for the suites' timeouts, long enough not to evict a node of a loaded 2-core machine. */
  static final Duration LEASE = Duration.ofSeconds(5);

  private final EmbeddedDatabase db = EmbeddedDatabase.inMemory();

  FdbClusterManager newManager() {
    return new FdbClusterManager(FdbClusterManagerOptions.builder()
        .database(db)
        .nodeLease(LEASE)
        .heartbeatInterval(Duration.ofMillis(500))
        .reaperInterval(Duration.ofMillis(250))
        .logRetention(Duration.ofSeconds(30))
        .build());
  }

  EmbeddedDatabase database() {
    return db;
  }

  @Override
  public void close() {
    db.close();
  }
}
