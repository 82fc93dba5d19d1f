package io.github.fdbcoord.conformance;

import com.apple.foundationdb.Database;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.embedded.EmbeddedOptions;
import io.github.fdbcoord.store.Store;
import io.github.fdbcoord.store.StoreOptions;
import io.github.fdbcoord.testing.SharedFdb;
import org.junit.jupiter.api.Assumptions;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * Opens the databases the conformance suite runs against: the embedded engine always, a real
 * FoundationDB when the test JVM has one ({@link SharedFdb}: an external cluster file, an fdbserver
 * it starts, or Docker).
 */
final class Engines {
  static final String EMBEDDED = "embedded";
  static final String FDB = "fdb";

  /** The store of each real-cluster database opened here (identity: databases do not override equals). */
  private static final Map<Database, Store> CLUSTER_STORES = Collections.synchronizedMap(new IdentityHashMap<>());

  private Engines() {}

  /** A new embedded database with these options. */
  static Database openEmbedded(EmbeddedOptions options) {
    return EmbeddedDatabase.open(options);
  }

  /** Whether a real cluster can be reached, and if not, why. Null means reachable. */
  static String clusterUnavailableReason() {
    return SharedFdb.unavailableReason();
  }

  /**
   * Opens the shared real cluster through the store, the only code allowed to touch the FDB class;
   * {@link #close} closes it.
   */
  static Database openCluster() {
    String reason = clusterUnavailableReason();
    if (reason != null) {
      Assumptions.abort(reason);
    }
    Store store = Store.open(StoreOptions.cluster(SharedFdb.clusterFile()));
    CLUSTER_STORES.put(store.database(), store);
    return store.database();
  }

  /**
   * Closes a database opened here, with its store for a real cluster: a store left open keeps the
   * FoundationDB network running when the test JVM exits, until the store's grace ends.
   */
  static void close(Database db) {
    Store store = CLUSTER_STORES.remove(db);
    if (store != null) {
      store.close();
    } else {
      db.close();
    }
  }
}
