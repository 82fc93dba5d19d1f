package io.github.fdbcoord.embedded.storage;

import io.github.fdbcoord.embedded.log.LogRecordWriter;

import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.Cache;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.CompressionType;
import org.rocksdb.DBOptions;
import org.rocksdb.Env;
import org.rocksdb.Filter;
import org.rocksdb.FlushOptions;
import org.rocksdb.IndexType;
import org.rocksdb.LRUCache;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.SstFileManager;
import org.rocksdb.Status;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * The state of a durable engine below its MVCC window: a RocksDB database holding every commit up to
 * its <em>durable version</em>, as a FoundationDB storage server's disk store trails the versions it
 * keeps in memory.
 *
 * <p>Applies skip RocksDB's write-ahead log: the engine's commit log already holds every commit after
 * the durable version recorded here, so a crash that loses RocksDB's unflushed memtable loses the
 * durable-version record with it (both live in one atomically flushed memtable set) and recovery
 * replays those commits from the log again. The log is truncated only behind a version that a
 * {@link #flush()} made durable in RocksDB's own files.
 *
 * <p>Readers see whatever RocksDB holds when they read, which is the state at some version between
 * {@link #durableVersion()} and {@link #applyingVersion}: a reader at read version {@code rv} calls
 * {@link #checkReadable(long)} after its read, which fails when an apply beyond {@code rv} may have
 * been visible to it (only possible for a reader past the MVCC window, which is then too old).
 */
public final class RocksStorage implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(RocksStorage.class);
  /** The subdirectory of the data directory that RocksDB owns. */
  public static final String DIRECTORY = "storage";
  private static final byte[] META_FAMILY = "engine-meta".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] DURABLE_VERSION_KEY = "durable-version".getBytes(StandardCharsets.US_ASCII);
  /** Present once the commit log beside this storage keeps a manifest: from then on it must have one. */
  private static final byte[] LOG_MANIFEST_KEY = "log-manifest".getBytes(StandardCharsets.US_ASCII);

  static {
    RocksDB.loadLibrary();
  }

  private final Path dir;
  private final RocksDB db;
  private final ColumnFamilyHandle data;
  private final ColumnFamilyHandle meta;
  private final List<AutoCloseable> resources;
  private final WriteOptions unlogged;
  private final ReadOptions reads;
  /** Values read by key, on the heap, or null when turned off. */
  private final RowCache rows;
  /** Every apply up to this version has completed. */
  private volatile long durableVersion;
  /** An apply up to this version may be visible to readers (set before RocksDB is written). */
  private volatile long applyingVersion;
  private volatile boolean closed;

  private RocksStorage(Path dir, RocksDB db, ColumnFamilyHandle data, ColumnFamilyHandle meta,
      List<AutoCloseable> resources, long durableVersion, long rowCacheBytes) {
    this.dir = dir;
    this.db = db;
    this.data = data;
    this.meta = meta;
    this.resources = resources;
    this.unlogged = new WriteOptions().setDisableWAL(true);
    this.reads = new ReadOptions();
    this.rows = rowCacheBytes > 0 ? new RowCache(rowCacheBytes) : null;
    this.durableVersion = durableVersion;
    this.applyingVersion = durableVersion;
  }

  /** Opens (creating if needed) the storage under {@code dataDirectory}. */
  public static RocksStorage open(Path dataDirectory, long cacheBytes, long writeBufferBytes, long rowCacheBytes)
      throws IOException {
    Path dir = dataDirectory.resolve(DIRECTORY);
    Files.createDirectories(dir);
    List<AutoCloseable> resources = new ArrayList<>();
    Cache cache = blockCache(cacheBytes);
    resources.add(cache);
    BloomFilter bloom = new BloomFilter(10, false);
    resources.add(bloom);
    BlockBasedTableConfig table = tableConfig(cache, bloom);
    ColumnFamilyOptions family = new ColumnFamilyOptions()
        .setTableFormatConfig(table)
        .setWriteBufferSize(writeBufferBytes)
        .setMaxWriteBufferNumber(3)
        .setCompressionType(CompressionType.LZ4_COMPRESSION)
        .setLevelCompactionDynamicLevelBytes(true);
    resources.add(family);
    // With a file manager RocksDB resumes by itself after a write failed for lack of space.
    SstFileManager files;
    try {
      files = new SstFileManager(Env.getDefault());
    } catch (RocksDBException e) {
      closeAll(resources);
      throw new IOException("cannot open the engine's storage " + dir + ": " + e.getMessage(), e);
    }
    resources.add(files);
    DBOptions options = new DBOptions()
        .setSstFileManager(files)
        .setCreateIfMissing(true)
        .setCreateMissingColumnFamilies(true)
        // The data and the durable-version record must reach disk together.
        .setAtomicFlush(true)
        .setMaxBackgroundJobs(2)
        .setBytesPerSync(1L << 20)
        .setKeepLogFileNum(3);
    resources.add(options);
    List<ColumnFamilyDescriptor> families = List.of(
        new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, family),
        new ColumnFamilyDescriptor(META_FAMILY, family));
    List<ColumnFamilyHandle> handles = new ArrayList<>();
    RocksDB db;
    try {
      db = RocksDB.open(options, dir.toString(), families, handles);
    } catch (RocksDBException e) {
      closeAll(resources);
      String message = String.valueOf(e.getMessage());
      if (message.contains("lock") || message.contains("LOCK")) {
        throw new IllegalStateException("data directory " + dataDirectory + " is in use: its storage " + dir
            + " is open elsewhere (" + message + ")", e);
      }
      throw new IOException("cannot open the engine's storage " + dir + ": " + message, e);
    }
    try {
      byte[] recorded = db.get(handles.get(1), DURABLE_VERSION_KEY);
      long durable = recorded == null ? 0 : ByteBuffer.wrap(recorded).getLong();
      List<AutoCloseable> owned = new ArrayList<>(handles);
      owned.addAll(resources);
      return new RocksStorage(dir, db, handles.get(0), handles.get(1), owned, durable, rowCacheBytes);
    } catch (RocksDBException | RuntimeException e) {
      handles.forEach(ColumnFamilyHandle::close);
      db.close();
      closeAll(resources);
      throw new IOException("cannot read the durable version of the engine's storage " + dir + ": " + e.getMessage(), e);
    }
  }

  /**
   * The block cache: few shards, half of it kept for index and filter blocks. A metadata block larger
   * than its shard is evicted at once, and every read then parses it again from the file (about 1 ms a
   * read with RocksDB's default 64 shards of a 64 MiB cache).
   */
  public static Cache blockCache(long bytes) {
    return new LRUCache(bytes, 2, false, 0.5);
  }

  /** The storage's table options (public so that benchmarks compare RocksDB alone with the same ones). */
  public static BlockBasedTableConfig tableConfig(Cache cache, Filter bloom) {
    return new BlockBasedTableConfig()
        .setBlockCache(cache)
        .setFilterPolicy(bloom)
        // Index and filter blocks live in the block cache too, so RocksDB's memory stays within
        // the configured cache however many keys are stored; partitioned into 4 KiB pieces, so that
        // what a read needs is small and stays cached, with only the top level pinned.
        .setCacheIndexAndFilterBlocks(true)
        .setCacheIndexAndFilterBlocksWithHighPriority(true)
        .setIndexType(IndexType.kTwoLevelIndexSearch)
        .setPartitionFilters(true)
        .setMetadataBlockSize(4096)
        .setPinTopLevelIndexAndFilter(true)
        .setPinL0FilterAndIndexBlocksInCache(true)
        .setBlockSize(16 * 1024);
  }

  public Path directory() {
    return dir;
  }

  /** Every commit up to this version is in the storage (not necessarily flushed to its files yet). */
  public long durableVersion() {
    return durableVersion;
  }

  /** The value stored for {@code key}, or null. */
  byte[] get(byte[] key) {
    if (rows == null) {
      return read(key);
    }
    byte[] cached = rows.lookup(key);
    if (cached != null) {
      return cached;
    }
    long seen = rows.generation();
    byte[] value = read(key);
    if (value != null) {
      rows.offer(key, value, seen);
    }
    return value;
  }

  /** Whether the row cache holds {@code key} (for tests). */
  boolean rowCached(byte[] key) {
    return rows != null && rows.lookup(key) != null;
  }

  private byte[] read(byte[] key) {
    try {
      return db.get(data, reads, key);
    } catch (RocksDBException e) {
      throw new StorageFailure("reading " + dir + " failed: " + e.getMessage(), e);
    }
  }

  /** An iterator over the stored keys; its view is fixed when it is created. The caller closes it. */
  RocksIterator iterator() {
    return db.newIterator(data, reads);
  }

  /** Fails with {@link VersionedStore.TooOld} when what a reader at {@code readVersion} just read may be newer. */
  void checkReadable(long readVersion) {
    if (applyingVersion > readVersion) {
      throw VersionedStore.TooOld.INSTANCE;
    }
  }

  /** A batch of writes to the stored keys, for {@link #apply}. */
  public WriteBatchBuilder batch() {
    return new WriteBatchBuilder();
  }

  /**
   * Writes {@code batch} and records {@code throughVersion} (or leaves the recorded version unchanged when it is
   * negative, as while a legacy snapshot is loaded) in the same atomic write.
   */
  public void apply(WriteBatchBuilder batch, long throughVersion) {
    if (rows != null) {
      rows.beginApply();
    }
    try (WriteBatch b = batch.batch) {
      if (throughVersion >= 0) {
        if (throughVersion < durableVersion) {
          throw new IllegalArgumentException("storage version must not go back: " + throughVersion + " < " + durableVersion);
        }
        b.put(meta, DURABLE_VERSION_KEY, ByteBuffer.allocate(8).putLong(throughVersion).array());
        applyingVersion = Math.max(applyingVersion, throughVersion);
      }
      db.write(unlogged, b);
    } catch (RocksDBException e) {
      throw new StorageFailure("writing " + dir + " failed: " + e.getMessage(), e);
    } finally {
      if (rows != null) {
        rows.endApply(batch.keys, batch.anyRange);
      }
    }
    // Only now: a reader that sees the new durable version finds no older value in the row cache.
    if (throughVersion >= 0) {
      durableVersion = throughVersion;
    }
  }


  /** Whether the commit log beside this storage has kept a manifest (so a missing one is damage). */
  public boolean logManifestRequired() {
    try {
      return db.get(meta, LOG_MANIFEST_KEY) != null;
    } catch (RocksDBException e) {
      throw new StorageFailure("reading " + dir + " failed: " + e.getMessage(), e);
    }
  }

  /** Records, durably, that the commit log keeps a manifest from now on. */
  public void requireLogManifest() {
    try (WriteOptions synced = new WriteOptions().setSync(true)) {
      db.put(meta, synced, LOG_MANIFEST_KEY, new byte[] {1});
    } catch (RocksDBException e) {
      throw new StorageFailure("writing " + dir + " failed: " + e.getMessage(), e);
    }
  }

  /** Makes everything applied so far durable in RocksDB's own files (the log behind it can then go). */
  public void flush() {
    try (FlushOptions options = new FlushOptions().setWaitForFlush(true)) {
      db.flush(options, List.of(data, meta));
    } catch (RocksDBException e) {
      throw new StorageFailure("flushing " + dir + " failed: " + e.getMessage(), e);
    }
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      db.cancelAllBackgroundWork(true);
    } catch (RuntimeException e) {
      LOG.warn("engine storage " + dir + ": stopping background work failed", e);
    }
    unlogged.close();
    reads.close();
    for (AutoCloseable r : resources) {
      if (r instanceof ColumnFamilyHandle h) {
        h.close();
      }
    }
    db.close();
    closeAll(resources);
  }

  private static void closeAll(List<AutoCloseable> resources) {
    for (AutoCloseable r : resources) {
      if (r instanceof ColumnFamilyHandle) {
        continue;
      }
      try {
        r.close();
      } catch (Exception e) {
        // Native handles: nothing left to do.
      }
    }
  }

  /** Collects the writes of one apply. */
  public final class WriteBatchBuilder implements LogRecordWriter.Visitor {
    private final WriteBatch batch = new WriteBatch();
    /** What the row cache must forget once the batch is written. */
    private final List<byte[]> keys = new ArrayList<>();
    private boolean anyRange;

    @Override
    public void set(byte[] key, byte[] value) {
      try {
        batch.put(data, key, value);
        if (rows != null) {
          keys.add(key);
        }
      } catch (RocksDBException e) {
        throw new StorageFailure("batching a write for " + dir + " failed: " + e.getMessage(), e);
      }
    }

    @Override
    public void clear(byte[] key) {
      try {
        batch.delete(data, key);
        if (rows != null) {
          keys.add(key);
        }
      } catch (RocksDBException e) {
        throw new StorageFailure("batching a clear for " + dir + " failed: " + e.getMessage(), e);
      }
    }

    @Override
    public void clearRange(byte[] begin, byte[] end) {
      try {
        batch.deleteRange(data, begin, end);
        anyRange = true;
      } catch (RocksDBException e) {
        throw new StorageFailure("batching a range clear for " + dir + " failed: " + e.getMessage(), e);
      }
    }

    /** Bytes batched so far. */
    public long size() {
      return batch.getDataSize();
    }

    public int count() {
      return batch.count();
    }
  }

  /**
   * Whether {@code failure} (or one of its causes) is RocksDB refusing a write for lack of disk space,
   * told by its status's sub-code. RocksDB then recovers on its own once space is back (its
   * {@link SstFileManager} watches the free space; {@code Resume} is not in the Java API), and the
   * failed write can be retried.
   */
  public static boolean outOfSpace(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof RocksDBException r && r.getStatus() != null
          && r.getStatus().getSubCode() == Status.SubCode.NoSpace) {
        return true;
      }
    }
    return false;
  }

  /** The storage failed: the engine stops, as a storage server that cannot write does. */
  static final class StorageFailure extends RuntimeException {
    StorageFailure(String message, Throwable cause) {
      super(message, cause);
    }
  }
}
