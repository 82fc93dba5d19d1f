package io.github.fdbcoord.vertx;

import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.micrometer.MicrometerMetricsFactory;
import io.vertx.micrometer.MicrometerMetricsOptions;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * The stand-alone service: {@code java -jar vertx-fdb-coordination-fat.jar [config.json]}. Reads
 * the configuration file (default {@code conf/config.json}; environment overrides
 * {@code FDBCOORD_HTTP_HOST}, {@code FDBCOORD_HTTP_PORT}, {@code FDBCOORD_HTTP_TOKEN},
 * {@code FDBCOORD_CLUSTER_FILE}, {@code FDBCOORD_DATA_DIR}), starts Vert.x with Micrometer metrics
 * (served at /metrics together with the service's own) and deploys {@link CoordinationVerticle}.
 * On SIGTERM/SIGINT it undeploys (releasing this node's locks) and closes the store.
 */
public final class CoordinationMain {
  private CoordinationMain() {}

  public static void main(String[] args) throws Exception {
    Path file = Path.of(args.length > 0 ? args[0] : "conf/config.json");
    JsonObject config;
    try {
      config = withEnvironment(Files.exists(file) ? new JsonObject(Files.readString(file)) : new JsonObject());
    } catch (IOException | RuntimeException e) {
      System.err.println("cannot read the configuration " + file.toAbsolutePath() + ": " + e.getMessage());
      System.exit(2);
      return;
    }
    Metrics metrics = new Metrics();
    Vertx vertx = Vertx.builder()
        .with(new VertxOptions().setMetricsOptions(new MicrometerMetricsOptions().setEnabled(true)
            .setJvmMetricsEnabled(true)))
        .withMetrics(new MicrometerMetricsFactory(metrics.registry()))
        .build();
    CoordinationVerticle service = new CoordinationVerticle(config, null, metrics);
    try {
      vertx.deployVerticle(service).await(60, TimeUnit.SECONDS);
    } catch (Exception e) {
      System.err.println("the coordination service failed to start: " + e.getMessage());
      vertx.close().await(10, TimeUnit.SECONDS);
      System.exit(1);
      return;
    }
    CoordinationConfig c = service.coordinationConfig();
    System.out.println("vertx-fdb-coordination: store " + c.store() + ", event-bus prefix '" + c.addressPrefix() + "'"
        + (c.httpEnabled() ? ", HTTP on http://" + c.httpHost() + ":" + service.httpPort() : ""));
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try {
        vertx.close().await(20, TimeUnit.SECONDS);
      } catch (Exception e) {
        System.err.println("shutdown did not complete cleanly: " + e);
      }
    }, "fdbcoord-shutdown"));
  }

  /** Applies the FDBCOORD_* environment variables on top of the file's configuration. */
  static JsonObject withEnvironment(JsonObject config) {
    JsonObject http = config.getJsonObject("http", new JsonObject());
    JsonObject store = config.getJsonObject("store", new JsonObject());
    String host = System.getenv("FDBCOORD_HTTP_HOST");
    String port = System.getenv("FDBCOORD_HTTP_PORT");
    String token = System.getenv("FDBCOORD_HTTP_TOKEN");
    String clusterFile = System.getenv("FDBCOORD_CLUSTER_FILE");
    String dataDir = System.getenv("FDBCOORD_DATA_DIR");
    if (host != null) {
      http.put("host", host);
    }
    if (port != null) {
      try {
        http.put("port", Integer.parseInt(port));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("FDBCOORD_HTTP_PORT must be a port number, got " + port);
      }
    }
    if (token != null && !token.isEmpty()) {
      http.put("token", token);
    }
    if (clusterFile != null && !clusterFile.isEmpty()) {
      store.put("engine", "cluster").put("clusterFile", clusterFile);
    }
    if (dataDir != null && !dataDir.isEmpty()) {
      store.put("dataDirectory", dataDir);
    }
    return config.put("http", http).put("store", store);
  }
}
