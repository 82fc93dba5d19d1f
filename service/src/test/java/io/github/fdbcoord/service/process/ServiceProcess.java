package io.github.fdbcoord.service.process;

import io.github.fdbcoord.testing.ChildJvm;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The coordination service as users run it ({@code CoordinationMain config.json}) in a JVM of its
 * own, on the test class path (the service's classes and their dependencies: what the fat jar
 * holds). {@link #awaitReady()} reads the HTTP port from the line the service prints once started.
 */
public final class ServiceProcess implements AutoCloseable {
  private static final Pattern HTTP = Pattern.compile("HTTP on http://[^:]+:(\\d+)");
  private static final Duration START_TIMEOUT = Duration.ofSeconds(90);

  private final ChildJvm jvm;
  private final Path config;
  private int port;

  private ServiceProcess(ChildJvm jvm, Path config) {
    this.jvm = jvm;
    this.config = config;
  }

  /**
   * A configuration for a service on the cluster {@code clusterFile}, HTTP on a free loopback port,
   * under {@code root}, with short mutex leases (the tests wait for expiries).
   */
  public static JsonObject clusterConfig(Path clusterFile, List<String> root) {
    return new JsonObject()
        .put("store", new JsonObject().put("engine", "cluster").put("clusterFile", clusterFile.toString()))
        .put("rootDirectory", new JsonArray(root))
        .put("workerPoolSize", 4)
        .put("http", new JsonObject().put("enabled", true).put("host", "127.0.0.1").put("port", 0))
        .put("mutex", new JsonObject().put("leaseMs", 1500).put("heartbeatIntervalMs", 300)
            .put("reaperIntervalMs", 100).put("maxAcquireTimeoutMs", 20_000));
  }

  /** Writes {@code config} to a temporary file and starts {@code CoordinationMain} on it. */
  public static ServiceProcess start(String name, JsonObject config) throws IOException {
    Path file = Files.createTempFile("fdbcoord-service-", ".json");
    Files.writeString(file, config.encodePrettily());
    ChildJvm jvm = ChildJvm.start(name, List.of("-Xmx256m", "-XX:+ExitOnOutOfMemoryError", "-XX:TieredStopAtLevel=1"),
        entry -> false, "io.github.fdbcoord.service.CoordinationMain", List.of(file.toString()));
    return new ServiceProcess(jvm, file);
  }

  /** Waits for the service's start line; returns its HTTP port. */
  public int awaitReady() {
    String line = jvm.awaitLine(l -> l.startsWith("vertx-fdb-coordination: store"), START_TIMEOUT).text();
    Matcher m = HTTP.matcher(line);
    if (!m.find()) {
      throw new AssertionError("no HTTP port in the start line: " + line);
    }
    port = Integer.parseInt(m.group(1));
    return port;
  }

  /** The HTTP port ({@link #awaitReady()} first). */
  public int port() {
    return port;
  }

  /** The process. */
  public ChildJvm jvm() {
    return jvm;
  }

  /** SIGTERM (the service releases its locks and closes the store), then removes the configuration. */
  @Override
  public void close() throws IOException {
    jvm.close();
    Files.deleteIfExists(config);
  }
}
