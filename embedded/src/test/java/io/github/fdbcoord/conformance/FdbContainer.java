package io.github.fdbcoord.conformance;

import com.github.dockerjava.api.model.ExposedPort;
import com.github.dockerjava.api.model.PortBinding;
import com.github.dockerjava.api.model.Ports;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.Container;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.utility.DockerImageName;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * A single-process FoundationDB in Docker (the official image, the version of our fdb-java), for
 * the conformance suite's real-cluster runs where no FDB_CLUSTER_FILE is given.
 *
 * <p>The image writes its own address into the cluster file; in its "host" networking mode that
 * address is 127.0.0.1:4500, so the container's port 4500 is bound to the host's port 4500 (not a
 * random one) and a host client reaches the server at the address the cluster file names. The
 * client side still needs FoundationDB's native library on the test machine.
 */
final class FdbContainer {
  static final String IMAGE = "foundationdb/foundationdb:7.3.68";
  private static final int PORT = 4500;
  private static final String NATIVE_CLIENT = System.mapLibraryName("fdb_c");
  private static final List<String> NATIVE_CLIENT_DIRS = List.of("/usr/lib", "/usr/local/lib", "/usr/lib64",
      "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/local/lib64");

  private static GenericContainer<?> container;
  private static Path clusterFile;

  private FdbContainer() {}

  /** Why this route cannot run here, or null when it can. Cheap checks first: Docker's probe is slow. */
  static String unavailableReason() {
    if (!nativeClientInstalled()) {
      return "the Testcontainers route needs FoundationDB's native client (" + NATIVE_CLIENT
          + "), which is not installed";
    }
    if (!DockerClientFactory.instance().isDockerAvailable()) {
      return "the Testcontainers route needs Docker, which is not reachable";
    }
    return null;
  }

  private static boolean nativeClientInstalled() {
    String path = System.getProperty("java.library.path", "");
    for (String dir : path.split(java.io.File.pathSeparator)) {
      if (!dir.isEmpty() && Files.isReadable(Path.of(dir, NATIVE_CLIENT))) {
        return true;
      }
    }
    return NATIVE_CLIENT_DIRS.stream().anyMatch(dir -> Files.isReadable(Path.of(dir, NATIVE_CLIENT)));
  }

  /** Starts the container once per test JVM (Testcontainers removes it at exit) and returns a cluster file for it. */
  static synchronized Path clusterFile() {
    if (clusterFile != null) {
      return clusterFile;
    }
    GenericContainer<?> c = new GenericContainer<>(DockerImageName.parse(IMAGE))
        .withEnv("FDB_NETWORKING_MODE", "host")
        .withEnv("FDB_PORT", String.valueOf(PORT))
        .withExposedPorts(PORT)
        .withCreateContainerCmdModifier(cmd -> cmd.getHostConfig().withPortBindings(
            new PortBinding(Ports.Binding.bindPort(PORT), new ExposedPort(PORT))))
        .withStartupTimeout(Duration.ofMinutes(2));
    c.start();
    try {
      configure(c);
      Path file = Files.createTempFile("fdb-conformance", ".cluster");
      file.toFile().deleteOnExit();
      Files.writeString(file, c.execInContainer("cat", "/var/fdb/fdb.cluster").getStdout().trim() + "\n");
      container = c;
      clusterFile = file;
      return file;
    } catch (IOException | InterruptedException | RuntimeException e) {
      c.stop();
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      throw new IllegalStateException("could not set up FoundationDB in " + IMAGE + ": " + e.getMessage(), e);
    }
  }

  /** A new single-process database, then waits until it answers. */
  private static void configure(GenericContainer<?> c) throws IOException, InterruptedException {
    Container.ExecResult created = c.execInContainer("fdbcli", "--exec", "configure new single memory", "--timeout", "30");
    if (created.getExitCode() != 0 && !created.getStdout().contains("already exists")) {
      throw new IllegalStateException("fdbcli configure failed: " + created.getStdout() + created.getStderr());
    }
    long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
    while (true) {
      Container.ExecResult status = c.execInContainer("fdbcli", "--exec", "status minimal", "--timeout", "10");
      if (status.getStdout().contains("The database is available")) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("database not available after 1 minute: " + status.getStdout());
      }
      Thread.sleep(500);
    }
  }
}
