package io.github.fdbcoord.store;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.FDB;

import java.util.Iterator;
import java.util.ServiceLoader;
import java.util.concurrent.Executor;

/**
 * An open FoundationDB database, real or embedded. The only place that touches the {@link FDB}
 * class, whose first use loads the native client library (design.md, "Pitfall").
 */
public final class Store implements AutoCloseable {
  /** The API version of fdb-java 7.3. */
  public static final int API_VERSION = 730;

  private final StoreOptions options;
  private final Database database;

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
      FDB fdb = FDB.selectAPIVersion(API_VERSION);
      String file = options.clusterFile() == null ? null : options.clusterFile().toString();
      return executor == null ? fdb.open(file) : fdb.open(file, executor);
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

  @Override
  public void close() {
    database.close();
  }
}
