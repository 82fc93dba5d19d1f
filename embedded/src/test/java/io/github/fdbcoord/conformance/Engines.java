package io.github.fdbcoord.conformance;

import com.apple.foundationdb.Database;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.embedded.EmbeddedOptions;
import io.github.fdbcoord.store.Store;
import io.github.fdbcoord.store.StoreOptions;
import org.junit.jupiter.api.Assumptions;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Opens the databases the conformance suite runs against: the embedded engine always, a real
 * FoundationDB cluster when one is reachable: the one FDB_CLUSTER_FILE names, or else one started
 * in Docker through Testcontainers ({@link FdbContainer}).
 */
final class Engines {
  static final String EMBEDDED = "embedded";
  static final String FDB = "fdb";
  static final String CLUSTER_FILE_ENV = "FDB_CLUSTER_FILE";
  static final String NO_CLUSTER = "no FoundationDB cluster: FDB_CLUSTER_FILE is not set, and ";
  /** The Testcontainers route's answer, asked once per JVM (Docker's probe takes a while). */
  private static String containerReason;

  private Engines() {}

  /** A new embedded database with these options. */
  static Database openEmbedded(EmbeddedOptions options) {
    return EmbeddedDatabase.open(options);
  }

  /** Whether a real cluster can be reached, and if not, why. Null means reachable. */
  static String clusterUnavailableReason() {
    String file = System.getenv(CLUSTER_FILE_ENV);
    if (file == null || file.isBlank()) {
      String reason = containerReason();
      return reason.isEmpty() ? null : NO_CLUSTER + reason;
    }
    if (!Files.isReadable(Path.of(file))) {
      return CLUSTER_FILE_ENV + "=" + file + " is not a readable file";
    }
    return null;
  }

  /**
   * Opens the real cluster named by FDB_CLUSTER_FILE through the store, the only code allowed to
   * touch the FDB class. A missing native client is reported as the test's error
   * (StoreUnavailableException), not skipped: whoever set FDB_CLUSTER_FILE wants that run.
   */
  static Database openCluster() {
    String reason = clusterUnavailableReason();
    if (reason != null) {
      Assumptions.abort(reason);
    }
    String file = System.getenv(CLUSTER_FILE_ENV);
    Path clusterFile = file == null || file.isBlank() ? FdbContainer.clusterFile() : Path.of(file);
    return Store.open(StoreOptions.cluster(clusterFile)).database();
  }

  private static synchronized String containerReason() {
    if (containerReason == null) {
      String reason = FdbContainer.unavailableReason();
      containerReason = reason == null ? "" : reason;
    }
    return containerReason;
  }
}
