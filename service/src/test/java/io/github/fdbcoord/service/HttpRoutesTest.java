package io.github.fdbcoord.service;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static io.github.fdbcoord.service.ServiceFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every HTTP route: success, each failure status, and bad input of every kind, always as JSON. */
@ExtendWith(VertxExtension.class)
class HttpRoutesTest {
  private ServiceFixture f;

  @BeforeEach
  void start(Vertx vertx) {
    f = ServiceFixture.start(vertx);
  }

  @AfterEach
  void stop() {
    f.close();
  }

  private HttpResponse<Buffer> call(HttpMethod method, String uri, String body) {
    var req = f.web().request(method, uri);
    return await(body == null ? req.send()
        : req.putHeader("Content-Type", "application/json").sendBuffer(Buffer.buffer(body)));
  }

  private JsonObject ok(HttpMethod method, String uri, Object body, int status) {
    HttpResponse<Buffer> r = call(method, uri, body == null ? null : body.toString());
    assertEquals(status, r.statusCode(), () -> method + " " + uri + " -> " + r.bodyAsString());
    assertEquals("application/json", r.getHeader("content-type"));
    return r.bodyAsJsonObject();
  }

  /** Asserts a JSON error: status, reason, and a message. */
  private JsonObject error(HttpMethod method, String uri, String body, int status, String reason) {
    HttpResponse<Buffer> r = call(method, uri, body);
    assertEquals(status, r.statusCode(), () -> method + " " + uri + " " + body + " -> " + r.bodyAsString());
    JsonObject json = r.bodyAsJsonObject();
    assertEquals(reason, json.getString("error"), json::encode);
    assertNotNull(json.getString("message"));
    assertFalse(json.getString("message").contains("\tat "), "no stack trace");
    return json;
  }

  private String dirUrl(List<String> path) {
    StringBuilder b = new StringBuilder("/directories");
    for (String p : path) {
      b.append('/').append(URLEncoder.encode(p, StandardCharsets.UTF_8).replace("+", "%20"));
    }
    return b.toString();
  }

  @Test
  void directoryRoutes() {
    List<String> a = f.dir("a b/c");
    JsonObject created = ok(HttpMethod.POST, "/directories", new JsonObject().put("path", new JsonArray(a))
        .put("layer", "docs"), 201);
    assertEquals("docs", created.getString("layer"));
    error(HttpMethod.POST, "/directories", new JsonObject().put("path", new JsonArray(a)).encode(), 409,
        "already_exists");
    JsonObject again = ok(HttpMethod.POST, "/directories", new JsonObject().put("path", new JsonArray(a))
        .put("createOrOpen", true), 200);
    assertEquals(created.getString("prefix"), again.getString("prefix"));

    JsonObject opened = ok(HttpMethod.GET, dirUrl(a), null, 200);
    assertEquals(created.getString("prefix"), opened.getString("prefix"));
    assertEquals(new JsonArray(a), opened.getJsonArray("path"), "percent-encoded '/' and ' ' are decoded per element");
    error(HttpMethod.GET, dirUrl(a) + "?layer=other", null, 409, "layer_mismatch");
    error(HttpMethod.GET, dirUrl(f.dir("missing")), null, 404, "not_found");

    JsonObject list = ok(HttpMethod.GET, dirUrl(f.dir()) + "?list=true&limit=10", null, 200);
    assertEquals(new JsonArray().add("a b/c"), list.getJsonArray("names"));
    assertTrue(ok(HttpMethod.GET, "/directories?limit=1000", null, 200).getJsonArray("names").contains("test"));
    error(HttpMethod.GET, dirUrl(f.dir()) + "?list=true&limit=ten", null, 400, "bad_request");
    error(HttpMethod.GET, dirUrl(f.dir()) + "?list=true&limit=0", null, 400, "bad_request");

    JsonObject moved = ok(HttpMethod.POST, "/directories/move", new JsonObject().put("from", new JsonArray(a))
        .put("to", new JsonArray(f.dir("z"))), 200);
    assertEquals(created.getString("prefix"), moved.getString("prefix"));
    error(HttpMethod.POST, "/directories/move", new JsonObject().put("from", new JsonArray(a))
        .put("to", new JsonArray(f.dir("y"))).encode(), 404, "not_found");

    assertTrue(ok(HttpMethod.DELETE, dirUrl(f.dir("z")), null, 200).getBoolean("removed"));
    error(HttpMethod.DELETE, dirUrl(f.dir("z")), null, 404, "not_found");
    assertFalse(ok(HttpMethod.DELETE, dirUrl(f.dir("z")) + "?ifExists=true", null, 200).getBoolean("removed"));

    error(HttpMethod.POST, "/directories", "{}", 400, "bad_request");
    error(HttpMethod.POST, "/directories", "{\"path\": [1, 2]}", 400, "bad_request");
    error(HttpMethod.POST, "/directories", "{\"path\": \"a\"}", 400, "bad_request");
    error(HttpMethod.POST, "/directories", "{\"path\": [\"a\"], \"createOrOpen\": \"yes\"}", 400, "bad_request");
    error(HttpMethod.GET, "/directories/%zz", null, 400, "bad_request");
  }

  @Test
  void allocatorRoutes() {
    long v1 = ok(HttpMethod.POST, "/allocators/orders/allocate", null, 200).getLong("value");
    long v2 = ok(HttpMethod.POST, "/allocators/orders/allocate", null, 200).getLong("value");
    assertTrue(v1 != v2);
    assertTrue(ok(HttpMethod.POST, "/allocators/orders/allocate-prefix", null, 200).getString("prefix")
        .matches("([0-9a-f]{2})+"));
    error(HttpMethod.POST, "/allocators/" + "x".repeat(300) + "/allocate", null, 400, "bad_request");
    error(HttpMethod.GET, "/allocators/orders/allocate", null, 405, "method_not_allowed");
  }

  @Test
  void internerRoutes() {
    JsonObject r = ok(HttpMethod.POST, "/interners/uris/intern", new JsonObject()
        .put("strings", new JsonArray().add("a").add("b")), 200);
    JsonArray ids = r.getJsonArray("ids");
    JsonObject lookup = ok(HttpMethod.POST, "/interners/uris/lookup", new JsonObject().put("ids", ids), 200);
    assertEquals(new JsonArray().add("a").add("b"), lookup.getJsonArray("strings"));
    JsonObject resolve = ok(HttpMethod.POST, "/interners/uris/resolve", new JsonObject()
        .put("strings", new JsonArray().add("b").add("c")), 200);
    assertEquals(ids.getString(1), resolve.getJsonArray("ids").getString(0));
    assertNull(resolve.getJsonArray("ids").getValue(1));
    assertTrue(ok(HttpMethod.GET, "/interners", null, 200).getJsonArray("namespaces").contains("uris"));

    error(HttpMethod.POST, "/interners/nope/lookup", "{\"ids\": [\"1\"]}", 404, "not_found");
    error(HttpMethod.POST, "/interners/uris/intern", "{\"strings\": [1]}", 400, "bad_request");
    error(HttpMethod.POST, "/interners/uris/intern", "{\"strings\": \"a\"}", 400, "bad_request");
    error(HttpMethod.POST, "/interners/uris/intern", "{}", 400, "bad_request");
    error(HttpMethod.POST, "/interners/uris/intern", "{\"strings\": [\"a\"", 400, "bad_request");
    error(HttpMethod.POST, "/interners/uris/intern", "[\"a\"]", 400, "bad_request");
    error(HttpMethod.POST, "/interners/uris/lookup", "{\"ids\": [\"abc\"]}", 400, "bad_request");
    JsonArray tooMany = new JsonArray();
    for (int i = 0; i < 201; i++) {
      tooMany.add("s" + i);
    }
    JsonObject e = error(HttpMethod.POST, "/interners/uris/intern", new JsonObject().put("strings", tooMany).encode(),
        400, "bad_request");
    assertTrue(e.getString("message").contains("at most 200"), e.encode());
    String huge = new JsonObject().put("strings", new JsonArray().add("x".repeat(70 * 1024))).encode();
    error(HttpMethod.POST, "/interners/uris/intern", huge, 413, "too_large");

    assertTrue(ok(HttpMethod.DELETE, "/interners/uris", null, 200).getBoolean("removed"));
    assertFalse(ok(HttpMethod.DELETE, "/interners/uris", null, 200).getBoolean("removed"));
  }

  @Test
  void mutexRoutes() {
    JsonObject a = ok(HttpMethod.POST, "/mutexes/jobs/acquire", new JsonObject().put("owner", "a"), 200);
    assertTrue(a.getBoolean("held"));
    JsonObject b = ok(HttpMethod.POST, "/mutexes/jobs/acquire", new JsonObject().put("owner", "b")
        .put("wait", false), 200);
    assertFalse(b.getBoolean("held"));
    assertEquals(1, b.getInteger("position"));
    error(HttpMethod.POST, "/mutexes/jobs/acquire", new JsonObject().put("owner", "c").put("timeoutMs", 100).encode(),
        409, "timed_out");

    JsonObject state = ok(HttpMethod.GET, "/mutexes/jobs", null, 200);
    assertEquals("a", state.getJsonObject("owner").getString("owner"));
    assertEquals(a.getString("token"), state.getJsonObject("owner").getString("token"));
    assertEquals(1, state.getJsonArray("queue").size());
    assertEquals(new JsonArray().add("jobs"), ok(HttpMethod.GET, "/mutexes?limit=10", null, 200).getJsonArray("names"));
    error(HttpMethod.GET, "/mutexes?limit=x", null, 400, "bad_request");
    error(HttpMethod.GET, "/mutexes?limit=0", null, 400, "bad_request");

    assertEquals(1L, ok(HttpMethod.POST, "/mutexes/jobs/heartbeat", new JsonObject().put("owner", "a")
        .put("token", a.getString("token")), 200).getLong("heartbeats"));
    JsonObject waiterBeat = ok(HttpMethod.POST, "/mutexes/jobs/heartbeat", new JsonObject().put("owner", "b"), 200);
    assertEquals(false, waiterBeat.getBoolean("held"), "a waiter's heartbeat keeps its place: " + waiterBeat);
    assertEquals(1, waiterBeat.getInteger("position"));
    error(HttpMethod.POST, "/mutexes/jobs/heartbeat", "{\"owner\": \"nobody\"}", 409, "not_owner");
    error(HttpMethod.POST, "/mutexes/jobs/release", "{\"owner\": \"b\"}", 409, "not_owner");
    JsonObject released = ok(HttpMethod.POST, "/mutexes/jobs/release", new JsonObject().put("owner", "a"), 200);
    assertEquals("HANDED_OFF", released.getString("type"));
    assertEquals("b", released.getString("owner"));
    ok(HttpMethod.POST, "/mutexes/jobs/acquire", new JsonObject().put("owner", "d").put("wait", false), 200);
    assertTrue(ok(HttpMethod.POST, "/mutexes/jobs/leave", new JsonObject().put("owner", "d"), 200).getBoolean("left"));
    ok(HttpMethod.POST, "/mutexes/jobs/release", new JsonObject().put("owner", "b"), 200);
    error(HttpMethod.POST, "/mutexes/jobs/release", "{\"owner\": \"b\"}", 409, "not_held");

    error(HttpMethod.POST, "/mutexes/jobs/acquire", "{}", 400, "bad_request");
    error(HttpMethod.POST, "/mutexes/jobs/acquire", "{\"owner\": 5}", 400, "bad_request");
    error(HttpMethod.POST, "/mutexes/jobs/acquire", "{\"owner\": \"a\", \"timeoutMs\": -3}", 400, "bad_request");
    error(HttpMethod.POST, "/mutexes/jobs/acquire", "{\"owner\": \"a\", \"timeoutMs\": 1e99}", 400, "bad_request");
    error(HttpMethod.POST, "/mutexes/jobs/release", "{\"owner\": \"a\", \"token\": \"zz\"}", 400, "bad_request");
    error(HttpMethod.POST, "/mutexes/jobs/release", "not json", 400, "bad_request");
  }

  @Test
  void healthMetricsAndUnknownRoutes() {
    JsonObject health = ok(HttpMethod.GET, "/health", null, 200);
    assertEquals("UP", health.getString("status"));
    ok(HttpMethod.POST, "/interners/m/intern", new JsonObject().put("strings", new JsonArray().add("x")), 200);
    HttpResponse<Buffer> metrics = call(HttpMethod.GET, "/metrics", null);
    assertEquals(200, metrics.statusCode());
    assertTrue(metrics.getHeader("content-type").startsWith("text/plain"));
    String text = metrics.bodyAsString();
    assertTrue(text.contains("fdbcoord_requests_seconds_count{action=\"intern\",address=\"fdb.interner\",outcome=\"ok\"}"),
        text);
    assertTrue(text.contains("fdbcoord_http_requests_seconds"), text);
    error(HttpMethod.GET, "/nothing/here", null, 404, "not_found");
  }
}
