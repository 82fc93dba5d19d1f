package io.github.fdbcoord.cluster;

import io.github.fdbcoord.store.StoreOptions;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The JSON form: the service's store section, durations in {@code Ms}, and the earlier form read for one release. */
class FdbClusterManagerOptionsTest {
  @Test
  void theStoreSectionIsTheServicesWithEveryKey() {
    JsonObject store = new JsonObject().put("engine", "embedded").put("dataDirectory", "data").put("latencyMs", 2)
        .put("storageCacheBytes", 8L << 20).put("minFreeSpaceBytes", 0).put("verifyChecksumsAtOpen", true)
        .put("scrubIntervalMs", 60_000).put("scrubBytesPerSecond", 1 << 20);
    FdbClusterManagerOptions options = new FdbClusterManagerOptions(new JsonObject().put("store", store));
    assertEquals(StoreOptions.fromMap(store.getMap()), options.storeOptions());
    assertEquals(Path.of("data"), options.storeOptions().dataDirectory());
    assertEquals(8L << 20, options.storeOptions().storageCacheBytes());
    assertEquals(options.storeOptions(), new FdbClusterManagerOptions(options.toJson()).storeOptions());
    JsonObject written = options.toJson().getJsonObject("store");
    assertEquals("data", written.getString("dataDirectory"));
    assertEquals(60_000L, written.getLong("scrubIntervalMs"));
    assertEquals(StoreOptions.KEYS.size() - 1, written.size(), "every key but the cluster file: " + written);

    var wrong = assertThrows(IllegalArgumentException.class, () -> new FdbClusterManagerOptions(new JsonObject()
        .put("store", new JsonObject().put("engine", "cluster").put("clusterFile", 3))));
    assertTrue(wrong.getMessage().startsWith("store.clusterFile must be a string"), wrong.getMessage());
    var unknown = assertThrows(IllegalArgumentException.class, () -> new FdbClusterManagerOptions(new JsonObject()
        .put("store", new JsonObject().put("dataDir", "data"))));
    assertTrue(unknown.getMessage().startsWith("unknown key 'store.dataDir'"), unknown.getMessage());
    var notAnObject = assertThrows(IllegalArgumentException.class, () -> new FdbClusterManagerOptions(new JsonObject()
        .put("store", 3)));
    assertTrue(notAnObject.getMessage().startsWith("store must be an object"), notAnObject.getMessage());
  }

  @Test
  void durationsAreWrittenInMilliseconds() {
    JsonObject json = FdbClusterManagerOptions.defaults().toJson();
    for (String key : List.of("nodeLeaseMs", "heartbeatIntervalMs", "reaperIntervalMs", "logRetentionMs",
        "operationTimeoutMs", "suspicionWindowMs", "drainTimeoutMs")) {
      assertTrue(json.containsKey(key), key + " in " + json);
    }
    assertEquals(10_000L, json.getLong("nodeLeaseMs"));
    assertTrue(json.fieldNames().stream().noneMatch(k -> k.endsWith("Millis")), json.encode());
  }

  @Test
  void theEarlierKeysStillConfigureTheSameValuesWithAWarningNamingTheNewKey() {
    FdbClusterManagerOptions current = new FdbClusterManagerOptions(new JsonObject()
        .put("store", new JsonObject().put("engine", "embedded").put("dataDirectory", "data"))
        .put("nodeLeaseMs", 4000).put("heartbeatIntervalMs", 500).put("reaperIntervalMs", 250)
        .put("logRetentionMs", 20_000).put("operationTimeoutMs", 7000).put("suspicionWindowMs", 300)
        .put("drainTimeoutMs", 1500));
    List<String> warnings = new CopyOnWriteArrayList<>();
    FdbClusterManagerOptions earlier = captureWarnings(warnings, () -> new FdbClusterManagerOptions(new JsonObject()
        .put("store", "embedded").put("dataDirectory", "data")
        .put("nodeLeaseMillis", 4000).put("heartbeatIntervalMillis", 500).put("reaperIntervalMillis", 250)
        .put("logRetentionMillis", 20_000).put("operationTimeoutMillis", 7000).put("suspicionWindowMillis", 300)
        .put("drainTimeoutMillis", 1500)));
    assertEquals(current.toJson(), earlier.toJson());
    assertEquals(Duration.ofSeconds(4), earlier.nodeLease());
    assertEquals(Path.of("data"), earlier.storeOptions().dataDirectory());
    for (String[] renamed : new String[][] {{"nodeLeaseMillis", "nodeLeaseMs"},
        {"heartbeatIntervalMillis", "heartbeatIntervalMs"}, {"reaperIntervalMillis", "reaperIntervalMs"},
        {"logRetentionMillis", "logRetentionMs"}, {"operationTimeoutMillis", "operationTimeoutMs"},
        {"suspicionWindowMillis", "suspicionWindowMs"}, {"drainTimeoutMillis", "drainTimeoutMs"},
        {"dataDirectory", "store.dataDirectory"}, {"\"store\": \"embedded\"", "\"store\": {\"engine\": \"embedded\"}"}}) {
      assertTrue(warnings.stream().anyMatch(w -> w.contains(renamed[0]) && w.contains("use " ) && w.contains(renamed[1])),
          renamed[0] + " -> " + renamed[1] + " in " + warnings);
    }
    assertEquals(9, warnings.size(), warnings.toString());

    List<String> clusterWarnings = new CopyOnWriteArrayList<>();
    FdbClusterManagerOptions cluster = captureWarnings(clusterWarnings, () -> new FdbClusterManagerOptions(new JsonObject()
        .put("store", "cluster").put("clusterFile", "/etc/foundationdb/fdb.cluster")));
    assertEquals(StoreOptions.cluster(Path.of("/etc/foundationdb/fdb.cluster")), cluster.storeOptions());
    assertTrue(clusterWarnings.stream().anyMatch(w -> w.contains("'clusterFile'") && w.contains("'store.clusterFile'")),
        clusterWarnings.toString());

    List<String> none = new CopyOnWriteArrayList<>();
    captureWarnings(none, () -> new FdbClusterManagerOptions(current.toJson()));
    assertEquals(List.of(), none);
  }

  @Test
  void anEarlierKeyBesideItsNewOneIsRefused() {
    var both = assertThrows(IllegalArgumentException.class, () -> new FdbClusterManagerOptions(new JsonObject()
        .put("nodeLeaseMillis", 4000).put("nodeLeaseMs", 5000)));
    assertTrue(both.getMessage().contains("'nodeLeaseMillis' and 'nodeLeaseMs'"), both.getMessage());
    var dir = assertThrows(IllegalArgumentException.class, () -> new FdbClusterManagerOptions(new JsonObject()
        .put("store", new JsonObject().put("dataDirectory", "a")).put("dataDirectory", "b")));
    assertTrue(dir.getMessage().contains("'dataDirectory' and 'store.dataDirectory'"), dir.getMessage());
  }

  /** Runs {@code body}, adding the WARNING messages of the options' logger (vertx-core-logging writes to java.util.logging here). */
  private static <T> T captureWarnings(List<String> warnings, Supplier<T> body) {
    Logger logger = Logger.getLogger(FdbClusterManagerOptions.class.getName());
    Handler handler = new Handler() {
      @Override
      public void publish(LogRecord record) {
        if (record.getLevel().intValue() >= Level.WARNING.intValue()) {
          warnings.add(record.getMessage());
        }
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    };
    logger.addHandler(handler);
    try {
      return body.get();
    } finally {
      logger.removeHandler(handler);
    }
  }
}
