package io.github.fdbcoord.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs {@code fdbcli --exec} against one cluster file: how a test server is configured and
 * watched without fdb-java (which only the store may touch).
 */
public final class FdbCli {
  private final Path executable;
  private final Path clusterFile;

  FdbCli(Path executable, Path clusterFile) {
    this.executable = executable;
    this.clusterFile = clusterFile;
  }

  /**
   * What one {@code fdbcli} run printed and how it ended.
   *
   * @param exitCode fdbcli's exit code (non-zero when a command failed or timed out)
   * @param output stdout and stderr together
   */
  public record Result(int exitCode, String output) {
    /** Whether fdbcli exited with 0. */
    public boolean succeeded() {
      return exitCode == 0;
    }
  }

  /**
   * Runs {@code commands} (fdbcli's {@code --exec} syntax, e.g. {@code "writemode on; set k v"}),
   * giving fdbcli {@code timeout} for each command; the process is killed if it outlives that by 10 s.
   */
  public Result exec(String commands, Duration timeout) {
    long seconds = Math.max(1, timeout.toSeconds());
    ProcessBuilder pb = new ProcessBuilder(List.of(executable.toString(), "-C", clusterFile.toString(),
        "--exec", commands, "--timeout", String.valueOf(seconds))).redirectErrorStream(true);
    try {
      Process p = pb.start();
      // fdbcli prints little: reading to the end before waiting cannot block on a full pipe.
      byte[] out = p.getInputStream().readAllBytes();
      if (!p.waitFor(seconds + 10, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return new Result(-1, new String(out, StandardCharsets.UTF_8) + "\n(fdbcli did not exit)");
      }
      return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot run " + executable, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while running fdbcli " + commands, e);
    }
  }

  /** Whether {@code status minimal} says the database is available. */
  public boolean databaseAvailable() {
    return exec("status minimal", Duration.ofSeconds(10)).output().contains("The database is available");
  }
}
