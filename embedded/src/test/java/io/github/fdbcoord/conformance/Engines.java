package io.github.fdbcoord.conformance;

import com.apple.foundationdb.Database;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.embedded.EmbeddedOptions;
import io.github.fdbcoord.store.Store;
import io.github.fdbcoord.store.StoreOptions;
import io.github.fdbcoord.testing.SharedFdb;
import org.junit.jupiter.api.Assumptions;

/**
 * Opens the databases the conformance suite runs against: the embedded engine always, a real
 * FoundationDB when the test JVM has one ({@link SharedFdb}: an external cluster file, an fdbserver
 * it starts, or Docker).
 */
final class Engines {
  static final String EMBEDDED = "embedded";
  static final String FDB = "fdb";

  private Engines() {}

  /** A new embedded database with these options. */
  static Database openEmbedded(EmbeddedOptions options) {
    return EmbeddedDatabase.open(options);
  }

  /** Whether a real cluster can be reached, and if not, why. Null means reachable. */
  static String clusterUnavailableReason() {
    return SharedFdb.unavailableReason();
  }

  /** Opens the shared real cluster through the store, the only code allowed to touch the FDB class. */
  static Database openCluster() {
    String reason = clusterUnavailableReason();
    if (reason != null) {
      Assumptions.abort(reason);
    }
    return Store.open(StoreOptions.cluster(SharedFdb.clusterFile())).database();
  }
}
