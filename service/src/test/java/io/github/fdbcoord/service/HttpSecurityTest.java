package io.github.fdbcoord.service;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketConnectOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.WebSocket;
import io.vertx.core.http.UpgradeRejectedException;
import io.vertx.ext.web.client.HttpRequest;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static io.github.fdbcoord.service.ServiceFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Loopback by default; any other binding needs a bearer token, checked on every request and upgrade.
 * Token or not, the service answers only the names it is known by (Host), and other sites' pages
 * (Origin, Sec-Fetch-Site, undeclared or non-JSON bodies) can neither change state nor open a WebSocket.
 */
@ExtendWith(VertxExtension.class)
class HttpSecurityTest {

  @Test
  void bindingBeyondLoopbackWithoutTokenIsRefused(Vertx vertx) {
    JsonObject config = ServiceFixture.baseConfig();
    config.getJsonObject("http").put("host", "0.0.0.0");
    Throwable e = assertThrows(Throwable.class, () -> await(vertx.deployVerticle(new CoordinationVerticle(config))));
    assertTrue(String.valueOf(e.getMessage()).contains("http.token"), e.toString());
    assertEquals(0, vertx.deploymentIDs().size());
  }

  @Test
  void defaultsBindToLoopback() {
    CoordinationConfig c = CoordinationConfig.from(new JsonObject());
    assertEquals("127.0.0.1", c.httpHost());
    assertEquals(8080, c.httpPort());
    assertEquals(null, c.httpToken());
    assertTrue(CoordinationConfig.isLoopback("::1"));
    assertTrue(!CoordinationConfig.isLoopback("0.0.0.0"));
    assertTrue(!CoordinationConfig.isLoopback("example.org"));
  }

  @Test
  void tokenIsCheckedOnEveryRequestAndUpgrade(Vertx vertx) {
    JsonObject config = ServiceFixture.baseConfig();
    // All interfaces, so that the token is mandatory; the test still talks over loopback.
    config.getJsonObject("http").put("host", "0.0.0.0").put("token", "s3cret");
    try (ServiceFixture f = ServiceFixture.start(vertx, config, null)) {
      HttpResponse<Buffer> none = await(f.web().get("/health").send());
      assertEquals(401, none.statusCode());
      assertEquals("unauthorized", none.bodyAsJsonObject().getString("error"));
      assertEquals(401, await(f.web().post("/allocators/a/allocate").putHeader("Authorization", "Bearer wrong")
          .send()).statusCode());
      assertEquals(401, await(f.web().get("/nothing").send()).statusCode(), "before routing: no information leak");
      assertEquals(200, await(f.web().get("/health").putHeader("Authorization", "Bearer s3cret").send()).statusCode());
      assertEquals(200, await(f.web().post("/allocators/a/allocate").putHeader("Authorization", "Bearer s3cret")
          .send()).statusCode());

      WebSocketClient http = vertx.createWebSocketClient();
      WebSocketConnectOptions ws = new WebSocketConnectOptions().setHost("127.0.0.1")
          .setPort(f.service.httpPort()).setURI("/ws");
      Throwable refused = assertThrows(Throwable.class, () -> await(http.connect(ws)));
      assertTrue(String.valueOf(refused.getMessage()).contains("401") || String.valueOf(refused).contains("401"),
          refused.toString());
      var socket = await(http.connect(new WebSocketConnectOptions(ws).addHeader("Authorization", "Bearer s3cret")));
      await(socket.close());
      await(http.close());
    }
  }

  // ---------------------------------------------------------------- browsers of other sites

  private static JsonObject release(String owner) {
    return new JsonObject().put("owner", owner);
  }

  /** The holder of {@code mutex}, read without Origin (as a program reads it). */
  private static String holder(ServiceFixture f, String mutex) {
    HttpResponse<Buffer> r = await(f.web().get("/mutexes/" + mutex).send());
    assertEquals(200, r.statusCode(), r.bodyAsString());
    JsonObject h = r.bodyAsJsonObject().getJsonObject("owner");
    return h == null ? null : h.getString("owner");
  }

  private static void assertRefused(HttpResponse<Buffer> r, int status, String error, String configKey) {
    assertEquals(status, r.statusCode(), r.bodyAsString());
    JsonObject body = r.bodyAsJsonObject();
    assertEquals(error, body.getString("error"), body.encode());
    assertEquals(configKey, body.getString("configKey"), body.encode());
    assertTrue(body.getString("message").contains(configKey), body.encode());
  }

  private static String own(ServiceFixture f) {
    return "http://127.0.0.1:" + f.service.httpPort();
  }

  @Test
  void hostsOtherThanLoopbackAndTheBoundHostAreRefused(Vertx vertx) {
    try (ServiceFixture f = ServiceFixture.start(vertx)) {
      int port = f.service.httpPort();
      HttpResponse<Buffer> rebound = await(f.web().get("/health").putHeader("Host", "attacker.example:" + port).send());
      assertRefused(rebound, 421, "unknown_host", "http.allowedHosts");
      assertEquals("Host: attacker.example", rebound.bodyAsJsonObject().getString("refused"));
      assertRefused(await(f.web().get("/dashboard/").putHeader("Host", "attacker.example").send()), 421,
          "unknown_host", "http.allowedHosts");
      assertRefused(await(f.web().post("/allocators/a/allocate").putHeader("Host", "attacker.example").send()), 421,
          "unknown_host", "http.allowedHosts");
      for (String host : new String[] {"localhost:" + port, "LOCALHOST", "127.0.0.1:1", "[::1]:" + port}) {
        assertEquals(200, await(f.web().get("/health").putHeader("Host", host).send()).statusCode(), host);
      }
    }
    JsonObject config = ServiceFixture.baseConfig();
    config.getJsonObject("http").put("allowedHosts", new JsonArray().add("coord.internal"));
    try (ServiceFixture f = ServiceFixture.start(vertx, config, null)) {
      assertEquals(200, await(f.web().get("/health").putHeader("Host", "coord.internal:8080").send()).statusCode());
      assertRefused(await(f.web().get("/health").putHeader("Host", "attacker.example").send()), 421,
          "unknown_host", "http.allowedHosts");
    }
    config = ServiceFixture.baseConfig();
    config.getJsonObject("http").put("allowedHosts", new JsonArray().add("*"));
    try (ServiceFixture f = ServiceFixture.start(vertx, config, null)) {
      assertEquals(200, await(f.web().get("/health").putHeader("Host", "anything.example").send()).statusCode());
    }
  }

  @Test
  void aPageOfAnotherOriginCannotChangeStateWithoutAToken(Vertx vertx) {
    try (ServiceFixture f = ServiceFixture.start(vertx)) {
      assertEquals(200, await(f.web().post("/mutexes/m/acquire").sendJsonObject(release("victim"))).statusCode());

      HttpResponse<Buffer> foreign = await(f.web().post("/mutexes/m/release").putHeader("Origin", "http://evil.example")
          .sendJsonObject(release("victim")));
      assertRefused(foreign, 403, "forbidden_origin", "http.allowedOrigins");
      assertEquals("Origin: http://evil.example", foreign.bodyAsJsonObject().getString("refused"));
      // Another port of the same machine is another origin.
      assertRefused(await(f.web().post("/mutexes/m/release").putHeader("Origin", "http://127.0.0.1:1")
          .sendJsonObject(release("victim"))), 403, "forbidden_origin", "http.allowedOrigins");
      assertRefused(await(f.web().post("/mutexes/m/release").putHeader("Origin", "null")
          .sendJsonObject(release("victim"))), 403, "forbidden_origin", "http.allowedOrigins");
      assertRefused(await(f.web().post("/mutexes/m/release").putHeader("Sec-Fetch-Site", "cross-site")
          .sendJsonObject(release("victim"))), 403, "cross_site_request", "http.allowedOrigins");
      assertRefused(await(f.web().request(HttpMethod.DELETE, "/directories/x").putHeader("Origin", "http://evil.example")
          .send()), 403, "forbidden_origin", "http.allowedOrigins");
      // What a page may send to another origin without a preflight: forms, text, undeclared blobs.
      String body = release("victim").encode();
      for (String type : new String[] {"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", null}) {
        HttpRequest<Buffer> req = f.web().post("/mutexes/m/release");
        if (type != null) {
          req.putHeader("Content-Type", type);
        }
        HttpResponse<Buffer> r = await(req.sendBuffer(Buffer.buffer(body)));
        assertEquals(415, r.statusCode(), type + ": " + r.bodyAsString());
        assertEquals("unsupported_media_type", r.bodyAsJsonObject().getString("error"));
      }
      assertEquals("victim", holder(f, "m"), "no refused request released the mutex");
      // Reading is not changing: a foreign page's GET gets its answer (which the browser keeps from it: no CORS).
      assertEquals(200, await(f.web().get("/mutexes/m").putHeader("Origin", "http://evil.example").send()).statusCode());

      // The server's own page, and programs (no Origin), change state.
      assertEquals(200, await(f.web().post("/allocators/a/allocate").putHeader("Origin", own(f))
          .putHeader("Sec-Fetch-Site", "same-origin").sendJsonObject(new JsonObject())).statusCode());
      assertEquals(200, await(f.web().post("/allocators/a/allocate").putHeader("Origin", "http://localhost:" + f.service.httpPort())
          .putHeader("Host", "localhost:" + f.service.httpPort()).sendJsonObject(new JsonObject())).statusCode());
      assertEquals(200, await(f.web().post("/mutexes/m/release").putHeader("Origin", own(f))
          .sendJsonObject(release("victim"))).statusCode());
      assertEquals(null, holder(f, "m"));
    }
  }

  @Test
  void allowedOriginsMayChangeState(Vertx vertx) {
    JsonObject config = ServiceFixture.baseConfig();
    config.getJsonObject("http").put("allowedOrigins", new JsonArray().add("https://Ops.example.com"));
    try (ServiceFixture f = ServiceFixture.start(vertx, config, null)) {
      assertEquals(200, await(f.web().post("/allocators/a/allocate").putHeader("Origin", "https://ops.example.com")
          .putHeader("Sec-Fetch-Site", "cross-site").sendJsonObject(new JsonObject())).statusCode());
      assertRefused(await(f.web().post("/allocators/a/allocate").putHeader("Origin", "http://ops.example.com")
          .sendJsonObject(new JsonObject())), 403, "forbidden_origin", "http.allowedOrigins");
    }
    config = ServiceFixture.baseConfig();
    config.getJsonObject("http").put("allowedOrigins", new JsonArray().add("*"));
    try (ServiceFixture f = ServiceFixture.start(vertx, config, null)) {
      assertEquals(200, await(f.web().post("/allocators/a/allocate").putHeader("Origin", "http://evil.example")
          .sendJsonObject(new JsonObject())).statusCode());
    }
  }

  @Test
  void allowListsAreChecked() {
    for (JsonObject http : new JsonObject[] {
        new JsonObject().put("allowedOrigins", new JsonArray().add("https://ops.example.com/")),
        new JsonObject().put("allowedOrigins", new JsonArray().add("ops.example.com")),
        new JsonObject().put("allowedOrigins", "https://ops.example.com"),
        new JsonObject().put("allowedHosts", new JsonArray().add(""))}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> CoordinationConfig.from(new JsonObject().put("http", http)));
      assertTrue(e.getMessage().startsWith("http.allowed"), e.getMessage());
    }
    CoordinationConfig c = CoordinationConfig.from(new JsonObject().put("http", new JsonObject()
        .put("allowedHosts", new JsonArray().add("Coord.Internal")).put("allowedOrigins", new JsonArray())));
    assertEquals(java.util.List.of("coord.internal"), c.httpOptions().getAllowedHosts());
    assertEquals(java.util.List.of(), c.httpOptions().getAllowedOrigins());
  }

  @Test
  void webSocketsFromAnotherOriginAreRefused(Vertx vertx) {
    JsonObject config = ServiceFixture.baseConfig();
    config.getJsonObject("http").put("allowedOrigins", new JsonArray().add("https://ops.example.com"));
    try (ServiceFixture f = ServiceFixture.start(vertx, config, null)) {
      WebSocketClient http = vertx.createWebSocketClient();
      WebSocketConnectOptions ws = new WebSocketConnectOptions().setHost("127.0.0.1")
          .setPort(f.service.httpPort()).setURI("/ws");
      for (String origin : new String[] {"http://evil.example", "http://127.0.0.1:1", "null"}) {
        Throwable refused = assertThrows(Throwable.class,
            () -> await(http.connect(new WebSocketConnectOptions(ws).addHeader("Origin", origin))));
        UpgradeRejectedException rejected = findCause(refused, UpgradeRejectedException.class);
        assertEquals(403, rejected.getStatus(), origin);
        assertTrue(rejected.getBody().toString().contains("http.allowedOrigins"), rejected.getBody().toString());
      }
      for (String origin : new String[] {own(f), "https://ops.example.com", null}) {
        // Without the option, the client drops every Origin header, the one given too.
        WebSocketConnectOptions o = new WebSocketConnectOptions(ws).setAllowOriginHeader(origin != null);
        if (origin != null) {
          o.addHeader("Origin", origin);
        }
        WebSocket socket = await(http.connect(o));
        assertTrue(!socket.isClosed(), String.valueOf(origin));
        await(socket.close());
      }
      // Vert.x's own client sends the target's origin by default: a program is its own page.
      await(await(http.connect(new WebSocketConnectOptions(ws))).close());
      await(http.close());
    }
  }

  private static <T extends Throwable> T findCause(Throwable t, Class<T> type) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (type.isInstance(c)) {
        return type.cast(c);
      }
    }
    throw new AssertionError("no " + type.getSimpleName() + " in " + t, t);
  }
}
