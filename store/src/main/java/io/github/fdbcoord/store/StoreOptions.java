package io.github.fdbcoord.store;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * Which FoundationDB engine to open: the embedded one (in memory, or durable in a data
 * directory), or a real cluster named by a cluster file.
 */
public final class StoreOptions {
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
