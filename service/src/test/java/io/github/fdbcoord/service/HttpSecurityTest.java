package io.github.fdbcoord.service;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketConnectOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static io.github.fdbcoord.service.ServiceFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Loopback by default; any other binding needs a bearer token, checked on every request and upgrade. */
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
}
