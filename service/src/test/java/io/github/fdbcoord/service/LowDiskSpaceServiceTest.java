package io.github.fdbcoord.service;

import static io.github.fdbcoord.service.ServiceFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.embedded.FreeSpaceControlledDisk;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The service on a durable embedded store whose disk runs low on space: the engine holds commits
 * (rather than run the disk full and stop), so /health says DOWN and why, reads go on, writes fail
 * with 503 in bounded time, and everything comes back once space is freed. Starting on such a disk
 * fails at once with the reason, instead of waiting.
 */
@ExtendWith(VertxExtension.class)
@org.junit.jupiter.api.Timeout(value = 90, unit = TimeUnit.SECONDS)
class LowDiskSpaceServiceTest {
  private static final long MIN_FREE = 100L << 20;

  @Test
  void startingOnADiskLowOnSpaceFailsAtOnceWithTheReason(Vertx vertx, @TempDir Path data) {
    FreeSpaceControlledDisk disk = new FreeSpaceControlledDisk();
    disk.usableSpace(MIN_FREE - 1);
    try (EmbeddedDatabase db = disk.open(data, MIN_FREE)) {
      long start = System.nanoTime();
      Throwable e = assertThrows(Throwable.class,
          () -> await(vertx.deployVerticle(new CoordinationVerticle(ServiceFixture.baseConfig(), db))));
      long ms = (System.nanoTime() - start) / 1_000_000;
      String message = String.valueOf(e.getMessage());
      assertTrue(message.contains("refuses writes: commits are held") && message.contains(data.toString())
          && message.contains("minFreeSpaceBytes"), message);
      assertTrue(ms < 5_000, "failed after " + ms + " ms");
    }
  }

  @Test
  @Tag("slow")
  void lowSpaceIsReportedReadsGoOnWritesFailAndAllComesBackOnceSpaceIsFreed(Vertx vertx, @TempDir Path data)
      throws Exception {
    FreeSpaceControlledDisk disk = new FreeSpaceControlledDisk();
    try (EmbeddedDatabase db = disk.open(data, MIN_FREE)) {
      ServiceFixture f = ServiceFixture.start(vertx, ServiceFixture.baseConfig(), db);
      try {
        long kept = await(f.client.intern("names", List.of("kept"))).get(0);
        assertEquals(200, await(f.web().get("/health").send()).statusCode());
        assertTrue(f.service.metrics().scrape().contains("fdbcoord_store_commits_held 0.0"), "the gauge is there");

        disk.usableSpace(MIN_FREE / 2);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (db.commitsHeldBecause().isEmpty() && System.nanoTime() < deadline) {
          Thread.sleep(20);
        }
        HttpResponse<Buffer> health = await(f.web().get("/health").send());
        assertEquals(503, health.statusCode(), health.bodyAsString());
        assertEquals("DOWN", health.bodyAsJsonObject().getString("status"));
        String error = health.bodyAsJsonObject().getString("error");
        assertTrue(error.contains("commits are held") && error.contains(data.toString())
            && error.contains("minFreeSpaceBytes"), error);
        assertTrue(f.service.metrics().scrape().contains("fdbcoord_store_commits_held 1.0"),
            "the gauge says commits are held");

        // Reads go on: the interned string resolves, over the event bus and HTTP.
        assertEquals(kept, await(f.client.resolve("names", List.of("kept"))).get(0).getAsLong());
        HttpResponse<Buffer> resolved = await(f.web().post("/interners/names/resolve")
            .sendJsonObject(new JsonObject().put("strings", new JsonArray().add("kept"))));
        assertEquals(200, resolved.statusCode(), resolved.bodyAsString());

        // A write is answered, with 503, within its bound.
        long start = System.nanoTime();
        HttpResponse<Buffer> refused = await(f.web().post("/interners/names/intern")
            .sendJsonObject(new JsonObject().put("strings", new JsonArray().add("new while low"))));
        long ms = (System.nanoTime() - start) / 1_000_000;
        assertEquals(503, refused.statusCode(), refused.bodyAsString());
        // The engine holds the commit longer than the service's request timeout (5 s), so the request
        // is answered store_unavailable at that bound; /health (above) names the held commits' reason.
        assertEquals("store_unavailable", refused.bodyAsJsonObject().getString("error"));
        String why = refused.bodyAsJsonObject().getString("message");
        assertTrue(why.contains("the store did not answer"), why);
        assertTrue(ms < 15_000, "answered after " + ms + " ms");

        disk.usableSpace(Long.MAX_VALUE);
        deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        int status = 0;
        while (status != 200 && System.nanoTime() < deadline) {
          status = await(f.web().get("/health").send()).statusCode();
        }
        assertEquals(200, status, "healthy again once space is freed");
        assertTrue(f.service.metrics().scrape().contains("fdbcoord_store_commits_held 0.0"));
        List<Long> ids = await(f.client.intern("names", List.of("kept", "new after"))).stream()
            .toList();
        assertEquals(kept, ids.get(0));
        assertEquals(ids.get(1), await(f.client.resolve("names", List.of("new after"))).get(0).getAsLong());
      } finally {
        disk.usableSpace(Long.MAX_VALUE); // clean-up commits
        f.close();
      }
    }
  }
}
