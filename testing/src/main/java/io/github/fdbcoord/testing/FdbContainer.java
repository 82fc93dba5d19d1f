package io.github.fdbcoord.testing;

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

/**
 * A single-process FoundationDB in Docker (the official image, the version of our fdb-java): the
 * last route of {@link SharedFdb}, where no cluster file is given and no fdbserver is found.
 *
 * <p>The image writes its own address into the cluster file; in its "host" networking mode that
 * address is 127.0.0.1:4500, so the container's port 4500 is bound to the host's port 4500 (not a
 * random one) and a host client reaches the server at the address the cluster file names. The
 * client side still needs FoundationDB's native library on the test machine.
 */
final class FdbContainer {
  static final String IMAGE = "foundationdb/foundationdb:7.3.68";
  private static final int PORT = 4500;

  private static GenericContainer<?> container;
  private static Path clusterFile;

  private FdbContainer() {}

  /** Why this route cannot run here, or null when it can (Docker's probe takes a while: ask once). */
  static String unavailableReason() {
    if (!DockerClientFactory.instance().isDockerAvailable()) {
      return "no Docker engine is reachable for Testcontainers";
    }
    return null;
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
      Path file = Files.createTempFile("fdb-container", ".cluster");
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
