package io.github.fdbcoord.vertx;

import com.apple.foundationdb.Database;
import io.github.fdbcoord.cluster.FdbClusterManager;
import io.github.fdbcoord.cluster.FdbClusterManagerOptions;
import io.github.fdbcoord.store.Store;
import io.vertx.core.Vertx;
import io.vertx.core.VertxBuilder;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.micrometer.MicrometerMetricsFactory;
import io.vertx.micrometer.MicrometerMetricsOptions;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The stand-alone service: {@code java -jar vertx-fdb-coordination-fat.jar [config.json]}. Reads
 * the configuration file (default {@code conf/config.json}; environment overrides
 * {@code FDBCOORD_HTTP_HOST}, {@code FDBCOORD_HTTP_PORT}, {@code FDBCOORD_HTTP_TOKEN},
 * {@code FDBCOORD_CLUSTER_FILE}, {@code FDBCOORD_DATA_DIR}), starts Vert.x with Micrometer metrics
 * (served at /metrics together with the service's own) and deploys {@link CoordinationVerticle}.
 * On SIGTERM/SIGINT it undeploys (releasing this node's locks) and closes the store.
 *
 * <p>With {@code "cluster": {"enabled": true, ...}} the node joins a Vert.x cluster on
 * {@link FdbClusterManager}, on the service's own store (docs/cluster-manager.md).
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
    JsonObject cluster = config.getJsonObject("cluster", new JsonObject());
    boolean clustered = cluster.getBoolean("enabled", false);
    VertxOptions vertxOptions = new VertxOptions().setMetricsOptions(new MicrometerMetricsOptions().setEnabled(true)
        .setJvmMetricsEnabled(true));
    VertxBuilder builder = Vertx.builder().withMetrics(new MicrometerMetricsFactory(metrics.registry()));
    Vertx vertx;
    Store store = null;
    if (clustered) {
      // One store for the node and the service: the cluster manager's locks are the service's mutexes.
      CoordinationConfig c = CoordinationConfig.from(config);
      try {
        FdbClusterManagerOptions options = clusterOptions(cluster, c, null);
        store = Store.open(c.store());
        options.setDatabase(store.database());
        EventBusOptions eventBus = new EventBusOptions();
        if (cluster.getString("eventBusHost") != null) {
          eventBus.setHost(cluster.getString("eventBusHost"));
        }
        eventBus.setPort(cluster.getInteger("eventBusPort", 0));
        vertx = builder.with(vertxOptions.setEventBusOptions(eventBus))
            .withClusterManager(new FdbClusterManager(options)).buildClustered().await(60, TimeUnit.SECONDS);
      } catch (Exception e) {
        System.err.println("the coordination service could not join the cluster: " + e.getMessage());
        if (store != null) {
          store.close();
        }
        System.exit(1);
        return;
      }
    } else {
      vertx = builder.with(vertxOptions).build();
    }
    Store ownedStore = store;
    CoordinationVerticle service = new CoordinationVerticle(config, store == null ? null : store.database(), metrics);
    try {
      vertx.deployVerticle(service).await(60, TimeUnit.SECONDS);
    } catch (Exception e) {
      System.err.println("the coordination service failed to start: " + e.getMessage());
      vertx.close().await(10, TimeUnit.SECONDS);
      if (ownedStore != null) {
        ownedStore.close();
      }
      System.exit(1);
      return;
    }
    CoordinationConfig c = service.coordinationConfig();
    System.out.println("vertx-fdb-coordination: store " + c.store() + ", event-bus prefix '" + c.addressPrefix() + "'"
        + (c.httpEnabled() ? ", HTTP on http://" + c.httpHost() + ":" + service.httpPort() : "")
        + (clustered ? ", clustered as node " + ((io.vertx.core.internal.VertxInternal) vertx).clusterManager().getNodeId() : ""));
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try {
        vertx.close().await(20, TimeUnit.SECONDS);
      } catch (Exception e) {
        System.err.println("shutdown did not complete cleanly: " + e);
      }
      if (ownedStore != null) {
        ownedStore.close();
      }
    }, "fdbcoord-shutdown"));
  }

  /**
   * The cluster manager's options from the configuration's {@code cluster} section: its keys are
   * those of {@link FdbClusterManagerOptions}'s JSON form except the store (the node uses the
   * service's store), plus {@code enabled}, {@code eventBusHost}, {@code eventBusPort}. The
   * directories default to the service's {@code rootDirectory} + {@code "cluster"} and + {@code "mutex"}
   * (so SharedData locks are the service's mutexes).
   *
   * @throws IllegalArgumentException for a store key or any option the cluster manager refuses
   */
  static FdbClusterManagerOptions clusterOptions(JsonObject cluster, CoordinationConfig config, Database db) {
    JsonObject json = cluster.copy();
    json.remove("enabled");
    json.remove("eventBusHost");
    json.remove("eventBusPort");
    for (String key : List.of("store", "dataDirectory", "clusterFile")) {
      if (json.containsKey(key)) {
        throw new IllegalArgumentException("cluster." + key + " is not an option here: the node uses the service's store");
      }
    }
    FdbClusterManagerOptions options = new FdbClusterManagerOptions(json);
    if (!json.containsKey("directory")) {
      options.setDirectory(child(config.rootDirectory(), "cluster"));
    }
    if (!json.containsKey("lockDirectory")) {
      options.setLockDirectory(child(config.rootDirectory(), "mutex"));
    }
    options.validate();
    return options.setDatabase(db);
  }

  private static List<String> child(List<String> root, String name) {
    List<String> path = new ArrayList<>(root);
    path.add(name);
    return path;
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
