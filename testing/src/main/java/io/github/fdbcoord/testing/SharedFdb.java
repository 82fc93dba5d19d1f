package io.github.fdbcoord.testing;

import org.junit.jupiter.api.Assumptions;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The real FoundationDB every test of this JVM shares, found once, lazily, in order:
 * <ol>
 *   <li>{@code FDB_CLUSTER_FILE}: an external cluster; nothing is started;</li>
 *   <li>{@code FDB_SERVER_BIN} (+ {@code FDB_CLI_BIN}), {@code ../shared/fdb} from the project root,
 *       or an installed FoundationDB: one {@code fdbserver} is started ({@link FdbTestServer}, memory
 *       engine) and stopped when the JVM exits;</li>
 *   <li>Testcontainers, where Docker runs ({@link FdbContainer}).</li>
 * </ol>
 * Every route also needs the native client ({@link NativeClient}). Where none works, the tests
 * that need a server skip with {@link #unavailableReason()}; each test isolates itself in a key
 * prefix or directory of its own, since the database is shared.
 */
public final class SharedFdb {
  /** Environment variable naming the cluster file of an external cluster. */
  public static final String CLUSTER_FILE_ENV = "FDB_CLUSTER_FILE";

  private static boolean resolved;
  private static Path clusterFile;
  private static String unavailableReason;
  private static RuntimeException startFailure;
  private static String description;

  private SharedFdb() {}

  /**
   * Null when a server is reachable (starting it on the first call), else why not: the message a
   * skipped test shows. A server that was found but failed to start is not a reason to skip:
   * {@link #clusterFile()} then throws its error.
   */
  public static synchronized String unavailableReason() {
    resolve();
    return unavailableReason;
  }

  /**
   * The shared server's cluster file, starting the server on the first call.
   *
   * @throws IllegalStateException when there is none ({@link #unavailableReason()} says why) or it failed to start
   */
  public static synchronized Path clusterFile() {
    resolve();
    if (startFailure != null) {
      throw startFailure;
    }
    if (clusterFile == null) {
      throw new IllegalStateException(unavailableReason);
    }
    return clusterFile;
  }

  /** For JUnit 5 tests: the cluster file, or the test is aborted (skipped) with the reason. */
  public static Path clusterFileOrAbort() {
    String reason = unavailableReason();
    if (reason != null) {
      Assumptions.abort(reason);
    }
    return clusterFile();
  }

  /** Which route supplied the server, e.g. "fdbserver from /work/shared/fdb", or the reason there is none. */
  public static synchronized String description() {
    resolve();
    return description != null ? description : unavailableReason;
  }

  private static void resolve() {
    if (resolved) {
      return;
    }
    resolved = true;
    String nativeReason = NativeClient.unloadableReason();
    if (nativeReason != null) {
      unavailableReason = "no real FoundationDB for this test: " + nativeReason;
      return;
    }
    String external = System.getenv(CLUSTER_FILE_ENV);
    if (external != null && !external.isBlank()) {
      if (!Files.isReadable(Path.of(external))) {
        unavailableReason = CLUSTER_FILE_ENV + "=" + external + " is not a readable file";
        return;
      }
      clusterFile = Path.of(external);
      description = "the external cluster " + external;
      return;
    }
    FdbBinaries binaries = FdbBinaries.find();
    if (binaries != null) {
      try {
        clusterFile = FdbTestServer.startSingle(binaries, StorageEngine.MEMORY).clusterFile();
        description = "fdbserver from " + binaries.origin();
      } catch (RuntimeException e) {
        startFailure = e;
      }
      return;
    }
    String dockerReason = FdbContainer.unavailableReason();
    if (dockerReason != null) {
      unavailableReason = "no real FoundationDB for this test: " + CLUSTER_FILE_ENV + " is not set, no fdbserver"
          + " was found (looked at " + FdbBinaries.searched() + ", or set " + FdbBinaries.SERVER_ENV + "), and "
          + dockerReason;
      return;
    }
    try {
      clusterFile = FdbContainer.clusterFile();
      description = "Testcontainers, " + FdbContainer.IMAGE;
    } catch (RuntimeException e) {
      startFailure = e;
    }
  }
}
