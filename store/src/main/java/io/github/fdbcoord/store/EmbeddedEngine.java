package io.github.fdbcoord.store;

import com.apple.foundationdb.Database;

import java.util.concurrent.Executor;

/**
 * The embedded engine as the store opens it. Implemented by the optional artifact
 * {@value #ARTIFACT} and found through {@link java.util.ServiceLoader}, so that the store (and the
 * layers and cluster manager above it) never depend on the engine or RocksDB.
 */
public interface EmbeddedEngine {
  /** The Maven coordinates of the artifact that provides the embedded engine. */
  String ARTIFACT = "io.github.fdbcoord:vertx-fdb-coordination-embedded";

  /**
   * Opens an embedded database for {@code options} (engine {@link StoreOptions.Engine#EMBEDDED}),
   * with {@code executor} as its transactions' default executor, or the engine's own when null.
   */
  Database open(StoreOptions options, Executor executor);
}
