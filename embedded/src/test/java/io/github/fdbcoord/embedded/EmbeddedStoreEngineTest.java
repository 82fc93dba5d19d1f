package io.github.fdbcoord.embedded;

import com.apple.foundationdb.Database;
import io.github.fdbcoord.store.Store;
import io.github.fdbcoord.store.StoreOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The store's options reach the embedded engine unchanged, whether set in code or read from a store section. */
class EmbeddedStoreEngineTest {
  @Test
  void everySettingOfTheStoreOptionsReachesTheEngine(@TempDir Path dir) {
    StoreOptions store = StoreOptions.fromMap(Map.of("dataDirectory", dir.toString(), "latencyMs", 2,
        "storageCacheBytes", 8L << 20, "minFreeSpaceBytes", 0, "verifyChecksumsAtOpen", true,
        "scrubIntervalMs", 60_000, "scrubBytesPerSecond", 1 << 20));
    EmbeddedOptions options = EmbeddedOptions.builder(store).build();
    assertEquals(dir, options.dataDirectory());
    assertEquals(dir, options.storageDirectory());
    assertEquals(Duration.ofMillis(2), options.readLatency());
    assertEquals(Duration.ofMillis(2), options.commitLatency());
    assertEquals(8L << 20, options.storageCacheBytes());
    assertEquals(0, options.minFreeSpaceBytes());
    assertTrue(options.verifyChecksumsAtOpen());
    assertEquals(Duration.ofMinutes(1), options.scrubInterval());
    assertEquals(1 << 20, options.scrubBytesPerSecond());
    assertEquals(options.engineConfig().storageCacheBytes(), options.storageCacheBytes());

    EmbeddedOptions defaults = EmbeddedOptions.builder(StoreOptions.embeddedInMemory()).build();
    assertNull(defaults.dataDirectory());
    assertNull(defaults.storageDirectory());
    assertEquals(EmbeddedOptions.inMemory().storageCacheBytes(), defaults.storageCacheBytes());
    assertEquals(EmbeddedOptions.inMemory().minFreeSpaceBytes(), defaults.minFreeSpaceBytes());
    assertEquals(EmbeddedOptions.inMemory().scrubBytesPerSecond(), defaults.scrubBytesPerSecond());
  }

  @Test
  void theStoreOpensTheEngineDurablyInTheDataDirectory(@TempDir Path dir) {
    Path data = dir.resolve("data");
    byte[] key = {1};
    try (Store store = Store.open(StoreOptions.embedded(data))) {
      Database db = store.database();
      db.run(tr -> {
        tr.set(key, new byte[] {42});
        return null;
      });
    }
    assertTrue(Files.isDirectory(data), "the engine wrote its data directory");
    try (Store store = Store.open(StoreOptions.embedded(data))) {
      assertArrayEquals(new byte[] {42}, store.database().readAsync(tr -> tr.get(key)).join());
    }
  }
}
