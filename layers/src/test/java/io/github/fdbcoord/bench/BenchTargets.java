package io.github.fdbcoord.bench;

import com.apple.foundationdb.Database;
import io.github.fdbcoord.store.Store;
import io.github.fdbcoord.store.StoreOptions;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * The stores a layer benchmark runs on, in one run: the embedded engine (each benchmark's own
 * options, e.g. injected latency) and, when the system property {@value #CLUSTER_FILE_PROPERTY} names
 * a cluster file, the real FoundationDB it names, opened through {@link Store} (fdb-java needs
 * {@code libfdb_c.so}: {@code LD_LIBRARY_PATH} or {@code -DFDB_LIBRARY_PATH_FDB_C}). With
 * {@code -Dbench.engines=cluster} only the cluster runs.
 */
final class BenchTargets {
  /** The system property naming a FoundationDB cluster file to measure beside the embedded engine. */
  static final String CLUSTER_FILE_PROPERTY = "bench.clusterFile";

  /** A store to measure: its label in the results, and how to open it (closed by the caller). */
  record Target(String label, Supplier<AutoCloseable> opener) {
    /** Opens the store; the first element is the handle to close, the database is {@link #database}. */
    Opened open() {
      AutoCloseable handle = opener.get();
      Database db = handle instanceof Store s ? s.database() : (Database) handle;
      return new Opened(db, handle);
    }
  }

  /** An open store: the database to measure and what closes it. */
  record Opened(Database database, AutoCloseable handle) implements AutoCloseable {
    @Override
    public void close() throws Exception {
      handle.close();
    }
  }

  private BenchTargets() {}

  /** The embedded engine as {@code embedded} opens it (labelled {@code embeddedLabel}), then the cluster if one is named. */
  static List<Target> targets(String embeddedLabel, Supplier<? extends Database> embedded) {
    String engines = System.getProperty("bench.engines", "embedded,cluster");
    List<Target> out = new ArrayList<>();
    if (engines.contains("embedded")) {
      out.add(new Target(embeddedLabel, embedded::get));
    }
    Target cluster = cluster();
    if (cluster != null && engines.contains("cluster")) {
      out.add(cluster);
    }
    return out;
  }

  /** The cluster {@value #CLUSTER_FILE_PROPERTY} names, or null when the property is not set. */
  static Target cluster() {
    String clusterFile = System.getProperty(CLUSTER_FILE_PROPERTY);
    return clusterFile == null ? null : new Target("FoundationDB 7.3 (" + clusterFile + ")",
        () -> Store.open(StoreOptions.cluster(Path.of(clusterFile))));
  }
}
