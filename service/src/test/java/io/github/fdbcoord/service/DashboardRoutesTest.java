package io.github.fdbcoord.service;

import io.github.fdbcoord.service.http.DashboardRoutes;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.WebSocket;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketConnectOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static io.github.fdbcoord.service.ServiceFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The routes the dashboard added (docs/dashboard.md): the redirect and static files, /nodes,
 * interner stats and pages of strings, mutex inspection; their event-bus actions; the token rules,
 * including the WebSocket token a browser offers as a sub-protocol.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DashboardRoutesTest {

  private static HttpResponse<Buffer> call(ServiceFixture f, HttpMethod method, String uri, String body, String token) {
    var req = f.web().request(method, uri).followRedirects(false);
    if (token != null) {
      req.putHeader("Authorization", "Bearer " + token);
    }
    return await(body == null ? req.send()
        : req.putHeader("Content-Type", "application/json").sendBuffer(Buffer.buffer(body)));
  }

  private static JsonObject ok(ServiceFixture f, String uri) {
    HttpResponse<Buffer> r = call(f, HttpMethod.GET, uri, null, null);
    assertEquals(200, r.statusCode(), () -> "GET " + uri + " -> " + r.bodyAsString());
    assertEquals("application/json", r.getHeader("content-type"));
    return r.bodyAsJsonObject();
  }

  private static JsonObject error(ServiceFixture f, String uri, int status, String reason) {
    HttpResponse<Buffer> r = call(f, HttpMethod.GET, uri, null, null);
    assertEquals(status, r.statusCode(), () -> "GET " + uri + " -> " + r.bodyAsString());
    JsonObject json = r.bodyAsJsonObject();
    assertEquals(reason, json.getString("error"), json::encode);
    assertNotNull(json.getString("message"));
    assertFalse(json.getString("message").contains("\tat "), "no stack trace");
    return json;
  }

  @Test
  void rootRedirectsToTheDashboardAndItsFilesAreServedFromTheJar(Vertx vertx) {
    try (ServiceFixture f = ServiceFixture.start(vertx)) {
      HttpResponse<Buffer> root = call(f, HttpMethod.GET, "/", null, null);
      assertEquals(302, root.statusCode());
      assertEquals("/dashboard/", root.getHeader("location"));
      assertEquals("/dashboard/", call(f, HttpMethod.GET, "/dashboard", null, null).getHeader("location"));

      HttpResponse<Buffer> page = call(f, HttpMethod.GET, "/dashboard/", null, null);
      assertEquals(200, page.statusCode());
      assertTrue(page.getHeader("content-type").startsWith("text/html"), page.getHeader("content-type"));
      assertTrue(page.bodyAsString().contains("<script src=\"dashboard.js\""));
      assertTrue(page.getHeader("content-security-policy").contains("default-src 'self'"));
      assertFalse(page.bodyAsString().contains("http://") || page.bodyAsString().contains("https://"),
          "nothing is fetched from elsewhere");
      for (String file : List.of("dashboard.js", "dashboard.css")) {
        HttpResponse<Buffer> r = call(f, HttpMethod.GET, "/dashboard/" + file, null, null);
        assertEquals(200, r.statusCode(), file);
        // The one absolute URL is the SVG namespace name, which is never fetched.
        Set<String> urls = new HashSet<>();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("https?://[^'\"\\s)]+").matcher(r.bodyAsString());
        while (m.find()) {
          urls.add(m.group());
        }
        assertTrue(Set.of("http://www.w3.org/2000/svg").containsAll(urls), file + " refers to " + urls);
      }
      HttpResponse<Buffer> missing = call(f, HttpMethod.GET, "/dashboard/missing.js", null, null);
      assertEquals(404, missing.statusCode());
      assertEquals("not_found", missing.bodyAsJsonObject().getString("error"));
      assertEquals(404, call(f, HttpMethod.GET, "/dashboard/../pom.xml", null, null).statusCode());
    }
  }

  @Test
  void nodesListsThisNode(Vertx vertx) {
    try (ServiceFixture f = ServiceFixture.start(vertx)) {
      JsonObject answer = ok(f, "/nodes");
      JsonArray nodes = answer.getJsonArray("nodes");
      assertEquals(1, nodes.size());
      assertEquals(new JsonArray(), answer.getJsonArray("departed"), "alone, no member ever went");
      JsonObject self = nodes.getJsonObject(0);
      assertTrue(self.getBoolean("self"));
      assertEquals("UP", self.getString("status"));
      assertFalse(self.getString("id").isEmpty());
      assertTrue(self.getLong("uptimeMs") >= 0);
      assertNotNull(self.getString("store"));
      assertEquals(1500L, self.getLong("leaseMs"));
      assertFalse(self.getBoolean("clustered"));
      assertEquals("127.0.0.1:" + f.service.httpPort(), self.getString("http"));
      // What a person maps the node to: its machine and process (no name configured: host:pid).
      String host = self.getString("host");
      assertFalse(host == null || host.isEmpty(), self.encode());
      assertEquals(ProcessHandle.current().pid(), self.getLong("pid"), self.encode());
      assertEquals(host + ":" + ProcessHandle.current().pid(), self.getString("name"));
      assertNotNull(java.time.Instant.parse(self.getString("startedAt")));
      long later = ok(f, "/nodes").getJsonArray("nodes").getJsonObject(0).getLong("uptimeMs");
      assertTrue(later >= self.getLong("uptimeMs"), "uptime grows");
    }
  }

  @Test
  void nodesNamesThisNodeByItsConfiguredName(Vertx vertx) {
    JsonObject config = ServiceFixture.baseConfig().put("nodeName", "orders-eu-1");
    try (ServiceFixture f = ServiceFixture.start(vertx, config, null)) {
      JsonObject self = ok(f, "/nodes").getJsonArray("nodes").getJsonObject(0);
      assertEquals("orders-eu-1", self.getString("name"), self.encode());
      assertEquals(ProcessHandle.current().pid(), self.getLong("pid"), self.encode());
    }
  }

  private static final long QUEUE_WAIT_MS = 1_000;

  /**
   * An acquire that waits in the queue is a slow grant, not a slow service: its wait is the figure
   * {@code fdbcoord_acquire_wait_seconds}, and the request's latency is what the service spent on it.
   */
  @Test
  void anAcquiresWaitIsItsOwnFigureAndNotRequestLatency(Vertx vertx) throws Exception {
    try (ServiceFixture f = ServiceFixture.start(vertx)) {
      assertEquals(200, call(f, HttpMethod.POST, "/mutexes/orders/acquire", "{\"owner\":\"a\"}", null).statusCode());
      var waiting = f.web().post("/mutexes/orders/acquire").putHeader("Content-Type", "application/json")
          .sendBuffer(Buffer.buffer("{\"owner\":\"b\"}"));
      WaiterLivenessTest.eventually("b waits in the queue", java.time.Duration.ofSeconds(20),
          () -> ok(f, "/mutexes/orders/inspect").getJsonArray("queue").size() == 1);
      // The holder lets go a fixed time after b is queued: that time is b's wait.
      vertx.setTimer(QUEUE_WAIT_MS, id -> f.client.request(f.client.mutexAddress(), "release",
          new JsonObject().put("name", "orders").put("owner", "a")));
      HttpResponse<Buffer> granted = await(waiting);
      assertEquals(200, granted.statusCode(), granted.bodyAsString());
      assertTrue(granted.bodyAsJsonObject().getBoolean("held"));

      String metrics = call(f, HttpMethod.GET, "/metrics", null, null).bodyAsString();
      double latency = sum(metrics, "fdbcoord_http_requests_seconds_sum{route=\"/mutexes/:name/acquire\"");
      assertTrue(latency < QUEUE_WAIT_MS / 1000.0, "the two acquires' request latency is the service's time, not b's"
          + " wait in the queue (" + QUEUE_WAIT_MS + " ms): " + latency + " s");
      double waited = sum(metrics, "fdbcoord_acquire_wait_seconds_sum");
      assertTrue(waited >= QUEUE_WAIT_MS / 1000.0, "b's wait is counted as acquire wait: " + waited + " s");
      assertTrue(metrics.contains("fdbcoord_acquire_wait_seconds_bucket{"), "the wait has percentiles too");
    }
  }

  /** The sum of the samples whose line starts with {@code prefix}. */
  private static double sum(String metrics, String prefix) {
    return metrics.lines().filter(l -> l.startsWith(prefix))
        .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
  }

  @Test
  void internerStatsAndPagesOfStrings(Vertx vertx) {
    try (ServiceFixture f = ServiceFixture.start(vertx)) {
      List<String> strings = new ArrayList<>();
      for (int i = 0; i < 45; i++) {
        strings.add("s" + i);
      }
      await(f.client.intern("words", strings.subList(0, 30)));
      await(f.client.intern("words", strings.subList(25, 45)));

      JsonObject stats = ok(f, "/interners/words/stats");
      assertEquals("words", stats.getString("namespace"));
      assertEquals(45L, stats.getLong("strings"));
      assertTrue(stats.getLong("sequencesInUse") >= 1 && stats.getLong("sequencesInUse") <= 2, stats.encode());
      assertEquals(16, stats.getInteger("sequenceBits"));

      Set<String> seen = new HashSet<>();
      String after = null;
      int pages = 0;
      String previousId = "0";
      do {
        JsonObject page = ok(f, "/interners/words/strings?limit=20" + (after == null ? "" : "&after=" + after));
        pages++;
        for (Object o : page.getJsonArray("entries")) {
          JsonObject e = (JsonObject) o;
          assertTrue(Long.compareUnsigned(Long.parseUnsignedLong(previousId), Long.parseUnsignedLong(e.getString("id"))) < 0,
              "id order");
          previousId = e.getString("id");
          assertTrue(seen.add(e.getString("string")), "each string once");
          JsonObject back = f.request(f.client.internerAddress(), "lookup", new JsonObject().put("namespace", "words")
              .put("ids", new JsonArray().add(e.getString("id"))));
          assertEquals(e.getString("string"), back.getJsonArray("strings").getString(0));
        }
        after = page.getString("nextAfter");
      } while (after != null);
      assertEquals(3, pages, "20 + 20 + 5");
      assertEquals(new HashSet<>(strings), seen);
      assertEquals(45, ok(f, "/interners/words/strings").getJsonArray("entries").size(), "default limit 100");

      error(f, "/interners/nope/stats", 404, "not_found");
      error(f, "/interners/nope/strings", 404, "not_found");
      error(f, "/interners/" + "x".repeat(300) + "/stats", 400, "bad_request");
      error(f, "/interners/words/strings?limit=ten", 400, "bad_request");
      error(f, "/interners/words/strings?limit=0", 400, "bad_request");
      error(f, "/interners/words/strings?limit=201", 400, "bad_request");
      error(f, "/interners/words/strings?after=abc", 400, "bad_request");
      error(f, "/interners/words/strings?after=-1", 400, "bad_request");
      f.failure(f.client.internerAddress(), "stats", new JsonObject(), 400, "bad_request");
      f.failure(f.client.internerAddress(), "list", new JsonObject().put("namespace", "words").put("limit", "x"),
          400, "bad_request");
    }
  }

  private static final long LONG_LEASE_MS = 60_000;

  @Test
  void mutexInspectionShowsHolderQueueAgeAndLease(Vertx vertx) throws InterruptedException {
    // Nobody heartbeats owner "a": with the fixture's 1.5 s lease, a machine that stalled this thread
    // for a second between the grant and the inspection saw the lease expire and "b" hold the mutex.
    JsonObject config = ServiceFixture.baseConfig();
    config.getJsonObject("mutex").put("leaseMs", LONG_LEASE_MS);
    try (ServiceFixture f = ServiceFixture.start(vertx, config, null)) {
      JsonObject free = ok(f, "/mutexes/jobs/inspect");
      assertFalse(free.getBoolean("held"));
      assertNull(free.getValue("heldMs"));
      assertNull(free.getValue("leaseLeftMs"));

      JsonObject grant = f.request(f.client.mutexAddress(), "tryAcquire", new JsonObject().put("name", "jobs").put("owner", "a"));
      f.request(f.client.mutexAddress(), "tryAcquire", new JsonObject().put("name", "jobs").put("owner", "b"));
      Thread.sleep(300);
      JsonObject held = ok(f, "/mutexes/jobs/inspect");
      assertTrue(held.getBoolean("held"));
      assertEquals("a", held.getJsonObject("owner").getString("owner"));
      assertEquals(grant.getString("token"), held.getJsonObject("owner").getString("token"));
      assertEquals("b", held.getJsonArray("queue").getJsonObject(0).getString("owner"));
      assertTrue(held.getLong("heldMs") >= 250, held.encode());
      long lease = held.getLong("leaseLeftMs");
      assertTrue(lease >= 0 && lease <= LONG_LEASE_MS - 100, "the reaper has counted at least 300 ms of the lease: " + lease);

      error(f, "/mutexes/" + "x".repeat(3000) + "/inspect", 400, "bad_request");
      f.failure(f.client.mutexAddress(), "inspect", new JsonObject(), 400, "bad_request");
    }
  }

  @Test
  void httpLatencyPercentilesArePublished(Vertx vertx) {
    try (ServiceFixture f = ServiceFixture.start(vertx)) {
      ok(f, "/nodes");
      String metrics = call(f, HttpMethod.GET, "/metrics", null, null).bodyAsString();
      // The dashboard computes its percentiles from the buckets, between two scrapes.
      assertTrue(metrics.contains("fdbcoord_http_requests_seconds_bucket{route=\"/nodes\",status=\"200\",le=\"+Inf\"} 1"),
          metrics);
    }
  }

  private static final String TOKEN = "s3cret";
  private static final List<String> DATA_ROUTES = List.of("/nodes", "/interners/words/stats", "/interners/words/strings",
      "/mutexes/m/inspect", "/mutexes", "/metrics", "/events/position");

  private static ServiceFixture startWithToken(Vertx vertx) {
    JsonObject config = ServiceFixture.baseConfig();
    config.getJsonObject("http").put("token", TOKEN);
    return ServiceFixture.start(vertx, config, null);
  }

  private static WebSocketConnectOptions webSocket(ServiceFixture f) {
    return new WebSocketConnectOptions().setHost("127.0.0.1").setPort(f.service.httpPort()).setURI("/ws");
  }

  @Test
  void theDashboardPageAndTheRedirectNeedNoToken(Vertx vertx) {
    try (ServiceFixture f = startWithToken(vertx)) {
      assertEquals(200, call(f, HttpMethod.GET, "/dashboard/", null, null).statusCode(),
          "the page itself holds no data: a browser's navigation cannot carry a token");
      assertEquals(302, call(f, HttpMethod.GET, "/", null, null).statusCode());
    }
  }

  @Test
  void dataRoutesRefuseARequestWithoutTheToken(Vertx vertx) {
    try (ServiceFixture f = startWithToken(vertx)) {
      for (String uri : DATA_ROUTES) {
        assertEquals(401, call(f, HttpMethod.GET, uri, null, null).statusCode(), uri);
      }
    }
  }

  @Test
  void dataRoutesRefuseAWrongToken(Vertx vertx) {
    try (ServiceFixture f = startWithToken(vertx)) {
      for (String uri : DATA_ROUTES) {
        assertEquals(401, call(f, HttpMethod.GET, uri, null, "wrong").statusCode(), uri);
      }
    }
  }

  @Test
  void dataRoutesAnswerARequestWithTheToken(Vertx vertx) {
    try (ServiceFixture f = startWithToken(vertx)) {
      assertEquals(200, call(f, HttpMethod.GET, "/nodes", null, TOKEN).statusCode());
      assertEquals(200, call(f, HttpMethod.GET, "/events/position", null, TOKEN).statusCode());
    }
  }

  @Test
  void theWebSocketTakesTheTokenAsASubProtocolAndNeverEchoesIt(Vertx vertx) {
    try (ServiceFixture f = startWithToken(vertx)) {
      WebSocketClient client = vertx.createWebSocketClient();
      WebSocket socket = await(client.connect(new WebSocketConnectOptions(webSocket(f))
          .addSubProtocol(DashboardRoutes.WEBSOCKET_PROTOCOL).addSubProtocol(bearerProtocol(TOKEN))));
      assertEquals(DashboardRoutes.WEBSOCKET_PROTOCOL, socket.subProtocol(), "the token is never echoed");
      await(socket.close());
      await(client.close());
    }
  }

  @Test
  void theWebSocketRefusesAWrongOrMalformedToken(Vertx vertx) {
    try (ServiceFixture f = startWithToken(vertx)) {
      WebSocketClient client = vertx.createWebSocketClient();
      for (String bad : List.of(bearerProtocol("wrong"), "fdbcoord.bearer.%%%", "fdbcoord.bearer.")) {
        Throwable refused = assertThrows(Throwable.class, () -> await(client.connect(new WebSocketConnectOptions(webSocket(f))
            .addSubProtocol(DashboardRoutes.WEBSOCKET_PROTOCOL).addSubProtocol(bad))));
        assertTrue(String.valueOf(refused).contains("401"), bad + ": " + refused);
      }
      await(client.close());
    }
  }

  private static String bearerProtocol(String token) {
    return "fdbcoord.bearer." + Base64.getUrlEncoder().withoutPadding()
        .encodeToString(token.getBytes(StandardCharsets.UTF_8));
  }
}
