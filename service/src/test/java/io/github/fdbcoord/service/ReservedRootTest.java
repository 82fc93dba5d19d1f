package io.github.fdbcoord.service;

import io.github.fdbcoord.client.CoordinationClient;
import io.github.fdbcoord.service.eventbus.FailureCodes;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.github.fdbcoord.service.ServiceFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The service's own data (config {@code rootDirectory}) is out of the directory API's reach: every
 * route and event-bus action that could list, open, create in, move or remove it is refused with
 * 400 {@code reserved}, listings leave it out, and the data under it survives every attempt.
 */
@ExtendWith(VertxExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReservedRootTest {

  @Test
  void everyDirectoryActionRefusesTheServiceRoot(Vertx vertx) {
    try (ServiceFixture f = ServiceFixture.start(vertx)) {
      String dirs = f.client.directoryAddress();
      List<String> root = f.root;
      List<String> inside = with(root, "interner");
      List<String> parent = root.subList(0, 1);
      String ns = "ns";
      String id = await(f.client.intern(ns, List.of("kept"))).get(0).toString();

      for (List<String> p : List.of(root, inside)) {
        for (String action : List.of("open", "exists", "create", "createOrOpen", "remove", "removeIfExists", "list")) {
          f.failure(dirs, action, path(p), FailureCodes.BAD_REQUEST, "reserved");
        }
        f.failure(dirs, "move", new JsonObject().put("from", new JsonArray(p)).put("to", new JsonArray(f.dir("x"))),
            FailureCodes.BAD_REQUEST, "reserved");
        f.failure(dirs, "move", new JsonObject().put("from", new JsonArray(f.dir("x"))).put("to",
            new JsonArray(with(p, "x"))), FailureCodes.BAD_REQUEST, "reserved");
      }
      f.failure(dirs, "create", path(root).put("partition", true), FailureCodes.BAD_REQUEST, "reserved");
      // An ancestor cannot be moved or removed either: the service's data would go with it.
      f.failure(dirs, "remove", path(parent), FailureCodes.BAD_REQUEST, "reserved");
      f.failure(dirs, "removeIfExists", path(parent), FailureCodes.BAD_REQUEST, "reserved");
      f.failure(dirs, "move", new JsonObject().put("from", new JsonArray(parent)).put("to",
          new JsonArray(f.dir("moved"))), FailureCodes.BAD_REQUEST, "reserved");
      // ... but it can still be listed, without the reserved child.
      assertFalse(f.request(dirs, "list", path(parent)).getJsonArray("names").contains(root.get(1)));

      // HTTP routes: the same refusals.
      String rootUrl = url(root);
      httpError(f, HttpMethod.GET, rootUrl, null);
      httpError(f, HttpMethod.GET, rootUrl + "?list=true", null);
      httpError(f, HttpMethod.GET, url(inside), null);
      httpError(f, HttpMethod.DELETE, rootUrl, null);
      httpError(f, HttpMethod.DELETE, rootUrl + "?ifExists=true", null);
      httpError(f, HttpMethod.DELETE, url(parent), null);
      httpError(f, HttpMethod.POST, "/directories", new JsonObject().put("path", new JsonArray(with(root, "x"))));
      httpError(f, HttpMethod.POST, "/directories", new JsonObject().put("path", new JsonArray(root))
          .put("createOrOpen", true));
      httpError(f, HttpMethod.POST, "/directories/move", new JsonObject().put("from", new JsonArray(root))
          .put("to", new JsonArray(f.dir("y"))));
      httpError(f, HttpMethod.POST, "/directories/move", new JsonObject().put("from", new JsonArray(f.dir("y")))
          .put("to", new JsonArray(with(root, "y"))));
      JsonObject listed = json(await(f.web().get(url(parent) + "?list=true").send()), 200);
      assertFalse(listed.getJsonArray("names").contains(root.get(1)), listed.encode());

      // Nothing was lost.
      assertEquals(id, String.valueOf(await(f.client.resolve(ns, List.of("kept"))).get(0).getAsLong()));
    }
  }

  @Test
  void listingSkipsTheRootAcrossPages(Vertx vertx) {
    try (ServiceFixture f = ServiceFixture.start(vertx)) {
      String dirs = f.client.directoryAddress();
      String id = f.root.get(1);
      List<String> siblings = List.of(id + "-a", id + "-b", id + "-c");
      for (String s : siblings) {
        f.request(dirs, "create", path(List.of("test", s)));
      }
      List<String> seen = new ArrayList<>();
      String after = null;
      for (int page = 0; page < 10; page++) {
        JsonObject body = path(List.of("test")).put("limit", 1);
        if (after != null) {
          body.put("startAfter", after);
        }
        JsonObject r = f.request(dirs, "list", body);
        seen.addAll(r.getJsonArray("names").getList());
        assertTrue(r.getJsonArray("names").size() <= 1, r.encode());
        if (!r.getBoolean("hasMore")) {
          break;
        }
        after = r.getString("nextStartAfter");
      }
      assertEquals(siblings, seen);
      for (String s : siblings) {
        f.request(dirs, "remove", path(List.of("test", s)));
      }
    }
  }

  /** The case: default configuration, DELETE /directories/fdbcoord must not wipe the service. */
  @Test
  void defaultRootCannotBeDeletedOverHttp(Vertx vertx) {
    CoordinationVerticle service = new CoordinationVerticle(new JsonObject()
        .put("http", new JsonObject().put("enabled", true).put("port", 0)));
    String deployment = await(vertx.deployVerticle(service));
    WebClient web = WebClient.create(vertx);
    try {
      CoordinationClient client = service.client();
      String id = await(client.intern("uris", List.of("a"))).get(0).toString();
      assertTrue(await(client.acquire("jobs", "w1", Duration.ofSeconds(5))).held());
      HttpResponse<Buffer> root = await(web.get(service.httpPort(), "127.0.0.1", "/directories").send());
      assertFalse(json(root, 200).getJsonArray("names").contains("fdbcoord"), root.bodyAsString());
      HttpResponse<Buffer> delete = await(web.delete(service.httpPort(), "127.0.0.1", "/directories/fdbcoord").send());
      assertEquals("reserved", json(delete, 400).getString("error"));
      assertEquals(id, String.valueOf(await(client.resolve("uris", List.of("a"))).get(0).getAsLong()));
      JsonObject state = await(client.request(client.mutexAddress(), "state", new JsonObject().put("name", "jobs")));
      assertTrue(state.getBoolean("held"), state.encode());
      assertEquals("w1", state.getJsonObject("owner").getString("owner"));
    } finally {
      web.close();
      await(vertx.undeploy(deployment));
    }
  }

  private static void httpError(ServiceFixture f, HttpMethod method, String url, JsonObject body) {
    var request = f.web().request(method, url);
    HttpResponse<Buffer> r = await(body == null ? request.send() : request.sendJsonObject(body));
    JsonObject json = json(r, 400);
    assertEquals("reserved", json.getString("error"), method + " " + url + ": " + r.bodyAsString());
    assertTrue(json.getString("message").contains("rootDirectory"), json.encode());
  }

  private static JsonObject json(HttpResponse<Buffer> r, int status) {
    assertEquals(status, r.statusCode(), r.bodyAsString());
    return r.bodyAsJsonObject();
  }

  private static String url(List<String> path) {
    return "/directories/" + String.join("/", path);
  }

  private static List<String> with(List<String> path, String name) {
    List<String> p = new ArrayList<>(path);
    p.add(name);
    return p;
  }

  private static JsonObject path(List<String> p) {
    return new JsonObject().put("path", new JsonArray(p));
  }
}
