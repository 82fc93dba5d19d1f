package io.github.fdbcoord.store;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.FDB;

import java.util.Iterator;
import java.util.ServiceLoader;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * An open FoundationDB database, real or embedded. The only place that touches the {@link FDB}
 * class, whose first use loads the native client library (design.md, "Pitfall").
 *
 * <p>A real cluster's stores share the process's FoundationDB network, which this class owns: when
 * the JVM exits, the network stops once the last open real-cluster store is closed, not before
 * (fdb-java's own shutdown hook, which stopped it while Vert.x was still closing, is disabled).
 * Close a store after what uses it (Vert.x, a cluster manager) has closed.
 */
public final class Store implements AutoCloseable {
  /** The API version of fdb-java 7.3. */
  public static final int API_VERSION = 730;

  /** fdb-java's network is one per process and cannot restart: its state cannot live in an instance. */
  private static final FdbNetwork NETWORK = new FdbNetwork();

  private final StoreOptions options;
  private final Database database;
  private final AtomicBoolean closed = new AtomicBoolean();

  private Store(StoreOptions options, Database database) {
    this.options = options;
    this.database = database;
  }

  /** Opens the store; transactions use the engine's default executor. */
  public static Store open(StoreOptions options) {
    return open(options, null);
  }

  /**
   * Opens the store with {@code executor} as the default executor of its transactions (where
   * fdb-java runs completions), or the engine's own when null.
   *
   * @throws StoreUnavailableException when the engine cannot be opened (for a real cluster: the
   *     native client library is missing or the cluster file is unusable)
   */
  public static Store open(StoreOptions options, Executor executor) {
    switch (options.engine()) {
      case CLUSTER:
        return new Store(options, openCluster(options, executor));
      default:
        EmbeddedEngine engine = embeddedEngine();
        try {
          return new Store(options, engine.open(options, executor));
        } catch (RuntimeException e) {
          throw new StoreUnavailableException("cannot open the embedded engine " + options + ": " + e.getMessage(), e);
        }
    }
  }

  /**
   * The embedded engine, found through {@link ServiceLoader} so that this module does not depend on
   * it: a real-cluster user never pulls RocksDB.
   */
  private static EmbeddedEngine embeddedEngine() {
    Iterator<EmbeddedEngine> engines = ServiceLoader.load(EmbeddedEngine.class, Store.class.getClassLoader()).iterator();
    if (!engines.hasNext()) {
      throw new StoreUnavailableException("the embedded engine is not on the class path: add the dependency "
          + EmbeddedEngine.ARTIFACT + ", or open a real cluster with StoreOptions.cluster(clusterFile)", null);
    }
    return engines.next();
  }

  private static Database openCluster(StoreOptions options, Executor executor) {
    try {
      String file = options.clusterFile() == null ? null : options.clusterFile().toString();
      return NETWORK.open(file, executor);
    } catch (StoreUnavailableException e) {
      throw e;
    } catch (UnsatisfiedLinkError | RuntimeException e) {
      throw new StoreUnavailableException("cannot open FoundationDB " + options
          + " (is the native client libfdb_c installed?): " + e.getMessage(), e);
    }
  }

  public Database database() {
    return database;
  }

  public StoreOptions options() {
    return options;
  }

  /**
   * Closes the database; a second close does nothing. When the JVM is exiting and this was the last
   * open real-cluster store, also stops the FoundationDB network (waiting a few seconds at most).
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    database.close();
    if (options.engine() == StoreOptions.Engine.CLUSTER) {
      NETWORK.closed();
    }
  }
}
