package io.github.fdbcoord.store;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class StoreOptionsTest {
  @Test
  void anEmptyOrMissingSectionIsTheEmbeddedEngineInMemoryWithEveryDefault() {
    assertEquals(StoreOptions.embeddedInMemory(), StoreOptions.fromMap(null));
    StoreOptions defaults = StoreOptions.fromMap(Map.of());
    assertEquals(StoreOptions.embeddedInMemory(), defaults);
    assertEquals(StoreOptions.Engine.EMBEDDED, defaults.engine());
    assertEquals(StoreOptions.DEFAULT_STORAGE_CACHE_BYTES, defaults.storageCacheBytes());
    assertEquals(StoreOptions.DEFAULT_MIN_FREE_SPACE_BYTES, defaults.minFreeSpaceBytes());
    assertEquals(Duration.ZERO, defaults.latency());
  }

  @Test
  void everyKeyIsReadAndWrittenBackToEqualOptions() {
    Map<String, Object> section = new HashMap<>();
    section.put("engine", "embedded");
    section.put("dataDirectory", "some/data");
    section.put("latencyMs", 3);
    section.put("storageCacheBytes", 8L << 20);
    section.put("minFreeSpaceBytes", 0);
    section.put("verifyChecksumsAtOpen", true);
    section.put("scrubIntervalMs", 3_600_000);
    section.put("scrubBytesPerSecond", 1 << 20);
    StoreOptions options = StoreOptions.fromMap(section);
    assertEquals(Path.of("some/data"), options.dataDirectory());
    assertEquals(Duration.ofMillis(3), options.latency());
    assertEquals(8L << 20, options.storageCacheBytes());
    assertEquals(0, options.minFreeSpaceBytes());
    assertTrue(options.verifyChecksumsAtOpen());
    assertEquals(Duration.ofHours(1), options.scrubInterval());
    assertEquals(1 << 20, options.scrubBytesPerSecond());
    assertEquals(StoreOptions.embedded(Path.of("some/data")).withLatency(Duration.ofMillis(3))
        .withStorageCacheBytes(8L << 20).withMinFreeSpaceBytes(0)
        .withIntegrityChecks(true, Duration.ofHours(1), 1 << 20), options);
    assertEquals(options, StoreOptions.fromMap(options.toMap()));
    assertEquals(StoreOptions.KEYS.subList(0, 2), options.toMap().keySet().stream().limit(2).toList());

    StoreOptions cluster = StoreOptions.fromMap(Map.of("engine", "cluster", "clusterFile", "/etc/fdb.cluster"));
    assertEquals(StoreOptions.cluster(Path.of("/etc/fdb.cluster")), cluster);
    assertEquals("/etc/fdb.cluster", cluster.toMap().get("clusterFile"));
    assertEquals(cluster, StoreOptions.fromMap(cluster.toMap()));
    assertEquals(StoreOptions.cluster(null), StoreOptions.fromMap(Map.of("engine", "cluster")));
    assertNotEquals(StoreOptions.cluster(null), StoreOptions.embeddedInMemory());
  }

  @Test
  void aWrongSectionIsRefusedNamingTheKeyAndWhatItMustBe() {
    assertRefused(Map.of("engine", "rocks"), "store.engine must be \"embedded\" or \"cluster\", got \"rocks\"");
    assertRefused(Map.of("dataDir", "data"), "unknown key 'store.dataDir'; known keys: [engine, dataDirectory");
    assertRefused(Map.of("dataDirectory", 7), "store.dataDirectory must be a string, got 7");
    assertRefused(Map.of("dataDirectory", " "), "store.dataDirectory must not be empty");
    assertRefused(Map.of("engine", "cluster", "clusterFile", ""), "store.clusterFile must not be empty");
    assertRefused(Map.of("storageCacheBytes", 1000), "store.storageCacheBytes must be between 1048576 and");
    assertRefused(Map.of("minFreeSpaceBytes", -1), "store.minFreeSpaceBytes must be between 0 and");
    assertRefused(Map.of("minFreeSpaceBytes", "1GB"), "store.minFreeSpaceBytes must be an integer, got 1GB");
    assertRefused(Map.of("latencyMs", 1.5), "store.latencyMs must be an integer, got 1.5");
    assertRefused(Map.of("latencyMs", 60_001), "store.latencyMs must be between 0 and 60000, got 60001");
    assertRefused(Map.of("verifyChecksumsAtOpen", "yes"), "store.verifyChecksumsAtOpen must be true or false");
    assertRefused(Map.of("scrubIntervalMs", -1), "store.scrubIntervalMs must be between 0 and");
    assertRefused(Map.of("scrubBytesPerSecond", 0), "store.scrubBytesPerSecond must be between 1024 and");
  }

  private static void assertRefused(Map<String, ?> section, String message) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> StoreOptions.fromMap(section));
    assertTrue(e.getMessage().startsWith(message), e.getMessage());
  }
}
