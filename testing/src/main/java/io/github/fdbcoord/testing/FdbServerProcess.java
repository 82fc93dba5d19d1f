package io.github.fdbcoord.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** One {@code fdbserver} process of a test server: its port, folders and the running process. */
final class FdbServerProcess {
  private static final long TERM_GRACE_SECONDS = 5;

  private final Path executable;
  private final Path clusterFile;
  private final int port;
  private final Path dataDir;
  private final Path logDir;
  private final String locality;
  private Process process;

  FdbServerProcess(Path executable, Path clusterFile, int port, Path folder, String locality) {
    this.executable = executable;
    this.clusterFile = clusterFile;
    this.port = port;
    this.dataDir = folder.resolve("data");
    this.logDir = folder.resolve("logs");
    this.locality = locality;
  }

  int port() {
    return port;
  }

  synchronized void start() {
    if (process != null && process.isAlive()) {
      throw new IllegalStateException("fdbserver on port " + port + " is already running");
    }
    try {
      Files.createDirectories(dataDir);
      Files.createDirectories(logDir);
      // Its own zone and machine, so that "double" places the two copies on two processes.
      ProcessBuilder pb = new ProcessBuilder(List.of(executable.toString(),
          "-p", "127.0.0.1:" + port, "-C", clusterFile.toString(), "-d", dataDir.toString(), "-L", logDir.toString(),
          "--locality-zoneid", locality, "--locality-machineid", locality))
          .redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(logDir.resolve("fdbserver.out").toFile()));
      process = pb.start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + executable + " on port " + port, e);
    }
  }

  synchronized boolean isAlive() {
    return process != null && process.isAlive();
  }

  /** SIGKILL, as a crash would: no chance to flush or leave the cluster cleanly. */
  synchronized void kill() {
    if (process != null) {
      process.destroyForcibly();
      waitQuietly(process, TERM_GRACE_SECONDS);
    }
  }

  /** SIGSTOP: the server stops answering without closing a connection, as a hung machine would. */
  synchronized void pause() {
    signal("STOP");
  }

  /** SIGCONT after {@link #pause()}. */
  synchronized void resume() {
    signal("CONT");
  }

  private void signal(String signal) {
    if (process == null || !process.isAlive()) {
      throw new IllegalStateException("fdbserver on port " + port + " is not running");
    }
    Signals.send(process.pid(), signal);
  }

  /** SIGTERM, then SIGKILL if it has not exited within a few seconds; a paused server is resumed first. */
  synchronized void stop() {
    if (process == null) {
      return;
    }
    if (process.isAlive()) {
      try {
        signal("CONT");
      } catch (IllegalStateException e) {
        // It exited meanwhile: nothing to resume.
      }
    }
    process.destroy();
    if (!waitQuietly(process, TERM_GRACE_SECONDS)) {
      process.destroyForcibly();
      waitQuietly(process, TERM_GRACE_SECONDS);
    }
  }

  private static boolean waitQuietly(Process p, long seconds) {
    try {
      return p.waitFor(seconds, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
