package io.github.fdbcoord.service;

import io.github.fdbcoord.service.eventbus.FailureCodes;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.github.fdbcoord.service.ServiceFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The HTTP API's small defects of issue 12 point 7, one case each. */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HttpEdgeCasesTest {

  @Test
  void bodiesAreJsonAndOtherTypesAreRefusedClearly(Vertx vertx) {
    try (ServiceFixture f = ServiceFixture.start(vertx)) {
      List<String> strings = new ArrayList<>();
      for (int i = 0; i < 100; i++) {
        strings.add("string-number-" + i);
      }
      String body = new JsonObject().put("strings", new JsonArray(strings)).encode();
      assertTrue(body.length() >= 1024, "the issue's case: " + body.length() + " bytes");
      // curl -d sends application/x-www-form-urlencoded.
      for (String type : List.of("application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
          "text/plain")) {
        for (String b : List.of(body, "{\"strings\": [\"a\"]}")) {
          HttpResponse<Buffer> r = await(f.web().post("/interners/ns/intern").putHeader("Content-Type", type)
              .sendBuffer(Buffer.buffer(b)));
          assertEquals(415, r.statusCode(), type + ": " + r.bodyAsString());
          assertEquals("unsupported_media_type", r.bodyAsJsonObject().getString("error"));
          assertTrue(r.bodyAsJsonObject().getString("message").contains("Content-Type: application/json"),
              r.bodyAsString());
        }
      }
      for (String type : List.of("application/json", "application/json; charset=utf-8")) {
        HttpResponse<Buffer> ok = await(f.web().post("/interners/ns/intern").putHeader("Content-Type", type)
            .sendBuffer(Buffer.buffer(body)));
        assertEquals(200, ok.statusCode(), ok.bodyAsString());
        assertEquals(100, ok.bodyAsJsonObject().getJsonArray("ids").size());
      }
      // No type at all: refused too (a page of another site sends a body so without a preflight);
      // no body with a form type: nothing to refuse.
      HttpResponse<Buffer> undeclared = await(f.web().post("/interners/ns/intern").sendBuffer(Buffer.buffer(body)));
      assertEquals(415, undeclared.statusCode(), undeclared.bodyAsString());
      assertTrue(undeclared.bodyAsJsonObject().getString("message").contains("declared no type"), undeclared.bodyAsString());
      assertEquals(200, await(f.web().post("/allocators/a/allocate")
          .putHeader("Content-Type", "application/x-www-form-urlencoded").send()).statusCode());
    }
  }

  @Test
  void bearerSchemeIsCaseInsensitive(Vertx vertx) {
    JsonObject config = ServiceFixture.baseConfig();
    config.getJsonObject("http").put("host", "0.0.0.0").put("token", "s3cret");
    try (ServiceFixture f = ServiceFixture.start(vertx, config, null)) {
      for (String header : List.of("Bearer s3cret", "bearer s3cret", "BEARER s3cret", "bEaReR  s3cret")) {
        assertEquals(200, await(f.web().get("/health").putHeader("Authorization", header).send()).statusCode(),
            header);
      }
      for (String header : List.of("bearer wrong", "Basic s3cret", "bearer", "s3cret", "Bearer s3cret2")) {
        assertEquals(401, await(f.web().get("/health").putHeader("Authorization", header).send()).statusCode(),
            header);
      }
    }
  }

  @Test
  void blankTokenRefusedOnAllInterfaces(Vertx vertx) {
    JsonObject config = ServiceFixture.baseConfig();
    config.getJsonObject("http").put("host", "0.0.0.0").put("token", "    ");
    Throwable e = assertThrows(Throwable.class, () -> await(vertx.deployVerticle(new CoordinationVerticle(config))));
    assertTrue(e.getMessage().contains("http.token must not be empty or only white space"), e.getMessage());
  }

  @Test
  void unaddressableDirectoryNamesAndBadParametersAre400(Vertx vertx) {
    try (ServiceFixture f = ServiceFixture.start(vertx)) {
      for (String name : List.of("", ".", "..")) {
        List<String> path = f.dir("ok", name);
        HttpResponse<Buffer> r = await(f.web().post("/directories").sendJsonObject(new JsonObject()
            .put("path", new JsonArray(path))));
        assertEquals(400, r.statusCode(), "'" + name + "': " + r.bodyAsString());
        assertTrue(r.bodyAsJsonObject().getString("message").contains("not allowed as directory names"),
            r.bodyAsString());
        f.failure(f.client.directoryAddress(), "createOrOpen", new JsonObject().put("path", new JsonArray(path)),
            FailureCodes.BAD_REQUEST, "bad_request");
      }
      String url = "/directories/" + String.join("/", f.dir());
      await(f.web().post("/directories").sendJsonObject(new JsonObject().put("path", new JsonArray(f.dir()))));
      for (String query : List.of("?list=maybe", "?list=1", "?list=")) {
        HttpResponse<Buffer> r = await(f.web().get(url + query).send());
        assertEquals(400, r.statusCode(), query + ": " + r.bodyAsString());
        assertTrue(r.bodyAsJsonObject().getString("message").contains("'list' must be true or false"));
      }
      assertEquals(200, await(f.web().get(url + "?list=false").send()).statusCode());
      assertEquals(400, await(f.web().delete(url + "?ifExists=yes").send()).statusCode());
    }
  }

  @Test
  void invalidUtf8InThePathIs400(Vertx vertx) {
    try (ServiceFixture f = ServiceFixture.start(vertx)) {
      for (String path : List.of("/directories/%C3%28", "/directories/a/%FF", "/mutexes/%E2%82", "/directories/%G1",
          "/interners/%80/intern")) {
        HttpMethod method = path.startsWith("/interners") ? HttpMethod.POST : HttpMethod.GET;
        HttpResponse<Buffer> r = await(f.web().request(method, path).send());
        assertEquals(400, r.statusCode(), path + ": " + r.bodyAsString());
        assertEquals("bad_request", r.bodyAsJsonObject().getString("error"), r.bodyAsString());
      }
      // Valid UTF-8 still reaches the route: a missing directory is 404.
      assertEquals(404, await(f.web().get("/directories/" + String.join("/", f.dir()) + "/%C3%A9t%C3%A9").send())
          .statusCode());
    }
  }

  @Test
  void headHealthAndAllowOn405(Vertx vertx) {
    try (ServiceFixture f = ServiceFixture.start(vertx)) {
      HttpClient http = vertx.createHttpClient();
      JsonObject head = await(http.request(new RequestOptions().setMethod(HttpMethod.HEAD)
          .setHost("127.0.0.1").setPort(f.service.httpPort()).setURI("/health"))
          .compose(req -> req.send())
          .compose(resp -> resp.body().map(b -> new JsonObject().put("status", resp.statusCode())
              .put("length", b.length()))));
      assertEquals(200, head.getInteger("status"));
      assertEquals(0, head.getInteger("length"), "HEAD has no body");
      http.close();

      assertAllow(f, HttpMethod.PUT, "/health", "GET, HEAD");
      assertAllow(f, HttpMethod.DELETE, "/mutexes/m", "GET");
      assertAllow(f, HttpMethod.GET, "/mutexes/m/acquire", "POST");
      assertAllow(f, HttpMethod.PUT, "/directories/a/b", "DELETE, GET");
    }
  }

  private static void assertAllow(ServiceFixture f, HttpMethod method, String path, String allow) {
    HttpResponse<Buffer> r = await(f.web().request(method, path).send());
    assertEquals(405, r.statusCode(), method + " " + path + ": " + r.bodyAsString());
    assertEquals(allow, r.getHeader("Allow"), method + " " + path);
  }

  @Test
  void metricsHaveHistogramBuckets(Vertx vertx) {
    try (ServiceFixture f = ServiceFixture.start(vertx)) {
      await(f.client.allocate("a"));
      await(f.web().get("/health").send());
      String text = await(f.web().get("/metrics").send()).bodyAsString();
      assertTrue(text.contains("fdbcoord_requests_seconds_bucket{"), text);
      assertTrue(text.contains("fdbcoord_http_requests_seconds_bucket{"), text);
      assertTrue(text.contains("le=\"+Inf\""), text);
    }
  }

  @Test
  void portInUseSaysWhichPort(Vertx vertx) throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      JsonObject config = ServiceFixture.baseConfig();
      config.getJsonObject("http").put("port", taken.getLocalPort());
      Throwable e = assertThrows(Throwable.class, () -> await(vertx.deployVerticle(new CoordinationVerticle(config))));
      assertTrue(e.getMessage().contains("cannot listen for HTTP on 127.0.0.1:" + taken.getLocalPort()),
          e.getMessage());
      assertFalse(vertx.deploymentIDs().iterator().hasNext(), "nothing left deployed");
    }
  }
}
