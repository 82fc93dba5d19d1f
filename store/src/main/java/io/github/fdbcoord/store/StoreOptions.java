package io.github.fdbcoord.store;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Which FoundationDB engine to open: the embedded one (in memory, or durable in a data
 * directory), or a real cluster named by a cluster file.
 *
 * <p>The configuration's {@code "store"} section, the same for the coordination service and the cluster
 * manager, is read by {@link #fromMap} and written by {@link #toMap}; every key is optional:
 * <pre>
 * "store": {"engine": "embedded" | "cluster", "dataDirectory": null, "clusterFile": null, "latencyMs": 0,
 *           "storageCacheBytes": 67108864, "minFreeSpaceBytes": 104857600, "verifyChecksumsAtOpen": false,
 *           "scrubIntervalMs": 0, "scrubBytesPerSecond": 16777216}
 * </pre>
 * This module does not depend on Vert.x, so the section is a plain map (a {@code JsonObject}'s
 * {@code getMap()}, or {@code new JsonObject(toMap())} the other way).
 */
public final class StoreOptions {
  /** The keys of the store section, in the order {@link #toMap()} writes them. */
  public static final List<String> KEYS = List.of("engine", "dataDirectory", "clusterFile", "latencyMs",
      "storageCacheBytes", "minFreeSpaceBytes", "verifyChecksumsAtOpen", "scrubIntervalMs", "scrubBytesPerSecond");

  /** The engine behind the store. */
  public enum Engine { EMBEDDED, CLUSTER }

  private final Engine engine;
  private final Path dataDirectory;
  private final Path clusterFile;
  private final Duration latency;
  private final long storageCacheBytes;
  private final long minFreeSpaceBytes;
  private final boolean verifyChecksumsAtOpen;
  private final Duration scrubInterval;
  private final long scrubBytesPerSecond;

  /** The embedded engine's default RocksDB block cache. */
  public static final long DEFAULT_STORAGE_CACHE_BYTES = 64L << 20;
  /** The embedded engine's default disk-space reserve. */
  public static final long DEFAULT_MIN_FREE_SPACE_BYTES = 100L << 20;
  /** The embedded engine's default read rate of its background scrub (when one is turned on). */
  public static final long DEFAULT_SCRUB_BYTES_PER_SECOND = 16L << 20;

  private StoreOptions(Engine engine, Path dataDirectory, Path clusterFile, Duration latency) {
    this(engine, dataDirectory, clusterFile, latency, DEFAULT_STORAGE_CACHE_BYTES, DEFAULT_MIN_FREE_SPACE_BYTES,
        false, Duration.ZERO, DEFAULT_SCRUB_BYTES_PER_SECOND);
  }

  private StoreOptions(Engine engine, Path dataDirectory, Path clusterFile, Duration latency, long storageCacheBytes,
      long minFreeSpaceBytes, boolean verifyChecksumsAtOpen, Duration scrubInterval, long scrubBytesPerSecond) {
    this.verifyChecksumsAtOpen = verifyChecksumsAtOpen;
    this.scrubInterval = scrubInterval;
    this.scrubBytesPerSecond = scrubBytesPerSecond;
    this.engine = engine;
    this.dataDirectory = dataDirectory;
    this.clusterFile = clusterFile;
    this.latency = latency;
    this.storageCacheBytes = storageCacheBytes;
    this.minFreeSpaceBytes = minFreeSpaceBytes;
  }

  /** The embedded engine, in memory: nothing survives the process. */
  public static StoreOptions embeddedInMemory() {
    return new StoreOptions(Engine.EMBEDDED, null, null, Duration.ZERO);
  }

  /** The embedded engine, durable in {@code dataDirectory}. */
  public static StoreOptions embedded(Path dataDirectory) {
    return new StoreOptions(Engine.EMBEDDED, Objects.requireNonNull(dataDirectory, "dataDirectory"), null,
        Duration.ZERO);
  }

  /** A real FoundationDB cluster; null means the client library's default cluster file. */
  public static StoreOptions cluster(Path clusterFile) {
    return new StoreOptions(Engine.CLUSTER, null, clusterFile, Duration.ZERO);
  }

  /** The same options with injected latency per read and commit (embedded engine only). */
  public StoreOptions withLatency(Duration latency) {
    Objects.requireNonNull(latency, "latency");
    if (latency.isNegative()) {
      throw new IllegalArgumentException("latency must not be negative, got " + latency);
    }
    return new StoreOptions(engine, dataDirectory, clusterFile, latency, storageCacheBytes, minFreeSpaceBytes,
        verifyChecksumsAtOpen, scrubInterval, scrubBytesPerSecond);
  }

  /** The same options with another RocksDB block cache size (durable embedded engine only; off-heap). */
  public StoreOptions withStorageCacheBytes(long bytes) {
    if (bytes <= 0) {
      throw new IllegalArgumentException("storageCacheBytes must be positive, got " + bytes);
    }
    return new StoreOptions(engine, dataDirectory, clusterFile, latency, bytes, minFreeSpaceBytes,
        verifyChecksumsAtOpen, scrubInterval, scrubBytesPerSecond);
  }

  /** The durable embedded engine's RocksDB block cache, off-heap. */
  public long storageCacheBytes() {
    return storageCacheBytes;
  }

  /**
   * The same options with another disk-space reserve (durable embedded engine only): commits wait
   * while the data directory's disk has less free space (the embedded engine's {@code EmbeddedOptions.minFreeSpaceBytes}).
   */
  public StoreOptions withMinFreeSpaceBytes(long bytes) {
    if (bytes < 0) {
      throw new IllegalArgumentException("minFreeSpaceBytes must not be negative, got " + bytes);
    }
    return new StoreOptions(engine, dataDirectory, clusterFile, latency, storageCacheBytes, bytes,
        verifyChecksumsAtOpen, scrubInterval, scrubBytesPerSecond);
  }

  /** The durable embedded engine's disk-space reserve (0: no check). */
  public long minFreeSpaceBytes() {
    return minFreeSpaceBytes;
  }

  /**
   * The same options with the durable embedded engine's integrity checks: whether every block of its storage
   * is verified at open, how often a background scrub reads the whole storage ({@link Duration#ZERO}: never)
   * and at what average rate (the embedded engine's {@code EmbeddedOptions.verifyChecksumsAtOpen},
   * {@code scrubInterval}, {@code scrubBytesPerSecond}).
   */
  public StoreOptions withIntegrityChecks(boolean verifyAtOpen, Duration scrubEvery, long scrubBytesPerSec) {
    Objects.requireNonNull(scrubEvery, "scrubInterval");
    if (scrubEvery.isNegative()) {
      throw new IllegalArgumentException("scrubInterval must not be negative, got " + scrubEvery);
    }
    if (scrubBytesPerSec <= 0) {
      throw new IllegalArgumentException("scrubBytesPerSecond must be positive, got " + scrubBytesPerSec);
    }
    return new StoreOptions(engine, dataDirectory, clusterFile, latency, storageCacheBytes, minFreeSpaceBytes,
        verifyAtOpen, scrubEvery, scrubBytesPerSec);
  }

  /** Whether the durable embedded engine verifies every block of its storage when it opens. */
  public boolean verifyChecksumsAtOpen() {
    return verifyChecksumsAtOpen;
  }

  /** How often the durable embedded engine's background scrub runs ({@link Duration#ZERO}: never). */
  public Duration scrubInterval() {
    return scrubInterval;
  }

  /** The background scrub's average read rate. */
  public long scrubBytesPerSecond() {
    return scrubBytesPerSecond;
  }

  public Engine engine() {
    return engine;
  }

  /** The embedded engine's data directory, or null in memory. */
  public Path dataDirectory() {
    return dataDirectory;
  }

  /** The cluster file, or null for the default one. */
  public Path clusterFile() {
    return clusterFile;
  }

  public Duration latency() {
    return latency;
  }

  /**
   * Reads the store section (null or empty: the embedded engine in memory with every default). A value of the
   * wrong type or out of range, or a key not in {@link #KEYS} (a misspelling would otherwise fall back to a
   * default silently), fails naming the key as {@code store.<key>}.
   *
   * @throws IllegalArgumentException naming the offending key and what it must be
   */
  public static StoreOptions fromMap(Map<String, ?> section) {
    Map<String, ?> store = section == null ? Map.of() : section;
    for (String key : store.keySet()) {
      if (!KEYS.contains(key)) {
        throw new IllegalArgumentException("unknown key 'store." + key + "'; known keys: " + KEYS);
      }
    }
    String engine = string(store, "engine", "embedded");
    String dataDirectory = string(store, "dataDirectory", null);
    String clusterFile = string(store, "clusterFile", null);
    StoreOptions options;
    switch (engine) {
      case "embedded":
        options = dataDirectory == null ? embeddedInMemory() : embedded(path("dataDirectory", dataDirectory));
        break;
      case "cluster":
        options = cluster(clusterFile == null ? null : path("clusterFile", clusterFile));
        break;
      default:
        throw new IllegalArgumentException("store.engine must be \"embedded\" or \"cluster\", got \"" + engine + "\"");
    }
    long latencyMs = number(store, "latencyMs", 0, 0, 60_000);
    long storageCacheBytes = number(store, "storageCacheBytes", DEFAULT_STORAGE_CACHE_BYTES, 1L << 20, 1L << 40);
    long minFreeSpaceBytes = number(store, "minFreeSpaceBytes", DEFAULT_MIN_FREE_SPACE_BYTES, 0, Long.MAX_VALUE);
    boolean verifyChecksumsAtOpen = bool(store, "verifyChecksumsAtOpen", false);
    // Nanoseconds must fit a long: the engine schedules the scrub in them.
    long scrubIntervalMs = number(store, "scrubIntervalMs", 0, 0, Long.MAX_VALUE / 1_000_000);
    long scrubBytesPerSecond = number(store, "scrubBytesPerSecond", DEFAULT_SCRUB_BYTES_PER_SECOND, 1L << 10, 1L << 40);
    return options.withLatency(Duration.ofMillis(latencyMs)).withStorageCacheBytes(storageCacheBytes)
        .withMinFreeSpaceBytes(minFreeSpaceBytes)
        .withIntegrityChecks(verifyChecksumsAtOpen, Duration.ofMillis(scrubIntervalMs), scrubBytesPerSecond);
  }

  /**
   * The store section of these options, which {@link #fromMap} reads back to equal options (latency and scrub
   * interval in whole milliseconds). The data directory is written for the embedded engine and the cluster
   * file for a cluster, each only when set.
   */
  public Map<String, Object> toMap() {
    Map<String, Object> map = new LinkedHashMap<>();
    map.put("engine", engine == Engine.CLUSTER ? "cluster" : "embedded");
    if (dataDirectory != null) {
      map.put("dataDirectory", dataDirectory.toString());
    }
    if (clusterFile != null) {
      map.put("clusterFile", clusterFile.toString());
    }
    map.put("latencyMs", latency.toMillis());
    map.put("storageCacheBytes", storageCacheBytes);
    map.put("minFreeSpaceBytes", minFreeSpaceBytes);
    map.put("verifyChecksumsAtOpen", verifyChecksumsAtOpen);
    map.put("scrubIntervalMs", scrubInterval.toMillis());
    map.put("scrubBytesPerSecond", scrubBytesPerSecond);
    return map;
  }

  private static String string(Map<String, ?> store, String key, String def) {
    Object v = store.get(key);
    if (v == null) {
      return def;
    }
    if (!(v instanceof String s)) {
      throw new IllegalArgumentException("store." + key + " must be a string, got " + v);
    }
    return s;
  }

  private static Path path(String key, String value) {
    if (value.isBlank()) {
      throw new IllegalArgumentException("store." + key + " must not be empty: leave it out (or null) for the default");
    }
    try {
      return Path.of(value);
    } catch (InvalidPathException e) {
      throw new IllegalArgumentException("store." + key + " is not a valid path: " + e.getMessage(), e);
    }
  }

  private static boolean bool(Map<String, ?> store, String key, boolean def) {
    Object v = store.get(key);
    if (v == null) {
      return def;
    }
    if (!(v instanceof Boolean b)) {
      throw new IllegalArgumentException("store." + key + " must be true or false, got " + v);
    }
    return b;
  }

  private static long number(Map<String, ?> store, String key, long def, long min, long max) {
    Object v = store.get(key);
    if (v == null) {
      return def;
    }
    if (!(v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte)) {
      throw new IllegalArgumentException("store." + key + " must be an integer, got " + v);
    }
    long n = ((Number) v).longValue();
    if (n < min || n > max) {
      throw new IllegalArgumentException("store." + key + " must be between " + min + " and " + max + ", got " + n);
    }
    return n;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof StoreOptions other && engine == other.engine
        && Objects.equals(dataDirectory, other.dataDirectory) && Objects.equals(clusterFile, other.clusterFile)
        && latency.equals(other.latency) && storageCacheBytes == other.storageCacheBytes
        && minFreeSpaceBytes == other.minFreeSpaceBytes && verifyChecksumsAtOpen == other.verifyChecksumsAtOpen
        && scrubInterval.equals(other.scrubInterval) && scrubBytesPerSecond == other.scrubBytesPerSecond;
  }

  @Override
  public int hashCode() {
    return Objects.hash(engine, dataDirectory, clusterFile, latency, storageCacheBytes, minFreeSpaceBytes,
        verifyChecksumsAtOpen, scrubInterval, scrubBytesPerSecond);
  }

  @Override
  public String toString() {
    switch (engine) {
      case CLUSTER:
        return "cluster(" + (clusterFile == null ? "default cluster file" : clusterFile) + ")";
      default:
        return dataDirectory == null ? "embedded(in memory)" : "embedded(" + dataDirectory + ")";
    }
  }
}
