package io.github.fdbcoord.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;

/**
 * A FoundationDB started for tests, like Curator's {@code TestingServer} for ZooKeeper: one
 * {@code fdbserver} process ({@link #startSingle}) or three ({@link #startTriple}, for fault
 * tests) on free loopback ports, with their own cluster file, data and log folders in a temporary
 * folder. {@link #close()} (or, if nobody calls it, a shutdown hook) stops the processes
 * (SIGTERM, then SIGKILL) and removes the folder.
 *
 * <p>Most tests do not start one themselves: {@link SharedFdb} starts one per test JVM and every
 * test isolates itself in a key prefix or directory of its own.
 */
public final class FdbTestServer implements AutoCloseable {
  private static final Duration CONFIGURE_TIMEOUT = Duration.ofSeconds(30);
  private static final Duration AVAILABLE_TIMEOUT = Duration.ofSeconds(90);

  private final FdbBinaries binaries;
  private final Path folder;
  private final Path clusterFile;
  private final List<FdbServerProcess> processes;
  private final FdbCli cli;
  private final Thread shutdownHook;
  private boolean closed;

  private FdbTestServer(FdbBinaries binaries, Path folder, Path clusterFile, List<FdbServerProcess> processes) {
    this.binaries = binaries;
    this.folder = folder;
    this.clusterFile = clusterFile;
    this.processes = processes;
    this.cli = new FdbCli(binaries.cli(), clusterFile);
    this.shutdownHook = new Thread(this::stopAndDelete, "fdb-test-server-shutdown");
  }

  /** One process, a new database in {@code single} redundancy on {@code engine}; returns once it is available. */
  public static FdbTestServer startSingle(FdbBinaries binaries, StorageEngine engine) {
    return start(binaries, 1, "single", engine);
  }

  /**
   * Three processes, each a coordinator, a new database in {@code double} redundancy on the memory
   * engine: one process can be killed ({@link #killProcess}) and the database stays available.
   */
  public static FdbTestServer startTriple(FdbBinaries binaries) {
    return start(binaries, 3, "double", StorageEngine.MEMORY);
  }

  private static FdbTestServer start(FdbBinaries binaries, int count, String redundancy, StorageEngine engine) {
    FdbTestServer server = create(binaries, count);
    Runtime.getRuntime().addShutdownHook(server.shutdownHook);
    try {
      server.processes.forEach(FdbServerProcess::start);
      server.configure("configure new " + redundancy + " " + engine.configureName());
      server.awaitAvailable(AVAILABLE_TIMEOUT);
      return server;
    } catch (RuntimeException e) {
      server.close();
      throw new IllegalStateException("could not start FoundationDB (" + count + " fdbserver from "
          + binaries.origin() + ") in " + server.folder + ": " + e.getMessage(), e);
    }
  }

  private static FdbTestServer create(FdbBinaries binaries, int count) {
    try {
      Path folder = Files.createTempDirectory("fdb-test-server-");
      List<Integer> ports = freePorts(count);
      List<String> addresses = ports.stream().map(p -> "127.0.0.1:" + p).toList();
      Path clusterFile = folder.resolve("fdb.cluster");
      byte[] id = new byte[8];
      new SecureRandom().nextBytes(id);
      Files.writeString(clusterFile, "test:" + HexFormat.of().formatHex(id) + "@" + String.join(",", addresses) + "\n");
      List<FdbServerProcess> processes = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        processes.add(new FdbServerProcess(binaries.server(), clusterFile, ports.get(i),
            folder.resolve("process-" + i), "p" + i));
      }
      return new FdbTestServer(binaries, folder, clusterFile, processes);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot prepare a FoundationDB test server's folder", e);
    }
  }

  /** Ports free now; held open together so that the same port is not handed out twice. */
  private static List<Integer> freePorts(int count) throws IOException {
    List<ServerSocket> sockets = new ArrayList<>();
    try {
      for (int i = 0; i < count; i++) {
        sockets.add(new ServerSocket(0, 1, InetAddress.getLoopbackAddress()));
      }
      return sockets.stream().map(ServerSocket::getLocalPort).toList();
    } finally {
      for (ServerSocket s : sockets) {
        s.close();
      }
    }
  }

  /** Retried: the first fdbcli may connect before the processes have elected a cluster controller. */
  private void configure(String command) {
    long deadline = System.nanoTime() + AVAILABLE_TIMEOUT.toNanos();
    FdbCli.Result last;
    do {
      last = cli.exec(command, CONFIGURE_TIMEOUT);
      if (last.succeeded() || last.output().contains("Database already exists")) {
        return;
      }
      requireProcessesAlive(last.output());
    } while (System.nanoTime() < deadline);
    throw new IllegalStateException("fdbcli " + command + " failed: " + last.output().trim());
  }

  /** Waits until {@code status minimal} says the database is available. */
  public void awaitAvailable(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!cli.databaseAvailable()) {
      requireProcessesAlive("waiting for the database to become available");
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the database is not available after " + timeout.toSeconds() + " s: "
            + cli.exec("status minimal", Duration.ofSeconds(10)).output().trim());
      }
      sleep(Duration.ofMillis(250));
    }
  }

  private void requireProcessesAlive(String context) {
    if (processes.stream().noneMatch(FdbServerProcess::isAlive)) {
      throw new IllegalStateException("every fdbserver process exited (see " + folder + "/process-*/logs) " + context);
    }
  }

  /** The cluster file naming this server's processes; clients open the database with it. */
  public Path clusterFile() {
    return clusterFile;
  }

  /** fdbcli for this server (configuration, status, reads and writes without fdb-java). */
  public FdbCli cli() {
    return cli;
  }

  /** The executables this server runs. */
  public FdbBinaries binaries() {
    return binaries;
  }

  /** How many fdbserver processes this server has (1 or 3). */
  public int processCount() {
    return processes.size();
  }

  /** Kills process {@code index} (0-based) with SIGKILL, as a crash would. */
  public void killProcess(int index) {
    processes.get(index).kill();
  }

  /** Starts process {@code index} again with the same port and folders (after {@link #killProcess}). */
  public void restartProcess(int index) {
    processes.get(index).start();
  }

  /**
   * Stops process {@code index} with SIGSTOP: it keeps its connections but answers nothing, as a
   * hung machine would, until {@link #resumeProcess}.
   */
  public void pauseProcess(int index) {
    processes.get(index).pause();
  }

  /** SIGCONT for process {@code index} after {@link #pauseProcess}. */
  public void resumeProcess(int index) {
    processes.get(index).resume();
  }

  /** Whether process {@code index} is running. */
  public boolean isProcessAlive(int index) {
    return processes.get(index).isAlive();
  }

  /** Stops every process (SIGTERM, then SIGKILL) and removes the folder. */
  @Override
  public void close() {
    try {
      Runtime.getRuntime().removeShutdownHook(shutdownHook);
    } catch (IllegalStateException alreadyShuttingDown) {
      // the hook runs (or ran) this same cleanup
    }
    stopAndDelete();
  }

  private synchronized void stopAndDelete() {
    if (closed) {
      return;
    }
    closed = true;
    processes.forEach(FdbServerProcess::stop);
    deleteRecursively(folder);
  }

  private static void deleteRecursively(Path folder) {
    try (Stream<Path> paths = Files.walk(folder)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException | UncheckedIOException ignored) {
      // a temporary folder left behind must not fail the tests that used it
    }
  }

  private static void sleep(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  @Override
  public String toString() {
    return "FdbTestServer(" + processes.size() + " fdbserver from " + binaries.origin() + ", " + clusterFile + ")";
  }
}
