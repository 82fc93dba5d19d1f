package io.github.fdbcoord.vertx;

import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static io.github.fdbcoord.vertx.ServiceFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** When the store cannot be used, requests fail with 503 (event bus and HTTP) and /health says DOWN. */
@ExtendWith(VertxExtension.class)
class StoreUnavailableTest {

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
