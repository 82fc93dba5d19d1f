package io.github.fdbcoord.service;

import io.github.fdbcoord.service.eventbus.Metrics;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static io.github.fdbcoord.service.ServiceFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The stand-alone launcher: a wrong command line or configuration stops it with a message (never
 * an in-memory default), {@code --help} prints the usage, the store in use is logged, and an
 * OutOfMemoryError ends the process.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CoordinationMainTest {

  @Test
  void helpPrintsUsage() {
    for (String help : List.of("--help", "-h")) {
      var e = assertThrows(CoordinationMain.CommandLineException.class,
          () -> CoordinationMain.configuration(new String[] {help}));
      assertEquals(0, e.status);
      assertTrue(e.getMessage().startsWith("usage: "), e.getMessage());
    }
    var e = assertThrows(CoordinationMain.CommandLineException.class,
        () -> CoordinationMain.configuration(new String[] {"--port", "80"}));
    assertEquals(2, e.status);
    assertTrue(e.getMessage().contains("usage: "), e.getMessage());
  }

  @Test
  void missingOrUnreadableFileIsAnError(@TempDir Path dir) throws Exception {
    Path missing = dir.resolve("nope.json");
    var e = assertThrows(CoordinationMain.CommandLineException.class,
        () -> CoordinationMain.configuration(new String[] {missing.toString()}));
    assertEquals(2, e.status);
    assertTrue(e.getMessage().contains(missing.toAbsolutePath() + " does not exist"), e.getMessage());

    // No argument: conf/config.json in the working directory (the module directory here, which has none).
    e = assertThrows(CoordinationMain.CommandLineException.class,
        () -> CoordinationMain.configuration(new String[0]));
    assertTrue(e.getMessage().contains("conf/config.json in the working directory"), e.getMessage());

    // A directory where the file should be: cannot be read.
    e = assertThrows(CoordinationMain.CommandLineException.class,
        () -> CoordinationMain.configuration(new String[] {dir.toString()}));
    assertTrue(e.getMessage().startsWith("cannot read the configuration file"), e.getMessage());

    Path broken = Files.writeString(dir.resolve("broken.json"), "{\"http\": ");
    e = assertThrows(CoordinationMain.CommandLineException.class,
        () -> CoordinationMain.configuration(new String[] {broken.toString()}));
    assertTrue(e.getMessage().contains("is not valid"), e.getMessage());

    Path good = Files.writeString(dir.resolve("good.json"), "{\"http\": {\"enabled\": true, \"port\": 0}}");
    JsonObject config = CoordinationMain.configuration(new String[] {good.toString()});
    assertEquals(0, config.getJsonObject("http").getInteger("port"));
  }

  @Test
  void unknownKeysAreRefusedWithTheNearestKnownKey(@TempDir Path dir) throws Exception {
    Path file = Files.writeString(dir.resolve("typo.json"), "{\"http\": {\"prot\": 8081}}");
    var e = assertThrows(CoordinationMain.CommandLineException.class,
        () -> CoordinationMain.configuration(new String[] {file.toString()}));
    assertTrue(e.getMessage().contains("unknown key 'http.prot' (did you mean 'http.port'?)"), e.getMessage());

    for (String[] typo : new String[][] {{"rootDirectroy", "rootDirectory"}, {"store.dataDir", "store.dataDirectory"},
        {"mutex.leasMs", "mutex.leaseMs"}, {"adressPrefix", "addressPrefix"}}) {
      JsonObject json = new JsonObject();
      String[] parts = typo[0].split("\\.");
      if (parts.length == 2) {
        json.put(parts[0], new JsonObject().put(parts[1], 1));
      } else {
        json.put(parts[0], 1);
      }
      var refused = assertThrows(IllegalArgumentException.class, () -> CoordinationConfig.from(json));
      assertTrue(refused.getMessage().contains("unknown key '" + typo[0] + "' (did you mean '" + typo[1] + "'?)"),
          refused.getMessage());
    }
    var far = assertThrows(IllegalArgumentException.class,
        () -> CoordinationConfig.from(new JsonObject().put("zzzzzzzzzzzz", 1)));
    assertFalse(far.getMessage().contains("did you mean"), far.getMessage());

    // The cluster section is checked by the cluster manager's options, enabled or not.
    Path cluster = Files.writeString(dir.resolve("cluster.json"),
        "{\"cluster\": {\"enabled\": false, \"nodeLeasMs\": 5000}}");
    var c = assertThrows(CoordinationMain.CommandLineException.class,
        () -> CoordinationMain.configuration(new String[] {cluster.toString()}));
    assertTrue(c.getMessage().contains("nodeLeasMs"), c.getMessage());
    Path fine = Files.writeString(dir.resolve("fine.json"),
        "{\"cluster\": {\"enabled\": false, \"nodeLeaseMs\": 5000}}");
    assertEquals(5000, CoordinationMain.configuration(new String[] {fine.toString()})
        .getJsonObject("cluster").getInteger("nodeLeaseMs"));
    // The cluster manager's earlier key still configures the lease, for one release (it logs a warning).
    Path earlier = Files.writeString(dir.resolve("earlier.json"),
        "{\"cluster\": {\"enabled\": false, \"nodeLeaseMillis\": 5000}}");
    JsonObject earlierConfig = CoordinationMain.configuration(new String[] {earlier.toString()});
    assertEquals(java.time.Duration.ofSeconds(5), CoordinationMain.clusterOptions(earlierConfig.getJsonObject("cluster"),
        CoordinationConfig.from(earlierConfig), null).nodeLease());
  }

  @Test
  void storageCacheIsConfigurableAndChecked() {
    CoordinationConfig c = CoordinationConfig.from(new JsonObject()
        .put("store", new JsonObject().put("storageCacheBytes", 8L << 20)));
    assertEquals(8L << 20, c.store().storageCacheBytes());
    assertEquals(64L << 20, CoordinationConfig.from(new JsonObject()).store().storageCacheBytes());
    var e = assertThrows(IllegalArgumentException.class, () -> CoordinationConfig.from(new JsonObject()
        .put("store", new JsonObject().put("storageCacheBytes", 1000))));
    assertTrue(e.getMessage().contains("store.storageCacheBytes"), e.getMessage());
  }

  @Test
  void diskSpaceReserveIsConfigurableAndChecked() {
    assertEquals(100L << 20, CoordinationConfig.from(new JsonObject()).store().minFreeSpaceBytes());
    assertEquals(0, CoordinationConfig.from(new JsonObject()
        .put("store", new JsonObject().put("minFreeSpaceBytes", 0))).store().minFreeSpaceBytes());
    for (Object bad : new Object[] {-1, "1GB"}) {
      var e = assertThrows(IllegalArgumentException.class, () -> CoordinationConfig.from(new JsonObject()
          .put("store", new JsonObject().put("minFreeSpaceBytes", bad))));
      assertTrue(e.getMessage().startsWith("store.minFreeSpaceBytes must be"), e.getMessage());
    }
  }

  @Test
  void blankTokenIsRefused() {
    var e = assertThrows(IllegalArgumentException.class, () -> CoordinationConfig.from(new JsonObject()
        .put("http", new JsonObject().put("enabled", true).put("host", "0.0.0.0").put("token", "   "))));
    assertTrue(e.getMessage().contains("http.token must not be empty or only white space"), e.getMessage());
  }

  @Test
  void httpIsOffUnlessConfigured(Vertx vertx) throws Exception {
    assertFalse(CoordinationConfig.from(new JsonObject()).httpEnabled());
    CoordinationVerticle embedded = new CoordinationVerticle(new JsonObject());
    String id = await(vertx.deployVerticle(embedded));
    assertEquals(-1, embedded.httpPort());
    await(vertx.undeploy(id));
    JsonObject shipped = new JsonObject(Files.readString(Path.of("../conf/config.json")));
    assertTrue(CoordinationConfig.from(shipped).httpEnabled(), "the stand-alone main's configuration turns it on");
  }

  @Test
  void storeInUseIsLoggedAtStart(Vertx vertx, @TempDir Path data) {
    Logger logger = Logger.getLogger(CoordinationVerticle.class.getName());
    List<String> lines = new CopyOnWriteArrayList<>();
    Handler handler = new Handler() {
      @Override
      public void publish(LogRecord r) {
        lines.add(r.getLevel() + " " + r.getMessage());
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    };
    logger.addHandler(handler);
    JsonObject durable = new JsonObject().put("store", new JsonObject().put("dataDirectory", data.toString()));
    try {
      String id = await(vertx.deployVerticle(new CoordinationVerticle(new JsonObject())));
      await(vertx.undeploy(id));
      assertTrue(lines.stream().anyMatch(l -> l.startsWith("INFO coordination service started")
          && l.contains("store embedded(in memory)")), lines.toString());
      // A data directory: where it is, and a line before and after its recovery.
      for (int run = 0; run < 2; run++) {
        lines.clear();
        id = await(vertx.deployVerticle(new CoordinationVerticle(durable)));
        await(vertx.undeploy(id));
      }
    } finally {
      logger.removeHandler(handler);
    }
    String store = "store embedded(" + data + ")";
    assertTrue(lines.stream().anyMatch(l -> l.startsWith("INFO opening " + store + ": recovering ")
        && l.contains(" files, ")), lines.toString());
    assertTrue(lines.stream().anyMatch(l -> l.startsWith("INFO " + store + " open after ")
        && l.contains("(recovered ")), lines.toString());
    assertTrue(lines.stream().anyMatch(l -> l.startsWith("INFO coordination service started") && l.contains(store)),
        lines.toString());
  }

  /** The stand-alone main's Vert.x (Micrometer metrics on) starts without "Gauge already registered". */
  @Test
  void noDuplicateGaugeWarningAtStart() {
    Logger root = Logger.getLogger("");
    List<String> warnings = new CopyOnWriteArrayList<>();
    Handler handler = warningsInto(warnings);
    root.addHandler(handler);
    Metrics metrics = new Metrics();
    Vertx vertx = CoordinationMain.createVertx(metrics);
    try {
      await(vertx.deployVerticle(new CoordinationVerticle(new JsonObject()
          .put("http", new JsonObject().put("enabled", true).put("port", 0)), null, metrics)));
      String scrape = metrics.scrape();
      assertTrue(scrape.contains("vertx_http_server_requests") || scrape.contains("jvm_memory_used_bytes"), scrape);
    } finally {
      await(vertx.close());
      root.removeHandler(handler);
    }
    assertFalse(warnings.stream().anyMatch(w -> w.contains("already registered")), warnings.toString());
  }

  /**
   * Two HTTP connections open at once (the dashboard and a curl): vertx-micrometer-metrics then
   * registers its per-connection gauges a second time, which Micrometer warns about.
   */
  @Test
  void noDuplicateGaugeWarningWithTwoHttpConnections() throws Exception {
    Logger root = Logger.getLogger("");
    List<String> warnings = new CopyOnWriteArrayList<>();
    Handler handler = warningsInto(warnings);
    root.addHandler(handler);
    Metrics metrics = new Metrics();
    Vertx vertx = CoordinationMain.createVertx(metrics);
    try {
      CoordinationVerticle service = new CoordinationVerticle(new JsonObject()
          .put("http", new JsonObject().put("enabled", true).put("port", 0)), null, metrics);
      await(vertx.deployVerticle(service));
      // Two connections open at once, from outside Vert.x (a browser and a curl): only the server's meters count.
      try (java.net.Socket first = new java.net.Socket("127.0.0.1", service.httpPort());
           java.net.Socket second = new java.net.Socket("127.0.0.1", service.httpPort())) {
        for (int round = 0; round < 2; round++) {
          for (java.net.Socket s : List.of(first, second)) {
            assertTrue(get(s, "/health").startsWith("HTTP/1.1 200"));
          }
        }
      }
      String scrape = metrics.scrape();
      assertTrue(scrape.contains("vertx_http_server_requests"), scrape);
    } finally {
      await(vertx.close());
      root.removeHandler(handler);
    }
    assertFalse(warnings.stream().anyMatch(w -> w.contains("already registered")), warnings.toString());
  }

  /** The status line and headers of a GET on a kept-alive connection (the body is read and dropped). */
  private static String get(java.net.Socket s, String path) throws java.io.IOException {
    s.getOutputStream().write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
    java.io.InputStream in = s.getInputStream();
    StringBuilder head = new StringBuilder();
    while (!head.toString().endsWith("\r\n\r\n")) {
      int c = in.read();
      if (c < 0) {
        break;
      }
      head.append((char) c);
    }
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?i)content-length: *(\\d+)").matcher(head);
    if (m.find()) {
      in.readNBytes(Integer.parseInt(m.group(1)));
    }
    return head.toString();
  }

  @Test
  void launcherExitsOnAMissingFileAndPrintsHelp(@TempDir Path dir) throws Exception {
    Result missing = run(List.of(CoordinationMain.class.getName(), dir.resolve("absent.json").toString()));
    assertEquals(2, missing.status, missing.output);
    assertTrue(missing.output.contains("does not exist"), missing.output);
    Result help = run(List.of(CoordinationMain.class.getName(), "--help"));
    assertEquals(0, help.status, help.output);
    assertTrue(help.output.startsWith("usage: "), help.output);
  }

  @Test
  void outOfMemoryEndsTheProcess() throws Exception {
    for (String how : List.of("thread", "reply")) {
      Result r = run(List.of(FatalErrorProbe.class.getName(), how));
      assertEquals(CoordinationMain.EXIT_FATAL, r.status, how + ": " + r.output);
      assertTrue(r.output.contains("fatal: java.lang.OutOfMemoryError"), r.output);
      assertFalse(r.output.contains("survived"), r.output);
    }
  }

  @Test
  void dockerImageExitsOnOutOfMemory() throws Exception {
    String entrypoint = Files.readAllLines(Path.of("../Dockerfile")).stream()
        .filter(l -> l.startsWith("ENTRYPOINT")).findFirst().orElseThrow();
    assertTrue(entrypoint.contains("\"-XX:+ExitOnOutOfMemoryError\""), entrypoint);
  }

  @Test
  void dockerImageBuildsEveryModuleOfTheBuild() throws Exception {
    List<String> dockerfile = Files.readAllLines(Path.of("../Dockerfile"));
    java.util.regex.Matcher modules = java.util.regex.Pattern.compile("<module>([^<]+)</module>")
        .matcher(Files.readString(Path.of("../pom.xml")));
    int count = 0;
    while (modules.find()) {
      String module = modules.group(1);
      assertTrue(dockerfile.contains("COPY " + module + " " + module),
          "the Dockerfile's build stage does not copy the module '" + module + "': the image would not build");
      count++;
    }
    assertTrue(count >= 5, "modules found in the root pom: " + count);
  }

  private record Result(int status, String output) {}

  /** Runs {@code args} in a child JVM with this test's class path; output is stdout and stderr merged. */
  private static Result run(List<String> args) throws Exception {
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx128m", "-cp", System.getProperty("java.class.path")));
    command.addAll(args);
    Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectInput(new File("/dev/null")).start();
    try {
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        throw new AssertionError("the child JVM did not end within 30 s: " + command);
      }
      return new Result(p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
    } finally {
      p.destroyForcibly();
    }
  }

  /** A java.util.logging handler that adds every WARNING or worse to {@code warnings}. */
  private static Handler warningsInto(List<String> warnings) {
    return new Handler() {
      @Override
      public void publish(LogRecord r) {
        if (r.getLevel().intValue() >= java.util.logging.Level.WARNING.intValue()) {
          warnings.add(r.getLoggerName() + ": " + r.getMessage());
        }
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    };
  }
}
