package io.github.fdbcoord.service.process;

import io.github.fdbcoord.testing.SharedFdb;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.WebSocket;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketConnectOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two service processes ({@code CoordinationMain}, {@code store.engine: cluster}) on one real
 * FoundationDB ({@link SharedFdb}) and one root directory: every route family answers on each, and
 * they share one store: a string interned through one resolves through the other, a lock taken
 * through one is seen (state, WebSocket events, queue) through the other. Skipped, saying why,
 * where there is no real FoundationDB.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@Tag("slow")
class RealClusterServiceTest {
  private static final List<String> ROOT = List.of("fdb-coord-test", "service-" + UUID.randomUUID());
  private static final List<String> DIRS = List.of("fdb-coord-test", "service-dirs-" + UUID.randomUUID());

  private static Vertx vertx;
  private static WebClient web;
  private static ServiceProcess one;
  private static ServiceProcess two;

  @BeforeAll
  static void startServices() throws Exception {
    JsonObject config = ServiceProcess.clusterConfig(SharedFdb.clusterFileOrAbort(), ROOT);
    one = ServiceProcess.start("service-1", config);
    two = ServiceProcess.start("service-2", config);
    long started = System.nanoTime();
    one.awaitReady();
    two.awaitReady();
    System.out.printf("two service processes on FoundationDB ready in %d ms%n",
        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
    vertx = Vertx.vertx();
    web = WebClient.create(vertx);
  }

  @AfterAll
  static void stopServices() throws Exception {
    if (web != null) {
      web.close();
      await(vertx.close());
    }
    for (ServiceProcess s : new ServiceProcess[] {one, two}) {
      if (s != null) {
        s.close();
      }
    }
  }

  @Test
  void healthAndDashboardAnswerOnBoth() {
    for (ServiceProcess s : List.of(one, two)) {
      assertEquals("UP", ok(s, HttpMethod.GET, "/health", null, 200).getString("status"));
      HttpResponse<Buffer> dashboard = call(s, HttpMethod.GET, "/dashboard/", null);
      assertEquals(200, dashboard.statusCode());
      assertTrue(dashboard.bodyAsString().contains("<html"), "the dashboard's page");
      assertEquals(200, call(s, HttpMethod.GET, "/metrics", null).statusCode());
    }
  }

  @Test
  void aDirectoryCreatedThroughOneOpensThroughTheOther() {
    List<String> path = new java.util.ArrayList<>(DIRS);
    path.add("orders");
    JsonObject created = ok(one, HttpMethod.POST, "/directories", new JsonObject().put("path", new JsonArray(path))
        .put("layer", "docs"), 201);
    JsonObject opened = ok(two, HttpMethod.GET, dirUrl(path), null, 200);
    assertEquals(created.getString("prefix"), opened.getString("prefix"));
    assertEquals(new JsonArray().add("orders"), ok(two, HttpMethod.GET, dirUrl(DIRS) + "?list=true", null, 200)
        .getJsonArray("names"));
    assertTrue(ok(two, HttpMethod.DELETE, dirUrl(DIRS), null, 200).getBoolean("removed"));
  }

  @Test
  void bothAllocateFromOneAllocatorWithoutCollisions() {
    java.util.Set<Long> values = new java.util.HashSet<>();
    for (int i = 0; i < 20; i++) {
      ServiceProcess s = i % 2 == 0 ? one : two;
      assertTrue(values.add(ok(s, HttpMethod.POST, "/allocators/orders/allocate", null, 200).getLong("value")));
    }
    assertTrue(ok(two, HttpMethod.POST, "/allocators/orders/allocate-prefix", null, 200).getString("prefix")
        .matches("([0-9a-f]{2})+"));
  }

  @Test
  void aStringInternedThroughOneResolvesThroughTheOther() {
    JsonArray strings = new JsonArray().add("alpha-" + UUID.randomUUID()).add("beta");
    JsonArray ids = ok(one, HttpMethod.POST, "/interners/uris/intern", new JsonObject().put("strings", strings), 200)
        .getJsonArray("ids");
    assertEquals(strings, ok(two, HttpMethod.POST, "/interners/uris/lookup", new JsonObject().put("ids", ids), 200)
        .getJsonArray("strings"));
    assertEquals(ids, ok(two, HttpMethod.POST, "/interners/uris/resolve", new JsonObject().put("strings", strings), 200)
        .getJsonArray("ids"));
    assertEquals(ids, ok(two, HttpMethod.POST, "/interners/uris/intern", new JsonObject().put("strings", strings), 200)
        .getJsonArray("ids"), "interning again through the other gives the same ids");
    assertTrue(ok(one, HttpMethod.GET, "/interners", null, 200).getJsonArray("namespaces").contains("uris"));
  }

  @Test
  void aLockTakenThroughOneIsSeenAndHandedOffThroughTheOther() throws Exception {
    BlockingQueue<JsonObject> events = new LinkedBlockingQueue<>();
    // Held, and closed at the end: Vert.x closes a client that becomes unreachable, with its connections
    // (a collection during the handshake once closed this one: "Connection closed while handshake in process").
    WebSocketClient wsClient = vertx.createWebSocketClient();
    WebSocket ws = await(wsClient.connect(new WebSocketConnectOptions().setHost("127.0.0.1")
        .setPort(two.port()).setURI("/ws")));
    ws.textMessageHandler(t -> events.add(new JsonObject(t)));
    await(ws.writeTextMessage(new JsonObject().put("subscribe", new JsonArray().add("jobs")).encode()));
    assertEquals("subscribed", next(events, "subscribed").getString("type"));

    JsonObject a = ok(one, HttpMethod.POST, "/mutexes/jobs/acquire", new JsonObject().put("owner", "a"), 200);
    assertTrue(a.getBoolean("held"));
    JsonObject acquired = next(events, "lock");
    assertEquals("ACQUIRED", acquired.getString("event"));
    assertEquals("a", acquired.getString("owner"));
    assertEquals(a.getString("token"), acquired.getString("token"));

    JsonObject state = ok(two, HttpMethod.GET, "/mutexes/jobs", null, 200);
    assertEquals("a", state.getJsonObject("owner").getString("owner"));
    JsonObject b = ok(two, HttpMethod.POST, "/mutexes/jobs/acquire", new JsonObject().put("owner", "b").put("wait", false), 200);
    assertFalse(b.getBoolean("held"));
    assertEquals(1, b.getInteger("position"));

    ok(one, HttpMethod.POST, "/mutexes/jobs/release", new JsonObject().put("owner", "a"), 200);
    JsonObject handedOff = next(events, "lock");
    while (!"b".equals(handedOff.getString("owner"))) {
      handedOff = next(events, "lock");
    }
    assertNotEquals(a.getString("token"), handedOff.getString("token"));
    assertTrue(handedOff.getString("token").compareTo(a.getString("token")) > 0, "the fencing token grows");
    assertEquals("b", ok(one, HttpMethod.GET, "/mutexes/jobs", null, 200).getJsonObject("owner").getString("owner"));
    ok(two, HttpMethod.POST, "/mutexes/jobs/release", new JsonObject().put("owner", "b"), 200);
    await(ws.close());
    await(wsClient.close());
  }

  private static JsonObject next(BlockingQueue<JsonObject> events, String type) throws InterruptedException {
    while (true) {
      JsonObject m = events.poll(15, TimeUnit.SECONDS);
      assertNotNull(m, "no WebSocket message of type " + type + " within 15 s");
      if (type.equals(m.getString("type"))) {
        return m;
      }
    }
  }

  private static String dirUrl(List<String> path) {
    StringBuilder b = new StringBuilder("/directories");
    for (String p : path) {
      b.append('/').append(URLEncoder.encode(p, StandardCharsets.UTF_8).replace("+", "%20"));
    }
    return b.toString();
  }

  private static HttpResponse<Buffer> call(ServiceProcess s, HttpMethod method, String uri, JsonObject body) {
    var request = web.request(method, s.port(), "127.0.0.1", uri);
    return await(body == null ? request.send() : request.sendJsonObject(body));
  }

  private static JsonObject ok(ServiceProcess s, HttpMethod method, String uri, JsonObject body, int status) {
    HttpResponse<Buffer> r = call(s, method, uri, body);
    assertEquals(status, r.statusCode(), () -> method + " " + uri + " -> " + r.bodyAsString());
    return r.bodyAsJsonObject();
  }

  static <T> T await(Future<T> f) {
    try {
      return f.await(30, TimeUnit.SECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      throw new AssertionError("timed out waiting for " + f, e);
    }
  }
}
