package io.github.fdbcoord.testing;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code fdbserver} and {@code fdbcli} executables a test server is started from, and where
 * they were found ({@link #origin()}, for messages).
 *
 * @param server the fdbserver executable
 * @param cli the fdbcli executable
 * @param origin how they were found, e.g. "FDB_SERVER_BIN" or "the installed FoundationDB"
 */
public record FdbBinaries(Path server, Path cli, String origin) {
  /** Environment variable naming an fdbserver executable. */
  public static final String SERVER_ENV = "FDB_SERVER_BIN";
  /** Environment variable naming an fdbcli executable (default: {@code fdbcli} next to the server). */
  public static final String CLI_ENV = "FDB_CLI_BIN";
  /** System property naming the Maven project root (set by surefire); the binaries are in {@code ../shared/fdb} from there. */
  public static final String ROOT_PROPERTY = "fdbcoord.root";
  private static final Path INSTALLED_SERVER = Path.of("/usr/sbin/fdbserver");
  private static final Path INSTALLED_CLI = Path.of("/usr/bin/fdbcli");

  /**
   * The first usable pair, in order: {@code FDB_SERVER_BIN} (+ {@code FDB_CLI_BIN}),
   * {@code ../shared/fdb/bin} from the project root, the installed FoundationDB. Null when none is.
   */
  public static FdbBinaries find() {
    for (FdbBinaries candidate : candidates()) {
      if (Files.isExecutable(candidate.server) && Files.isExecutable(candidate.cli)) {
        return candidate;
      }
    }
    return null;
  }

  /** Where {@link #find()} looked, for the message of a skipped test. */
  public static String searched() {
    List<String> out = new ArrayList<>();
    candidates().forEach(c -> out.add(c.origin + " (" + c.server + ")"));
    return String.join(", ", out);
  }

  /**
   * The {@code shared/fdb} folder beside the project root (on CI, read-only), or null when no project
   * root is known. The root comes from surefire's {@value #ROOT_PROPERTY}, or else the first
   * ancestor of the working directory holding a {@code ../shared/fdb} (a run from an IDE).
   */
  static Path sharedFolder() {
    String root = System.getProperty(ROOT_PROPERTY);
    if (root != null && !root.isBlank()) {
      return Path.of(root).toAbsolutePath().normalize().resolveSibling("shared").resolve("fdb");
    }
    for (Path dir = Path.of("").toAbsolutePath(); dir != null && dir.getParent() != null; dir = dir.getParent()) {
      Path shared = dir.resolveSibling("shared").resolve("fdb");
      if (Files.isDirectory(shared.resolve("bin"))) {
        return shared;
      }
    }
    return null;
  }

  private static List<FdbBinaries> candidates() {
    List<FdbBinaries> out = new ArrayList<>();
    String server = System.getenv(SERVER_ENV);
    if (server != null && !server.isBlank()) {
      String cli = System.getenv(CLI_ENV);
      Path serverPath = Path.of(server);
      Path cliPath = cli == null || cli.isBlank() ? serverPath.resolveSibling("fdbcli") : Path.of(cli);
      out.add(new FdbBinaries(serverPath, cliPath, SERVER_ENV));
    }
    Path shared = sharedFolder();
    if (shared != null) {
      out.add(new FdbBinaries(shared.resolve("bin/fdbserver"), shared.resolve("bin/fdbcli"), shared.toString()));
    }
    out.add(new FdbBinaries(INSTALLED_SERVER, INSTALLED_CLI, "the installed FoundationDB"));
    return out;
  }
}
