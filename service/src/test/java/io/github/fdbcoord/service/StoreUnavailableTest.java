package io.github.fdbcoord.service;

import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.embedded.EmbeddedOptions;
import io.github.fdbcoord.service.eventbus.FailureCodes;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static io.github.fdbcoord.service.ServiceFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** When the store cannot be used, requests fail with 503 (event bus and HTTP) and /health says DOWN. */
@ExtendWith(VertxExtension.class)
@org.junit.jupiter.api.Timeout(value = 60, unit = java.util.concurrent.TimeUnit.SECONDS)
class StoreUnavailableTest {

  /**
   * Reads answer at once but commits do not (as with a full heap or a failed commit log): /health
   * must say DOWN within its bound, since a read alone would call the store healthy.
   */
  @Test
  @Tag("slow")
  void storeThatDoesNotCommitIsDown(Vertx vertx) {
    EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.builder().commitLatency(java.time.Duration.ofMillis(2_200))
        .build());
    CoordinationVerticle service = new CoordinationVerticle(ServiceFixture.baseConfig(), db);
    try {
      String id;
      try {
        id = await(vertx.deployVerticle(service));
      } catch (AssertionError e) {
        throw e;
      }
      io.vertx.ext.web.client.WebClient web = io.vertx.ext.web.client.WebClient.create(vertx);
      long start = System.nanoTime();
      HttpResponse<Buffer> health = await(web.get(service.httpPort(), "127.0.0.1", "/health").send());
      long ms = (System.nanoTime() - start) / 1_000_000;
      assertEquals(503, health.statusCode(), health.bodyAsString());
      assertEquals("DOWN", health.bodyAsJsonObject().getString("status"));
      assertTrue(health.bodyAsJsonObject().getString("error").contains("no commit within 2 s"), health.bodyAsString());
      // The error above proves the 2 s check fired rather than waited for the commit; this bound only
      // says /health answered at all (no hang): generous, as a loaded 2-core machine stretches 2 s.
      assertTrue(ms < 15_000, "answered in " + ms + " ms");
      HttpResponse<Buffer> head = await(web.head(service.httpPort(), "127.0.0.1", "/health").send());
      assertEquals(503, head.statusCode());
      web.close();
      await(vertx.undeploy(id));
    } finally {
      db.close();
    }
  }

  @Test
  void closedStoreIsUnavailable(Vertx vertx) {
    EmbeddedDatabase db = EmbeddedDatabase.inMemory();
    ServiceFixture f = ServiceFixture.start(vertx, ServiceFixture.baseConfig(), db);
    try {
      assertEquals(200, await(f.web().get("/health").send()).statusCode());
      db.close();

      HttpResponse<Buffer> health = await(f.web().get("/health").send());
      assertEquals(503, health.statusCode(), health.bodyAsString());
      assertEquals("DOWN", health.bodyAsJsonObject().getString("status"));

      f.failure(f.client.internerAddress(), "intern", new JsonObject().put("namespace", "fresh")
          .put("strings", new JsonArray().add("a")), FailureCodes.UNAVAILABLE, "unavailable");
      f.failure(f.client.allocatorAddress(), "allocate", new JsonObject().put("name", "x"),
          FailureCodes.UNAVAILABLE, "unavailable");
      f.failure(f.client.mutexAddress(), "state", new JsonObject().put("name", "m"),
          FailureCodes.UNAVAILABLE, "unavailable");
      f.failure(f.client.directoryAddress(), "exists", new JsonObject().put("path", new JsonArray().add("q")),
          FailureCodes.UNAVAILABLE, "unavailable");
      HttpResponse<Buffer> r = await(f.web().post("/allocators/x/allocate").send());
      assertEquals(503, r.statusCode(), r.bodyAsString());
      assertEquals("unavailable", r.bodyAsJsonObject().getString("error"));
    } finally {
      await(vertx.undeploy(f.deploymentId));
    }
  }
}
