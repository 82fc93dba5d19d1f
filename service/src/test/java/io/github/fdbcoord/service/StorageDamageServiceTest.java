package io.github.fdbcoord.service;

import static io.github.fdbcoord.service.ServiceFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.apple.foundationdb.directory.DirectoryLayer;
import io.github.fdbcoord.embedded.DamagedStorage;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.embedded.EmbeddedOptions;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.junit5.VertxExtension;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The service on a durable store whose RocksDB table file is damaged under it: a directory listing that
 * reads damaged blocks answers 503 {@code store_corrupt} naming the file instead of a short list, /health
 * answers DOWN naming it, and the gauge {@code fdbcoord_store_corruption_detected} is 1.
 */
@ExtendWith(VertxExtension.class)
@org.junit.jupiter.api.Timeout(value = 60, unit = TimeUnit.SECONDS)
class StorageDamageServiceTest {
  private static final int DIRECTORIES = 3_001;

  @Test
  void aListingOverDamagedBlocksFailsNamingTheFileAndHealthIsDown(Vertx vertx, @TempDir Path data) throws Exception {
    List<String> parent = List.of("test-dirs", "listing");
    try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.durable(data))) {
      for (int i = 0; i < DIRECTORIES; i += 250) {
        int from = i;
        db.run(tr -> {
          for (int d = from; d < Math.min(DIRECTORIES, from + 250); d++) {
            DirectoryLayer.getDefault().create(tr, List.of("test-dirs", "listing", String.format("d%05d", d))).join();
          }
          return null;
        });
      }
    }
    try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.durable(data))) {
      ServiceFixture f = ServiceFixture.start(vertx, ServiceFixture.baseConfig(), db);
      try {
        assertEquals(200, await(f.web().get("/health").send()).statusCode());
        // Damaged while the service runs: the blocks its start read stay intact in RocksDB's block cache,
        // every other data block of the table is damaged on disk.
        Path table = DamagedStorage.largestTable(data);
        DamagedStorage.damageDataBlocks(table, 16 << 10);

        int listed = 0;
        String startAfter = null;
        HttpResponse<Buffer> page;
        while (true) {
          var request = f.web().get("/directories/test-dirs/listing").addQueryParam("list", "true")
              .addQueryParam("limit", "1000");
          if (startAfter != null) {
            request.addQueryParam("startAfter", startAfter);
          }
          page = await(request.send());
          if (page.statusCode() != 200) {
            break;
          }
          var names = page.bodyAsJsonObject().getJsonArray("names");
          listed += names.size();
          if (names.isEmpty() || listed >= DIRECTORIES) {
            break;
          }
          startAfter = names.getString(names.size() - 1);
        }
        assertEquals(503, page.statusCode(), "listed " + listed + " of " + DIRECTORIES + ": " + page.bodyAsString());
        JsonObject error = page.bodyAsJsonObject();
        assertEquals("store_corrupt", error.getString("error"), error.encode());
        assertTrue(error.getString("message").contains("1522")
            && error.getString("message").contains(table.getFileName().toString()), error.encode());

        HttpResponse<Buffer> health = await(f.web().get("/health").send());
        assertEquals(503, health.statusCode(), health.bodyAsString());
        assertEquals("DOWN", health.bodyAsJsonObject().getString("status"));
        String why = health.bodyAsJsonObject().getString("error");
        assertTrue(why.contains("damaged") && why.contains(table.getFileName().toString()), why);
        assertTrue(f.service.metrics().scrape().contains("fdbcoord_store_corruption_detected 1.0"),
            "the gauge reports the damage");
      } finally {
        f.close();
      }
    }
  }
}
