package io.github.fdbcoord.embedded.storage;

import io.github.fdbcoord.embedded.log.LogRecordWriter;

import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.rocksdb.Checkpoint;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.FlushOptions;
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
  private static final byte[] DURABLE_VERSION_KEY = "durable-version".getBytes(StandardCharsets.US_ASCII);
  /** Present once the commit log beside this storage keeps a manifest: from then on it must have one. */
  private static final byte[] LOG_MANIFEST_KEY = "log-manifest".getBytes(StandardCharsets.US_ASCII);

  static {
    RocksDB.loadLibrary();
  }

  private final Path dir;
  private final RocksHandles handles;
  private final RocksDB db;
  private final ColumnFamilyHandle data;
  private final ColumnFamilyHandle meta;
  /** Whether a compaction may start ({@link #roomForCompactions}), and what the running ones take. */
  private final StorageSpace space;
  private final WriteOptions unlogged;
  /** {@link #unlogged}, failing at once where RocksDB would make the write wait (see {@link #tryApply}). */
  private final WriteOptions unloggedNoWait;
  private final ReadOptions reads;
  /** Values read by key, on the heap, or null when turned off. */
  private final RowCache rows;
  /** Every apply up to this version has completed. */
  private volatile long durableVersion;
  /** An apply up to this version may be visible to readers (set before RocksDB is written). */
  private volatile long applyingVersion;
  private volatile boolean closed;
  /** Classifies RocksDB's failures; keeps the first damage found in the storage's files. */
  private final StorageDamage damage;
  private final RocksProperties properties;
  /** Serialises {@link #checkpoint} with {@link #close}: a checkpoint of a closed database would touch freed memory. */
  private final Object lifecycle = new Object();

  private RocksStorage(Path dir, RocksHandles handles, boolean compactionsLimited, long durableVersion,
      long rowCacheBytes) {
    this.dir = dir;
    this.handles = handles;
    this.db = handles.db;
    this.data = handles.data;
    this.meta = handles.meta;
    this.space = new StorageSpace(handles.db, handles.files, compactionsLimited);
    this.damage = new StorageDamage(dir);
    this.properties = new RocksProperties(dir, handles.db, handles.data, damage);
    this.unlogged = new WriteOptions().setDisableWAL(true);
    this.unloggedNoWait = new WriteOptions().setDisableWAL(true).setNoSlowdown(true);
    this.reads = new ReadOptions();
    this.rows = rowCacheBytes > 0 ? new RowCache(rowCacheBytes, this::read) : null;
    this.durableVersion = durableVersion;
    this.applyingVersion = durableVersion;
  }

  /** Opens (creating if needed) the storage under {@code dataDirectory}, without verifying its files first. */
  public static RocksStorage open(Path dataDirectory, long cacheBytes, long writeBufferBytes, long rowCacheBytes)
      throws IOException {
    return open(dataDirectory, cacheBytes, writeBufferBytes, rowCacheBytes, false);
  }

  /**
   * Opens (creating if needed) the storage under {@code dataDirectory}; with {@code verifyChecksums}, every
   * block of every table file is read and checked first (RocksDB checks a data block only when it is read).
   *
   * <p>Failures are told apart by RocksDB's status code, never by words of its message: a directory open
   * elsewhere fails with {@link IllegalStateException}, damage with an {@link IOException} naming the
   * damaged file. Two kinds of damage RocksDB would turn into silent loss are refused before it opens: a
   * missing {@code CURRENT} (RocksDB would start an empty database and delete the old one's files) and a
   * {@code MANIFEST} that no longer lists table files of the directory (RocksDB deletes the unlisted files as
   * obsolete): those are first linked into {@link #UNLISTED_DIRECTORY} of the data directory, so that the
   * error that follows (the commit log finds the storage older than it must be) can say why, and nothing is
   * lost. The copies go once the engine opened (after a crash, a flush's unfinished output is unlisted too).
   */
  public static RocksStorage open(Path dataDirectory, long cacheBytes, long writeBufferBytes, long rowCacheBytes,
      boolean verifyChecksums) throws IOException {
    return open(dataDirectory, cacheBytes, writeBufferBytes, rowCacheBytes, verifyChecksums, false);
  }

  /**
   * As {@link #open(Path, long, long, long, boolean)}; with {@code forReplay}, for a recovery that only writes
   * the log's tail: the data's memtable is then an unsorted vector, sorted once when it is flushed, instead of
   * a skip list that a random key costs a cache miss per level to insert into. Such a storage must be flushed
   * and closed after the replay, and opened again to serve.
   */
  public static RocksStorage open(Path dataDirectory, long cacheBytes, long writeBufferBytes, long rowCacheBytes,
      boolean verifyChecksums, boolean forReplay) throws IOException {
    return open(dataDirectory, cacheBytes, writeBufferBytes, rowCacheBytes, verifyChecksums, forReplay, false);
  }

  /**
   * As {@link #open(Path, long, long, long, boolean, boolean)}; with {@code compactionsWaitForRoom}, RocksDB starts
   * no compaction until {@link #roomForCompactions} is called: one it started at open (level 0 filled up while
   * compactions waited for room) took a file system's last free bytes before the engine could give it its room.
   */
  public static RocksStorage open(Path dataDirectory, long cacheBytes, long writeBufferBytes, long rowCacheBytes,
      boolean verifyChecksums, boolean forReplay, boolean compactionsWaitForRoom) throws IOException {
    Path dir = dataDirectory.resolve(DIRECTORY);
    RocksHandles handles = RocksHandles.open(dataDirectory, dir, cacheBytes, writeBufferBytes, verifyChecksums,
        forReplay, compactionsWaitForRoom);
    try {
      byte[] recorded = handles.db.get(handles.meta, DURABLE_VERSION_KEY);
      long durable = recorded == null ? 0 : ByteBuffer.wrap(recorded).getLong();
      return new RocksStorage(dir, handles, compactionsWaitForRoom, durable, rowCacheBytes);
    } catch (RocksDBException | RuntimeException e) {
      handles.close();
      if (e instanceof RocksDBException r) {
        throw StorageFiles.openFailure(dataDirectory, dir, r);
      }
      throw new IOException("cannot read the durable version of the engine's storage " + dir + ": " + e.getMessage(), e);
    }
  }

  /** Where table files the MANIFEST did not list are kept until the engine has opened (see {@link #open}). */
  public static final String UNLISTED_DIRECTORY = "storage-unlisted";

  /** What {@link #open} found unlisted, as a sentence for an error that follows it, or "" when nothing. */
  public String unlistedTablesNote() {
    return StorageFiles.unlistedTablesNote(dir, handles.unlistedTables);
  }

  /** Drops the copies of unlisted table files once the engine opened: they were a crashed flush's leftovers. */
  public void dropUnlistedTables() throws IOException {
    StorageFiles.dropUnlistedTables(dir, handles.unlistedTables);
  }

  /**
   * Reads every block of every table file the storage in {@code dir} lists and checks its checksum: one line
   * per damaged file, naming it (empty when none is). The storage must not be open for writing meanwhile.
   */
  public static List<String> verifyTables(Path dir) throws IOException {
    return StorageFiles.verifyTables(dir);
  }

  /** Records what the scrub found wrong with {@code file}, as a read that met it would. */
  void reportDamagedTable(Path file, String problem) {
    damage.reportTable(file, problem);
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
    return rows == null ? read(key) : rows.get(key);
  }

  /** Whether the row cache holds {@code key} (for tests). */
  boolean rowCached(byte[] key) {
    return rows != null && rows.lookup(key) != null;
  }

  private byte[] read(byte[] key) {
    try {
      return db.get(data, reads, key);
    } catch (RocksDBException e) {
      throw damage.failure("reading", e);
    }
  }

  /** An iterator over the stored keys; its view is fixed when it is created. The caller closes it. */
  RocksIterator iterator() {
    return db.newIterator(data, reads);
  }

  /**
   * Whether {@code it} is on a key. An iterator also stops being valid when a read of the storage failed
   * (a damaged block), which is not the end of the data: that fails here, as the read would have.
   */
  boolean valid(RocksIterator it) {
    if (it.isValid()) {
      return true;
    }
    try {
      it.status();
    } catch (RocksDBException e) {
      throw damage.failure("reading", e);
    }
    return false;
  }

  /** The first damage found in the storage's files (by a read, a write or the scrub), or null while none was. */
  public StorageFailure damage() {
    return damage.first();
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
    write(batch, throughVersion, unlogged);
  }

  /**
   * As {@link #apply}, except that where RocksDB would make the write wait (its writes slowed or stopped: too
   * many level-0 table files, which compactions move down, or memtables waiting for a flush) nothing is written
   * and false is answered. A compaction may wait for disk space ({@link #roomForCompactions}) as long as it
   * takes an operator to free some; a thread blocked in a write meanwhile could not even be stopped.
   */
  public boolean tryApply(WriteBatchBuilder batch, long throughVersion) {
    try {
      write(batch, throughVersion, unloggedNoWait);
      return true;
    } catch (StorageFailure f) {
      if (f.getCause() instanceof RocksDBException r && r.getStatus() != null
          && r.getStatus().getCode() == Status.Code.Incomplete) {
        return false;
      }
      throw f;
    }
  }

  private void write(WriteBatchBuilder batch, long throughVersion, WriteOptions options) {
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
      db.write(options, b);
    } catch (RocksDBException e) {
      throw damage.failure("writing", e);
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
      throw damage.failure("reading", e);
    }
  }

  /** Records, durably, that the commit log keeps a manifest from now on. */
  public void requireLogManifest() {
    try (WriteOptions synced = new WriteOptions().setSync(true)) {
      db.put(meta, synced, LOG_MANIFEST_KEY, new byte[] {1});
    } catch (RocksDBException e) {
      throw damage.failure("writing", e);
    }
  }

  /** Every commit up to this version is in the storage or being written to it. */
  public long applyingVersion() {
    return applyingVersion;
  }

  /**
   * Makes {@code target} (which must not exist) a consistent copy of the storage as it is now: RocksDB
   * flushes its memtables and hard-links its files there (copies them when {@code target} is on another
   * file system). Its durable version is at least the one before the call and at most
   * {@link #applyingVersion()} after it.
   */
  public void checkpoint(Path target) {
    synchronized (lifecycle) {
      if (closed) {
        throw new IllegalStateException("the engine's storage " + dir + " is closed");
      }
      try (Checkpoint checkpoint = Checkpoint.create(db)) {
        checkpoint.createCheckpoint(target.toString());
      } catch (RocksDBException e) {
        throw damage.failure("a checkpoint into " + target + " of", e);
      }
    }
  }

  /**
   * Lets RocksDB start a compaction only while its inputs (its estimate of its output, which exists beside them
   * until it ends), with those of the compactions running, fit in {@code bytes}: the free space it may take.
   * RocksDB checks the free space itself only after a write failed for lack of it; a compaction rewrites up to
   * the whole storage. One it refuses is tried again a second later. Until the first call, none is refused, unless
   * the storage was opened with {@code compactionsWaitForRoom}.
   */
  public void roomForCompactions(long bytes) {
    synchronized (lifecycle) {
      if (closed) {
        return;
      }
      space.allowCompactions(bytes);
    }
  }

  /**
   * What the compactions running now may still write: the size of their inputs (their output, which exists beside
   * them until they end, is about as large). 0 when compactions are not limited ({@code compactionsWaitForRoom}).
   */
  public long compactionBytesInFlight() {
    if (!space.compactionsLimited()) {
      return 0;
    }
    synchronized (lifecycle) {
      return closed ? 0 : space.compactionBytesInFlight();
    }
  }

  /** What makes RocksDB slow or stop writes, for a log line: the data's level-0 table files and memtables. */
  public String stallCause() {
    return properties.stallCause();
  }

  /** RocksDB's properties of the data and the table files it lists (for the scrub and tests). */
  RocksProperties properties() {
    return properties;
  }

  /** Makes everything applied so far durable in RocksDB's own files (the log behind it can then go). */
  public void flush() {
    // Without allowing a stall, a flush waits until it would not stall writes, which, with the compactions
    // waiting for disk space, was for ever (a close hung in it).
    try (FlushOptions options = new FlushOptions().setWaitForFlush(true).setAllowWriteStall(true)) {
      db.flush(options, List.of(data, meta));
    } catch (RocksDBException e) {
      throw damage.failure("flushing", e);
    }
  }

  @Override
  public void close() {
    synchronized (lifecycle) {
      closeOnce();
    }
  }

  private void closeOnce() {
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
    unloggedNoWait.close();
    reads.close();
    handles.close();
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
        throw damage.failure("batching a write for", e);
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
        throw damage.failure("batching a clear for", e);
      }
    }

    @Override
    public void clearRange(byte[] begin, byte[] end) {
      try {
        batch.deleteRange(data, begin, end);
        anyRange = true;
      } catch (RocksDBException e) {
        throw damage.failure("batching a range clear for", e);
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
    return StorageSpace.outOfSpace(failure);
  }

  /**
   * The storage failed: a failed write stops the engine, as a storage server that cannot write does; a failed
   * read fails that read (1522 when the storage is damaged, else 1510).
   */
  public static final class StorageFailure extends RuntimeException {
    private final boolean damaged;
    private final String file;

    StorageFailure(String message, Throwable cause, boolean damaged, String file) {
      super(message, cause);
      this.damaged = damaged;
      this.file = file;
    }

    /** Whether RocksDB found a file damaged (its status was Corruption), rather than failing to read or write. */
    public boolean damaged() {
      return damaged;
    }

    /** The damaged file RocksDB named, or null. */
    public String file() {
      return file;
    }
  }
}
