package io.github.fdbcoord.service;

import com.apple.foundationdb.Database;
import com.sun.management.HotSpotDiagnosticMXBean;
import io.github.fdbcoord.cluster.FdbClusterManager;
import io.github.fdbcoord.cluster.FdbClusterManagerOptions;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.service.eventbus.Metrics;
import io.github.fdbcoord.store.Store;
import io.vertx.core.Vertx;
import io.vertx.core.VertxBuilder;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.json.JsonObject;
import io.vertx.micrometer.MicrometerMetricsFactory;
import io.vertx.micrometer.MicrometerMetricsOptions;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The stand-alone service: {@code java -XX:+ExitOnOutOfMemoryError -jar vertx-fdb-coordination-fat.jar
 * [config.json]} ({@code --help} prints the usage). Reads the configuration file (default
 * {@code conf/config.json}; a missing file is an error, never an in-memory default; environment overrides
 * {@code FDBCOORD_HTTP_HOST}, {@code FDBCOORD_HTTP_PORT}, {@code FDBCOORD_HTTP_TOKEN},
 * {@code FDBCOORD_CLUSTER_FILE}, {@code FDBCOORD_DATA_DIR}), starts Vert.x with Micrometer metrics
 * (served at /metrics together with the service's own) and deploys {@link CoordinationVerticle}.
 * On SIGTERM/SIGINT it undeploys (releasing this node's locks) and closes the store. An
 * OutOfMemoryError that reaches a thread's top halts the JVM (status 3); run it with
 * {@code -XX:+ExitOnOutOfMemoryError} so that every OutOfMemoryError does.
 *
 * <p>With {@code "cluster": {"enabled": true, ...}} the node joins a Vert.x cluster on
 * {@link FdbClusterManager}, on the service's own store (docs/cluster-manager.md).
 */
public final class CoordinationMain {
  static final String USAGE = String.join(System.lineSeparator(),
      "usage: java -XX:+ExitOnOutOfMemoryError -jar vertx-fdb-coordination-service-fat.jar [config.json]",
      "       java -jar vertx-fdb-coordination-service-fat.jar --help",
      "       java -jar vertx-fdb-coordination-service-fat.jar restore <backup> <dataDirectory>",
      "       java -jar vertx-fdb-coordination-service-fat.jar verify <dataDirectory>",
      "",
      "Runs the coordination service (FoundationDB layers on the Vert.x event bus, HTTP API).",
      "  config.json   the configuration file (default: conf/config.json in the working directory);",
      "                keys and defaults in docs/vertx.md. A missing or unreadable file is an error.",
      "Environment overrides: FDBCOORD_HTTP_HOST, FDBCOORD_HTTP_PORT, FDBCOORD_HTTP_TOKEN,",
      "  FDBCOORD_CLUSTER_FILE (switches to the cluster engine), FDBCOORD_DATA_DIR.",
      "restore: makes <dataDirectory> (missing or empty) a data directory holding the backup that",
      "  POST /admin/backup wrote into <backup>, after checking every file of it; offline.",
      "Exit codes: 0 stopped by SIGTERM/SIGINT (or --help), 1 failed to start, 2 bad command line or",
      "  configuration, 3 out of memory or another fatal JVM error.",
      "",
      "verify reads every block of the embedded engine's storage in a data directory that no process has open",
      "  and lists each damaged file. Exit codes: 0 nothing damaged, 1 damaged (each file listed) or the",
      "  storage cannot be opened (why is printed), 2 bad command line, not a data directory, or in use.");

  /** Exit status after an OutOfMemoryError or another VirtualMachineError. */
  static final int EXIT_FATAL = 3;

  private CoordinationMain() {}

  /** The command line could not be used: {@code status} is the exit status, the message says why. */
  static final class CommandLineException extends Exception {
    final int status;

    CommandLineException(int status, String message) {
      super(message);
      this.status = status;
    }
  }

  /**
   * Runs the service, {@code restore} or {@code verify} as the command line says (see {@link #USAGE});
   * exits with the documented status when it cannot start.
   */
  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("verify")) {
      System.exit(verify(args, System.out, System.err));
      return;
    }
    installFatalErrorHandler();
    if (args.length > 0 && args[0].equals("restore")) {
      System.exit(restore(args, System.out, System.err));
      return;
    }
    JsonObject config;
    try {
      config = configuration(args);
    } catch (CommandLineException e) {
      (e.status == 0 ? System.out : System.err).println(e.getMessage());
      System.exit(e.status);
      return;
    }
    warnUnlessExitOnOutOfMemory();
    Metrics metrics = new Metrics();
    JsonObject cluster = config.getJsonObject("cluster", new JsonObject());
    boolean clustered = cluster.getBoolean("enabled", false);
    Vertx vertx;
    Store store = null;
    if (clustered) {
      // One store for the node and the service: the cluster manager's locks are the service's mutexes.
      CoordinationConfig c = CoordinationConfig.from(config);
      try {
        FdbClusterManagerOptions checked = clusterOptions(cluster, c, null);
        store = Store.open(c.store());
        FdbClusterManagerOptions options = checked.toBuilder().database(store.database()).build();
        EventBusOptions eventBus = new EventBusOptions();
        if (cluster.getString("eventBusHost") != null) {
          eventBus.setHost(cluster.getString("eventBusHost"));
        }
        eventBus.setPort(cluster.getInteger("eventBusPort", 0));
        vertx = vertxBuilder(metrics, vertxOptions().setEventBusOptions(eventBus))
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
      vertx = createVertx(metrics);
    }
    vertx.exceptionHandler(e -> {
      if (isFatal(e)) {
        haltOnFatal(Thread.currentThread(), e);
      }
    });
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
    System.out.println("vertx-fdb-coordination: store " + describe(c) + ", store id " + service.storeId()
        + ", event-bus prefix '" + c.addressPrefix() + "'"
        + (c.httpEnabled() ? ", HTTP on http://" + c.httpHost() + ":" + service.httpPort() : ", HTTP disabled")
        + (clustered ? ", clustered as node " + ((VertxInternal) vertx).clusterManager().getNodeId() : ""));
    long shutdownMillis = c.shutdownTimeout().toMillis();
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try {
        vertx.close().await(shutdownMillis, TimeUnit.MILLISECONDS);
      } catch (TimeoutException e) {
        System.err.println("shutdown did not complete cleanly: not done within shutdownTimeoutMs (" + shutdownMillis
            + " ms), the store did not answer; exiting anyway: this node's mutex grants and cluster records"
            + " left in the store end with their leases");
      } catch (Exception e) {
        System.err.println("shutdown did not complete cleanly: " + e);
      }
      // On stderr, not the log: the JVM's logging may be shut down by its own hook by now.
      List<String> unreleased = service.unreleasedAtStop();
      if (!unreleased.isEmpty()) {
        System.err.println("shutdown could not release " + unreleased.size() + " mutex grant(s) within requestTimeoutMs ("
            + c.requestTimeout().toMillis() + " ms), the store did not answer: " + unreleased
            + "; their leases end them");
      }
      if (ownedStore != null) {
        ownedStore.close();
      }
    }, "fdbcoord-shutdown"));
  }

  /**
   * {@code restore <backup> <dataDirectory>}: restores a backup of the durable embedded store into a new
   * data directory. Returns the exit status: 0 restored, 1 refused or failed (the message names the
   * damaged file or the non-empty target), 2 bad command line.
   */
  static int restore(String[] args, PrintStream out, PrintStream err) {
    if (args.length != 3) {
      err.println("restore needs two arguments, the backup directory and the new data directory; got "
          + (args.length - 1) + System.lineSeparator() + USAGE);
      return 2;
    }
    try {
      var info = EmbeddedDatabase.restore(Path.of(args[1]), Path.of(args[2]));
      out.println("restored the backup " + Path.of(args[1]).toAbsolutePath() + " at version " + info.version() + " ("
          + info.files() + " files, " + info.bytes() + " bytes) into " + info.directory() + " in "
          + info.duration().toMillis() + " ms; start the service with store.dataDirectory " + info.directory());
      return 0;
    } catch (IOException | InvalidPathException e) {
      err.println("restore failed: " + e.getMessage());
      return 1;
    }
  }

  /** Vert.x with Micrometer metrics (Vert.x and JVM meters) bound to the service's registry. */
  static Vertx createVertx(Metrics metrics) {
    return vertxBuilder(metrics, vertxOptions()).build();
  }

  private static VertxOptions vertxOptions() {
    return new VertxOptions().setMetricsOptions(new MicrometerMetricsOptions().setEnabled(true).setJvmMetricsEnabled(true));
  }

  private static VertxBuilder vertxBuilder(Metrics metrics, VertxOptions options) {
    return Vertx.builder().with(options).withMetrics(new MicrometerMetricsFactory(metrics.registry()));
  }

  /**
   * The configuration the command line asks for: the file named by the only argument (default
   * {@code conf/config.json}) with the environment's overrides, checked. {@code --help} and every
   * problem (unknown option, missing or unreadable file, invalid JSON or keys) end in a
   * {@link CommandLineException} saying what to do; nothing falls back to an in-memory default.
   */
  static JsonObject configuration(String[] args) throws CommandLineException {
    if (args.length == 1 && (args[0].equals("--help") || args[0].equals("-h") || args[0].equals("-help"))) {
      throw new CommandLineException(0, USAGE);
    }
    if (args.length > 1 || (args.length == 1 && args[0].startsWith("-"))) {
      throw new CommandLineException(2, "unexpected arguments " + String.join(" ", args) + System.lineSeparator()
          + USAGE);
    }
    Path file = Path.of(args.length == 1 ? args[0] : "conf/config.json");
    if (!Files.exists(file)) {
      throw new CommandLineException(2, "the configuration file " + file.toAbsolutePath() + " does not exist"
          + (args.length == 0 ? " (no file was given, so conf/config.json in the working directory "
              + Path.of("").toAbsolutePath() + " was tried)" : "")
          + System.lineSeparator() + USAGE);
    }
    JsonObject config;
    try {
      config = withEnvironment(new JsonObject(Files.readString(file)));
    } catch (IOException e) {
      throw new CommandLineException(2, "cannot read the configuration file " + file.toAbsolutePath() + ": " + e);
    } catch (RuntimeException e) {
      throw new CommandLineException(2, "the configuration file " + file.toAbsolutePath() + " is not valid: "
          + e.getMessage());
    }
    try {
      CoordinationConfig checked = CoordinationConfig.from(config);
      clusterOptions(config.getJsonObject("cluster", new JsonObject()), checked, null);
    } catch (IllegalArgumentException e) {
      throw new CommandLineException(2, "the configuration file " + file.toAbsolutePath() + " is not valid: "
          + e.getMessage());
    }
    return config;
  }

  /**
   * {@code verify <dataDirectory>}: reads every block of the storage of a data directory no process has open
   * and prints each damaged file; returns the exit status (see {@link #USAGE}).
   */
  static int verify(String[] args, PrintStream out, PrintStream err) {
    if (args.length != 2 || args[1].startsWith("-")) {
      err.println("verify takes one argument, the data directory" + System.lineSeparator() + USAGE);
      return 2;
    }
    Path dir = Path.of(args[1]);
    List<String> damaged;
    try {
      damaged = EmbeddedDatabase.verify(dir);
    } catch (IllegalStateException | IllegalArgumentException e) {
      err.println("verify: " + e.getMessage());
      return 2;
    } catch (UncheckedIOException e) {
      err.println("verify: " + e.getMessage());
      return 1;
    }
    for (String file : damaged) {
      out.println("damaged: " + file);
    }
    out.println("verify: " + dir + ": " + (damaged.isEmpty() ? "every block of the storage's table files is intact"
        : damaged.size() + " damaged table file" + (damaged.size() == 1 ? "" : "s")
            + " (restore the data directory from a backup)"));
    return damaged.isEmpty() ? 0 : 1;
  }

  private static String describe(CoordinationConfig c) {
    String store = c.store().toString();
    return store.contains("in memory") ? store + " (NOT durable: every key is lost when the process stops)" : store;
  }

  /** Whether {@code t} (or a cause) means the JVM can no longer be trusted to run the service. */
  static boolean isFatal(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof VirtualMachineError) {
        return true;
      }
    }
    return false;
  }

  /**
   * Halts the JVM on an OutOfMemoryError (or another VirtualMachineError) that reaches a thread's
   * top: a service that cannot allocate answers every write with an error while looking alive, and
   * a supervisor (Docker, systemd, Kubernetes) restarts a dead process but not a sick one. Other
   * uncaught exceptions are printed as the JVM would.
   */
  static void installFatalErrorHandler() {
    Thread.setDefaultUncaughtExceptionHandler((thread, e) -> {
      if (isFatal(e)) {
        haltOnFatal(thread, e);
      }
      System.err.print("Exception in thread \"" + thread.getName() + "\" ");
      e.printStackTrace();
    });
  }

  private static void haltOnFatal(Thread thread, Throwable e) {
    try {
      System.err.println("fatal: " + e + " in thread " + thread.getName() + "; halting with status " + EXIT_FATAL);
      System.err.flush();
    } finally {
      // halt, not exit: shutdown hooks would need memory and threads the JVM may not have.
      Runtime.getRuntime().halt(EXIT_FATAL);
    }
  }

  /**
   * Most OutOfMemoryErrors are caught on their way (a failed future, an error reply), never reaching
   * a thread's top; only the JVM flag ends the process at the first one. Without it, say so.
   */
  private static void warnUnlessExitOnOutOfMemory() {
    try {
      var hotspot = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
      if (hotspot == null) {
        return;
      }
      boolean exits = Boolean.parseBoolean(hotspot.getVMOption("ExitOnOutOfMemoryError").getValue())
          || Boolean.parseBoolean(hotspot.getVMOption("CrashOnOutOfMemoryError").getValue());
      if (!exits) {
        System.err.println("warning: the JVM runs without -XX:+ExitOnOutOfMemoryError: an OutOfMemoryError caught"
            + " inside a request would leave the service running without memory; add the flag (the Dockerfile does)");
      }
    } catch (RuntimeException | LinkageError e) {
      // Not a HotSpot JVM: nothing to check.
    }
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
    FdbClusterManagerOptions.Builder options = new FdbClusterManagerOptions(json).toBuilder();
    if (!json.containsKey("directory")) {
      options.directory(child(config.rootDirectory(), "cluster"));
    }
    if (!json.containsKey("lockDirectory")) {
      options.lockDirectory(child(config.rootDirectory(), "mutex"));
    }
    return options.database(db).build();
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
