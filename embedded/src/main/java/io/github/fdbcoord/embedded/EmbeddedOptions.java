package io.github.fdbcoord.embedded;

import io.github.fdbcoord.embedded.engine.ApplyObserver;
import io.github.fdbcoord.embedded.engine.EngineConfig;
import io.github.fdbcoord.embedded.log.FileLayer;
import io.github.fdbcoord.store.StoreOptions;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executor;

/**
 * How an {@link EmbeddedDatabase} is opened. Immutable; build with {@link #builder()}.
 *
 * <p>Defaults: in memory (no data directory), no injected latency, a private cached pool of daemon
 * threads (as fdb-java's) as the transactions' default executor.
 */
public final class EmbeddedOptions {
  /** The default of {@link #minFreeSpaceBytes()}: 100 MiB. */
  public static final long DEFAULT_MIN_FREE_SPACE_BYTES = StoreOptions.DEFAULT_MIN_FREE_SPACE_BYTES;

  /** The default of {@link #scrubBytesPerSecond()}: 16 MiB/s. */
  public static final long DEFAULT_SCRUB_BYTES_PER_SECOND = StoreOptions.DEFAULT_SCRUB_BYTES_PER_SECOND;

  // The engine's own record holds every setting but the executor, so none is copied from these options to it.
  private final EngineConfig config;
  private final Executor executor;

  private EmbeddedOptions(EngineConfig config, Executor executor) {
    this.config = config;
    this.executor = executor;
  }

  public static Builder builder() {
    return new Builder();
  }

  /**
   * A builder starting from what {@code store} says of this engine (engine {@link StoreOptions.Engine#EMBEDDED}):
   * its data directory, latency (reads and commits), storage cache, disk-space reserve and integrity checks.
   */
  public static Builder builder(StoreOptions store) {
    return builder().dataDirectory(store.dataDirectory()).latency(store.latency())
        .storageCacheBytes(store.storageCacheBytes()).minFreeSpaceBytes(store.minFreeSpaceBytes())
        .verifyChecksumsAtOpen(store.verifyChecksumsAtOpen()).scrubInterval(store.scrubInterval())
        .scrubBytesPerSecond(store.scrubBytesPerSecond());
  }

  /** In memory, no latency, default executor. */
  public static EmbeddedOptions inMemory() {
    return builder().build();
  }

  /** Durable in {@code dir}: a commit is acknowledged once it is fsynced there. */
  public static EmbeddedOptions durable(Path dir) {
    return builder().dataDirectory(dir).build();
  }

  /** The data directory, or null when the engine runs in memory. */
  public Path dataDirectory() {
    return config.dataDirectory();
  }

  /** Delay added to every read that goes to storage (get, getKey, each range batch, read version). */
  public Duration readLatency() {
    return Duration.ofNanos(config.readLatencyNanos());
  }

  /** Delay added to every commit, before it is resolved. */
  public Duration commitLatency() {
    return Duration.ofNanos(config.commitLatencyNanos());
  }

  /** The default executor of transactions, or null for the engine's own cached thread pool. */
  public Executor executor() {
    return executor;
  }

  /**
   * The commit log is truncated, behind the version the storage has flushed, once it grows past
   * this many bytes (the most a restart replays, plus the last few seconds of commits).
   */
  public long compactAfterLogBytes() {
    return config.compactAfterLogBytes();
  }

  /** RocksDB's block cache (off-heap), which also holds its index and filter blocks. */
  public long storageCacheBytes() {
    return config.storageCacheBytes();
  }

  /**
   * Heap for values read from the storage, by key (durable mode): hot keys are answered without a call
   * into RocksDB. 0 turns it off.
   */
  public long rowCacheBytes() {
    return config.rowCacheBytes();
  }

  /** RocksDB's memtable size (off-heap; up to three exist at once). */
  public long storageWriteBufferBytes() {
    return config.storageWriteBufferBytes();
  }

  /**
   * Commits wait while the changes not yet moved into the storage (the MVCC window's and any lag of
   * the storage behind it) exceed this many bytes of log records: the heap they take stays bounded.
   */
  public long maxUnappliedBytes() {
    return config.maxUnappliedBytes();
  }

  /**
   * Commits wait while the file system of the data directory (or of the storage) has less than this
   * many bytes free, and resume once space is freed; reads go on. FoundationDB's ratekeeper stops
   * transactions the same way when a log or storage server runs short of space (its default reserve is
   * 100 MB): an engine that ran into a full disk would stop until restarted. The commit log's segments count
   * as taken (the storage writes their commits again before they can go), and the storage's compactions start
   * only while they leave half of it free, so the engine's own writes keep half of it. 0 turns the check off.
   */
  public long minFreeSpaceBytes() {
    return config.minFreeSpaceBytes();
  }

  /** Where RocksDB keeps the state below the MVCC window (the data directory unless a test moved it); null in memory. */
  public Path storageDirectory() {
    return config.storageDirectory();
  }

  /**
   * Whether {@link EmbeddedDatabase#open} first reads every block of the storage's table files and checks its
   * checksum, failing when one is damaged (naming each damaged file). Off by default: RocksDB checks a block
   * when a read needs it, and a read of a damaged block fails with 1522; this finds damage before any read,
   * at the cost of reading the whole storage (BENCHMARKS.md, "Recovery, integrity and backup").
   */
  public boolean verifyChecksumsAtOpen() {
    return config.verifyChecksumsAtOpen();
  }

  /**
   * How often a background scrub reads every block of the storage's table files (durable mode), or
   * {@link Duration#ZERO} (the default) for never. Damage it finds is reported as a read meeting it would be
   * ({@link EmbeddedDatabase#storageDamage()}, logged once).
   */
  public Duration scrubInterval() {
    return Duration.ofNanos(config.scrubIntervalNanos());
  }

  /** The most bytes per second the background scrub reads, on average over a file. */
  public long scrubBytesPerSecond() {
    return config.scrubBytesPerSecond();
  }

  /** What the data directory's files are read and written through (tests put a non-durable file system here). */
  public FileLayer files() {
    return config.files();
  }

  /** What the engine needs of these options. */
  EngineConfig engineConfig() {
    return config;
  }

  /** Builds {@link EmbeddedOptions}; every setting has a default. */
  public static final class Builder {
    private Path dataDirectory;
    private Duration readLatency = Duration.ZERO;
    private Duration commitLatency = Duration.ZERO;
    private Executor executor;
    private long compactAfterLogBytes = 64L << 20;
    private FileLayer files = FileLayer.NIO;
    private long storageCacheBytes = StoreOptions.DEFAULT_STORAGE_CACHE_BYTES;
    private long storageWriteBufferBytes = 32L << 20;
    private Path storageDirectory;
    private long maxUnappliedBytes = 256L << 20;
    private long rowCacheBytes = 32L << 20;
    private long minFreeSpaceBytes = DEFAULT_MIN_FREE_SPACE_BYTES;
    private ApplyObserver applyObserver;
    private boolean verifyChecksumsAtOpen;
    private Duration scrubInterval = Duration.ZERO;
    private long scrubBytesPerSecond = DEFAULT_SCRUB_BYTES_PER_SECOND;

    private Builder() {}

    /** See {@link EmbeddedOptions#verifyChecksumsAtOpen()}. */
    public Builder verifyChecksumsAtOpen(boolean verify) {
      this.verifyChecksumsAtOpen = verify;
      return this;
    }

    /** See {@link EmbeddedOptions#scrubInterval()}; {@link Duration#ZERO} turns the scrub off. */
    public Builder scrubInterval(Duration interval) {
      this.scrubInterval = requireNonNegative(interval, "scrubInterval");
      return this;
    }

    /** See {@link EmbeddedOptions#scrubBytesPerSecond()}. */
    public Builder scrubBytesPerSecond(long bytes) {
      this.scrubBytesPerSecond = requirePositive(bytes, "scrubBytesPerSecond");
      return this;
    }

    public Builder dataDirectory(Path dir) {
      this.dataDirectory = dir;
      return this;
    }

    /** Same delay for reads and commits, as a network round trip to a cluster would add. */
    public Builder latency(Duration latency) {
      return readLatency(latency).commitLatency(latency);
    }

    public Builder readLatency(Duration latency) {
      this.readLatency = requireNonNegative(latency, "readLatency");
      return this;
    }

    public Builder commitLatency(Duration latency) {
      this.commitLatency = requireNonNegative(latency, "commitLatency");
      return this;
    }

    /**
     * The transactions' default executor, where futures complete and continuations run. It must
     * run every task it accepts in bounded time (a fork-join pool does not: its workers prefer the
     * tasks they submitted themselves) and, if callbacks block, have threads to spare.
     */
    public Builder executor(Executor executor) {
      this.executor = executor;
      return this;
    }

    public Builder compactAfterLogBytes(long bytes) {
      if (bytes <= 0) {
        throw new IllegalArgumentException("compactAfterLogBytes must be positive, got " + bytes);
      }
      this.compactAfterLogBytes = bytes;
      return this;
    }

    public Builder storageCacheBytes(long bytes) {
      this.storageCacheBytes = requirePositive(bytes, "storageCacheBytes");
      return this;
    }

    public Builder storageWriteBufferBytes(long bytes) {
      this.storageWriteBufferBytes = requirePositive(bytes, "storageWriteBufferBytes");
      return this;
    }

    public Builder rowCacheBytes(long bytes) {
      if (bytes < 0) {
        throw new IllegalArgumentException("rowCacheBytes must not be negative, got " + bytes);
      }
      this.rowCacheBytes = bytes;
      return this;
    }

    public Builder minFreeSpaceBytes(long bytes) {
      if (bytes < 0) {
        throw new IllegalArgumentException("minFreeSpaceBytes must not be negative, got " + bytes);
      }
      this.minFreeSpaceBytes = bytes;
      return this;
    }

    public Builder maxUnappliedBytes(long bytes) {
      this.maxUnappliedBytes = requirePositive(bytes, "maxUnappliedBytes");
      return this;
    }

    /** Tests whose log lives on a simulated file system keep the storage in a real directory. */
    Builder storageDirectory(Path dir) {
      this.storageDirectory = dir;
      return this;
    }

    private static long requirePositive(long bytes, String name) {
      if (bytes <= 0) {
        throw new IllegalArgumentException(name + " must be positive, got " + bytes);
      }
      return bytes;
    }

    /** Tests stop or stall this database's applier at its steps (crash and back-pressure tests). */
    Builder applyObserver(ApplyObserver observer) {
      this.applyObserver = observer;
      return this;
    }

    Builder files(FileLayer files) {
      this.files = Objects.requireNonNull(files, "files");
      return this;
    }

    public EmbeddedOptions build() {
      Path storage = dataDirectory == null ? null : storageDirectory != null ? storageDirectory : dataDirectory;
      return new EmbeddedOptions(new EngineConfig(dataDirectory, storage, files, readLatency.toNanos(),
          commitLatency.toNanos(), compactAfterLogBytes, storageCacheBytes, storageWriteBufferBytes, rowCacheBytes,
          maxUnappliedBytes, minFreeSpaceBytes, applyObserver, verifyChecksumsAtOpen, scrubInterval.toNanos(),
          scrubBytesPerSecond), executor);
    }

    private static Duration requireNonNegative(Duration d, String name) {
      Objects.requireNonNull(d, name);
      if (d.isNegative()) {
        throw new IllegalArgumentException(name + " must not be negative, got " + d);
      }
      return d;
    }
  }
}
