package io.github.fdbcoord.embedded.log;

import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;
import java.io.Closeable;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.text.MessageFormat;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The embedded engine's durable commit log: an append-only log of commit records with group commit,
 * plus snapshots that let old log be deleted.
 *
 * <h2>Files in the directory</h2>
 *
 * <ul>
 *   <li>{@code LOCK}: held with an exclusive {@link FileLock} while the log is open.
 *   <li>{@code log-<base>.seg}: segments. Every record in a segment has a version >= base, and a segment
 *       started by {@link #rollSegment()} has base = (last version of the previous segment) + 1, so
 *       recovery can tell when a segment is missing. Only the last segment is appended to.
 *   <li>{@code snapshot-<version>.snap}: the full state at that version. {@code ...snap.tmp} is one being
 *       written; it is ignored and deleted on open.
 * </ul>
 *
 * The byte layouts are in {@link LogFormat}. Each record carries a CRC32C over its header and payload and
 * the number of the write+fsync cycle ("batch") that wrote it; each snapshot entry carries its own CRC32C
 * and the snapshot ends with a trailer (entry count, version, CRC32C of the whole file) that marks it
 * complete.
 *
 * <h2>Group commit</h2>
 *
 * {@link #append} only queues the record. One daemon thread takes everything queued, writes it with one
 * write and one {@code fdatasync} ({@link FileChannel#force(boolean) force(false)}), then hands those
 * futures to a second daemon thread that completes them in order; whatever arrives during the sync goes
 * into the next batch. Batch n+1 is written only after batch
 * n's sync returned; recovery relies on that to tell a torn tail from corruption (see {@link SegmentReader}).
 *
 * <h2>Recovery</h2>
 *
 * The newest snapshot that checks out completely is loaded (an incomplete or corrupt one is skipped with a
 * warning, and the previous snapshot plus the segments are used, because segments are deleted only after a
 * newer snapshot is durable). Then records with versions above the snapshot's are replayed in order. A bad
 * record in a segment other than the last, or one followed by a later fully synced batch, fails the open
 * with an {@link IOException}: it is corruption of acknowledged commits, not a crash artefact. A bad tail
 * of the last segment was never acknowledged: it is dropped and the file truncated. If {@code open} throws,
 * whatever it had passed to the replay must be discarded.
 *
 * <h2>Compaction</h2>
 *
 * {@link #rollSegment()} (under the engine's commit lock) closes the current segment at the current version
 * V; {@link #writeSnapshot} (anywhere) writes the state at V to a temp file, fsyncs it, renames it,
 * fsyncs the directory, and only then deletes the segments and snapshots it covers.
 *
 * <p>All file I/O goes through a {@link FileLayer} (the real file system unless a test puts a
 * non-durable one beneath the log).
 */
public final class CommitLog implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(CommitLog.class);
  /** Zero-filled space written ahead of the records at a time. */
  static final long PREALLOCATE_BYTES = 1L << 20;

  /** Receives recovered state, in order: snapshot entries first (any order), then records with version > snapshot version, ascending. */
  public interface Replay {
    void snapshotEntry(byte[] key, byte[] value);

    /** Called once after the last entry of a loaded (legacy) snapshot. */
    default void snapshotLoaded(long version) {}

    void record(long version, byte[] payload);
  }

  /** A queued record. */
  private record Pending(long version, byte[] payload, CompletableFuture<Void> future) {}

  /** A queued request to start a new segment whose records all have versions >= base. */
  private record Roll(long base, CompletableFuture<Void> future) {}

  private static final class Segment {
    final Path path;
    final long base;
    /** Version of the last record synced to it, base - 1 when it has none. */
    long lastVersion;
    long records;
    boolean closed;

    Segment(Path path, long base, long lastVersion, long records) {
      this.path = path;
      this.base = base;
      this.lastVersion = lastVersion;
      this.records = records;
    }
  }

  private final FileLayer files;
  private final Path dir;
  private final Closeable lock;
  private final long recoveredVersion;

  // Guarded by mutex: the queue and everything the appending side decides.
  private final ReentrantLock mutex = new ReentrantLock();
  private final Condition queued = mutex.newCondition();
  private ArrayList<Object> queue = new ArrayList<>();
  private long lastVersion;
  private long bytesSinceSnapshot;
  private boolean closing;
  private IOException failure;
  /** Rolls not yet covered by a snapshot, by the version rollSegment returned. */
  private final Map<Long, CompletableFuture<Void>> rolls = new HashMap<>();

  // Guarded by itself: the sync thread adds and closes segments, writeSnapshot deletes closed ones.
  private final List<Segment> segments;

  // Owned by the sync thread after open.
  private FileLayer.OpenFile channel;
  /** End of the records in the current segment: where the next write goes. */
  private long writePos;
  /** End of the zero-filled space written ahead of writePos. */
  private long allocatedEnd;
  private final ByteBuffer zeros = ByteBuffer.allocateDirect(1 << 16);
  private Segment current;
  private long nextBatch;
  private ByteBuffer out = ByteBuffer.allocateDirect(1 << 20);

  private final Object snapshotLock = new Object();
  private long snapshotVersion;

  /** Serialises manifest writes; holds the last one written. */
  private final Object manifestLock = new Object();
  private Manifest manifest;
  /** Version of the newest synced record (or the recovered version): what the manifest may call acknowledged. */
  private volatile long syncedVersion;

  private final AtomicLong syncs = new AtomicLong();
  private final Thread syncThread;
  /**
   * Completes record futures, in order. Off the sync thread, so the next write+fsync starts while the
   * callers' continuations run (measured in the engine: a third of each sync cycle), and so no caller code
   * ever runs on the thread that touches the file (an interrupt there would close the channel).
   */
  private final ExecutorService completer;
  private volatile Thread completerThread;
  private boolean closed;

  private CommitLog(FileLayer files, Path dir, Closeable lock, Recovery recovery) {
    this.files = files;
    this.dir = dir;
    this.lock = lock;
    this.recoveredVersion = recovery.version;
    this.lastVersion = recovery.version;
    this.bytesSinceSnapshot = recovery.liveBytes;
    this.segments = recovery.segments;
    this.current = segments.get(segments.size() - 1);
    this.channel = recovery.channel;
    this.writePos = recovery.writePos;
    this.allocatedEnd = recovery.writePos;
    this.nextBatch = recovery.nextBatch;
    this.snapshotVersion = recovery.snapshotVersion;
    this.syncedVersion = recovery.version;
    this.completer = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "commit-log-complete " + dir);
      t.setDaemon(true);
      completerThread = t;
      return t;
    });
    this.syncThread = new Thread(this::syncLoop, "commit-log-sync " + dir);
    this.syncThread.setDaemon(true);
    this.syncThread.start();
  }

  /** Opens (creating if needed) the log in dir, replays what is there into replay, drops a torn/corrupt tail (truncating the file so later appends follow the last good record). Takes an exclusive lock on the directory (FileChannel.tryLock on a lock file): a second open of the same dir fails with IllegalStateException saying the directory is in use. */
  public static CommitLog open(Path dir, Replay replay) throws IOException {
    return open(FileLayer.NIO, dir, replay);
  }

  /** {@link #open(Path, Replay)} with its file I/O going through {@code files}. */
  public static CommitLog open(FileLayer files, Path dir, Replay replay) throws IOException {
    return open(files, dir, 0, replay);
  }

  /** Opens the log for a caller whose storage already holds every record up to {@code durableVersion}. */
  public static CommitLog open(FileLayer files, Path dir, long durableVersion, Replay replay) throws IOException {
    return open(files, dir, durableVersion, false, replay);
  }

  /**
   * Opens the log for a caller whose storage already holds every record up to {@code durableVersion};
   * with {@code requireManifest} a directory without a {@link Manifest} fails to open (the caller knows
   * the log had one: a directory written before manifests existed gets one on its first open).
   */
  public static CommitLog open(FileLayer files, Path dir, long durableVersion, boolean requireManifest,
      Replay replay) throws IOException {
    Objects.requireNonNull(files, "files");
    Objects.requireNonNull(dir, "dir");
    Objects.requireNonNull(replay, "replay");
    files.createDirectories(dir);
    Closeable lock = files.tryLock(dir.resolve(LogFormat.LOCK_FILE));
    if (lock == null) {
      throw new IllegalStateException("commit log directory " + dir + " is in use: another CommitLog holds "
          + dir.resolve(LogFormat.LOCK_FILE));
    }
    CommitLog log = null;
    try {
      Recovery recovery = recover(files, dir, durableVersion, requireManifest, replay);
      log = new CommitLog(files, dir, lock, recovery);
      log.writeManifest();
      for (Path p : recovery.covered) {
        files.deleteIfExists(p);
      }
      if (!recovery.covered.isEmpty()) {
        files.syncDirectory(dir);
      }
      return log;
    } catch (IOException | RuntimeException | Error e) {
      if (log != null) {
        log.close();
      } else {
        lock.close();
      }
      throw e;
    }
  }

  /** Highest version recovered (snapshot or record), 0 if empty. */
  public long recoveredVersion() {
    return recoveredVersion;
  }

  /**
   * Appends a record. Called by the engine under its commit lock, in strictly ascending version order.
   * Returns quickly (no fsync on the caller's thread); the future completes once the record and all before
   * it are fsynced. Futures complete in order on the log's completion thread (the engine hops to its
   * executor itself; continuations there delay other commits' completions, not the next fsync). If an
   * I/O error happens, that future and all later ones fail with the IOException (wrapped in
   * UncheckedIOException) and the log refuses further appends.
   *
   * <p>The log keeps {@code payload} until it is written: the caller must not change it afterwards.
   *
   * @throws IllegalArgumentException if the version does not ascend or the payload is too large
   * @throws IllegalStateException if the log is closed
   */
  public CompletableFuture<Void> append(long version, byte[] payload) {
    Objects.requireNonNull(payload, "payload");
    if (payload.length > LogFormat.MAX_PAYLOAD) {
      throw new IllegalArgumentException("commit log record of " + payload.length + " bytes exceeds the limit of "
          + LogFormat.MAX_PAYLOAD);
    }
    mutex.lock();
    try {
      if (closing) {
        throw new IllegalStateException("commit log " + dir + " is closed");
      }
      if (failure != null) {
        return CompletableFuture.failedFuture(new UncheckedIOException(failure));
      }
      if (version <= lastVersion) {
        throw new IllegalArgumentException("commit log versions must ascend: got " + version + " after "
            + lastVersion);
      }
      lastVersion = version;
      bytesSinceSnapshot += LogFormat.RECORD_HEADER_SIZE + payload.length;
      CompletableFuture<Void> future = new CompletableFuture<>();
      enqueue(new Pending(version, payload, future));
      return future;
    } finally {
      mutex.unlock();
    }
  }

  /** Bytes appended since the last snapshot (the engine uses it to decide when to compact); reset by {@link #rollSegment()}, the start of the next snapshot. */
  public long bytesSinceSnapshot() {
    mutex.lock();
    try {
      return bytesSinceSnapshot;
    } finally {
      mutex.unlock();
    }
  }

  /** Compaction, step 1, called under the engine's commit lock: starts a new log segment, so every record appended afterwards goes to the new segment. Returns the version of the last record in the old segments (the caller passes the state at exactly this version to writeSnapshot). */
  public long rollSegment() throws IOException {
    mutex.lock();
    try {
      if (closing) {
        throw new IllegalStateException("commit log " + dir + " is closed");
      }
      if (failure != null) {
        throw new IOException("commit log " + dir + " failed earlier", failure);
      }
      long version = lastVersion;
      rolls.computeIfAbsent(version, v -> {
        CompletableFuture<Void> done = new CompletableFuture<>();
        enqueue(new Roll(v + 1, done));
        return done;
      });
      bytesSinceSnapshot = 0;
      return version;
    } finally {
      mutex.unlock();
    }
  }

  /** Compaction, step 2, called off the commit lock on any thread: writes the full state at `version` (the value returned by rollSegment) to a snapshot file atomically (temp file, fsync, rename, fsync dir), then deletes the segments and older snapshots it covers. Concurrent appends continue meanwhile. A crash at any point must leave a recoverable directory. */
  public void writeSnapshot(long version, Iterator<Map.Entry<byte[], byte[]>> state) throws IOException {
    Objects.requireNonNull(state, "state");
    synchronized (snapshotLock) {
      CompletableFuture<Void> roll;
      mutex.lock();
      try {
        if (closed) {
          // The directory lock may belong to another process by now: touch nothing.
          throw new IllegalStateException("commit log " + dir + " is closed");
        }
        roll = rolls.get(version);
      } finally {
        mutex.unlock();
      }
      if (roll == null) {
        throw new IllegalArgumentException("version " + version + " was not returned by rollSegment() since the"
            + " last snapshot; rolls pending: " + pendingRolls());
      }
      if (version < snapshotVersion) {
        throw new IllegalArgumentException("a snapshot at version " + snapshotVersion + " already exists, newer than "
            + version);
      }
      Path target = dir.resolve(LogFormat.snapshotName(version));
      Path temp = dir.resolve(LogFormat.snapshotName(version) + LogFormat.TEMP_SUFFIX);
      long entries;
      try {
        entries = SnapshotFile.write(files, temp, version, state);
      } catch (IOException | RuntimeException e) {
        files.deleteIfExists(temp);
        throw e;
      }
      // Once the roll is processed, every record up to version is synced and its segment closed: the
      // snapshot never holds a commit whose append failed, and the covered segments can go.
      try {
        awaitRoll(roll);
      } catch (IOException e) {
        files.deleteIfExists(temp);
        throw e;
      }
      files.rename(temp, target);
      files.syncDirectory(dir);
      snapshotVersion = version;
      int covered = deleteCovered(version);
      for (Path p : files.list(dir)) {
        long v = LogFormat.snapshotVersion(p);
        if (v >= 0 && v < version) {
          files.deleteIfExists(p);
        }
      }
      files.syncDirectory(dir);
      mutex.lock();
      try {
        rolls.keySet().removeIf(v -> v <= version);
      } finally {
        mutex.unlock();
      }
      LOG.debug(MessageFormat.format("commit log {0}: snapshot at version {1} with {2} entries, {3} segments deleted",
          dir, version, entries, covered));
    }
  }

  /**
   * Deletes the closed segments whose records are all at or below {@code version} (a value returned
   * by {@link #rollSegment()}), and every snapshot at or below it: the caller's storage holds them.
   */
  public void truncateThrough(long version) throws IOException {
    synchronized (snapshotLock) {
      CompletableFuture<Void> roll;
      mutex.lock();
      try {
        if (closed) {
          throw new IllegalStateException("commit log " + dir + " is closed");
        }
        roll = rolls.get(version);
      } finally {
        mutex.unlock();
      }
      if (roll != null) {
        awaitRoll(roll);
      }
      deleteCovered(version);
      for (Path p : files.list(dir)) {
        long v = LogFormat.snapshotVersion(p);
        if (v >= 0 && v <= version) {
          files.deleteIfExists(p);
        }
      }
      files.syncDirectory(dir);
      mutex.lock();
      try {
        rolls.keySet().removeIf(v -> v <= version);
      } finally {
        mutex.unlock();
      }
    }
  }

  /**
   * Deletes the closed segments whose records are all at or below {@code version}: first out of the
   * manifest, then from the disk, so that a listed segment is never missing on purpose. Returns how many.
   */
  private int deleteCovered(long version) throws IOException {
    List<Segment> covered = new ArrayList<>();
    synchronized (segments) {
      for (Segment s : segments) {
        if (s.closed && s.lastVersion <= version) {
          covered.add(s);
        }
      }
      segments.removeAll(covered);
    }
    if (covered.isEmpty()) {
      return 0;
    }
    writeManifest();
    // Ascending, so a crash part-way leaves a contiguous suffix (recovery deletes unlisted leftovers).
    for (Segment s : covered) {
      files.deleteIfExists(s.path);
    }
    return covered.size();
  }

  /**
   * Records in the manifest that every commit synced so far was acknowledged, so that recovery fails
   * instead of dropping them if the last segment's tail is later lost or damaged. Cheap when nothing
   * changed; the engine calls it about once a second.
   */
  public void recordAcknowledged() throws IOException {
    mutex.lock();
    try {
      if (closing) {
        return;
      }
      if (failure != null) {
        throw new IOException("commit log " + dir + " failed earlier", failure);
      }
    } finally {
      mutex.unlock();
    }
    writeManifest();
  }

  /** The manifest as last written (tests and tools). */
  public Manifest manifest() {
    synchronized (manifestLock) {
      return manifest;
    }
  }

  /** Writes the manifest for the current segments and synced version, unless it would say nothing new. */
  private void writeManifest() throws IOException {
    synchronized (manifestLock) {
      List<Manifest.Entry> entries = new ArrayList<>();
      synchronized (segments) {
        for (Segment s : segments) {
          entries.add(new Manifest.Entry(s.base, s.closed ? s.lastVersion : -1));
        }
      }
      Manifest next = new Manifest(entries.get(0).base(), syncedVersion, entries);
      if (next.equals(manifest)) {
        return;
      }
      next.write(files, dir);
      manifest = next;
    }
  }

  /** Waits for outstanding syncs, stops the sync thread, releases the directory lock. Idempotent. */
  @Override
  public void close() {
    mutex.lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      closing = true;
      queued.signalAll();
    } finally {
      mutex.unlock();
    }
    boolean interrupted = false;
    while (true) {
      try {
        syncThread.join();
        completer.shutdown();
        // Called from a continuation of one of our futures: the rest of the queue completes after it returns.
        while (Thread.currentThread() != completerThread && !completer.awaitTermination(1, TimeUnit.MINUTES)) {
          LOG.warn(MessageFormat.format("commit log {0}: still completing futures at close", dir));
        }
        break;
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    try {
      if (failureSoFar() == null) {
        // A cleanly closed segment ends at its last record, so the next open has no zeros to check.
        channel.truncate(writePos);
        channel.force(true);
        writeManifest();
      }
    } catch (IOException e) {
      LOG.warn("commit log " + dir + ": trimming the segment or writing its manifest failed", e);
    }
    try {
      channel.close();
    } catch (IOException e) {
      LOG.warn("commit log " + dir + ": closing the segment failed", e);
    }
    // A snapshot being written finishes before another process may take the directory.
    synchronized (snapshotLock) {
      try {
        lock.close();
      } catch (IOException e) {
        LOG.warn("commit log " + dir + ": releasing the lock failed", e);
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /** Number of fsyncs of segment data so far (group commit makes it far lower than the number of records). */
  long syncCount() {
    return syncs.get();
  }

  // ---------------------------------------------------------------------------------------------
  // Sync thread

  private void enqueue(Object item) {
    queue.add(item);
    if (queue.size() == 1) {
      queued.signal();
    }
  }

  private void syncLoop() {
    while (true) {
      ArrayList<Object> batch;
      mutex.lock();
      try {
        while (queue.isEmpty() && !closing) {
          queued.awaitUninterruptibly();
        }
        if (queue.isEmpty()) {
          return;
        }
        batch = queue;
        queue = new ArrayList<>();
      } finally {
        mutex.unlock();
      }
      process(batch);
    }
  }

  private void process(List<Object> batch) {
    int synced = 0;
    try {
      IOException earlier = failureSoFar();
      if (earlier != null) {
        throw earlier;
      }
      for (int i = 0; i < batch.size(); i++) {
        Object item = batch.get(i);
        if (item instanceof Pending p) {
          int size = LogFormat.RECORD_HEADER_SIZE + p.payload.length;
          if (out.remaining() < size) {
            writeOut();
            if (out.capacity() < size) {
              out = ByteBuffer.allocateDirect(size);
            }
          }
          LogFormat.putRecord(out, p.version, nextBatch, p.payload);
        } else {
          Roll roll = (Roll) item;
          sync(batch, synced, i);
          synced = i;
          startSegment(roll.base);
          synced = i + 1;
          roll.future.complete(null);
        }
      }
      sync(batch, synced, batch.size());
    } catch (Throwable e) {
      // Whatever went wrong, no future may be left hanging: fail them and refuse further appends.
      IOException failed = e instanceof IOException io ? io : new IOException("commit log sync failed", e);
      mutex.lock();
      try {
        if (failure == null) {
          failure = failed;
          LOG.error("commit log " + dir + " failed; refusing further appends", failed);
        }
        failed = failure;
      } finally {
        mutex.unlock();
      }
      List<CompletableFuture<Void>> failedFutures = new ArrayList<>();
      for (int i = synced; i < batch.size(); i++) {
        Object item = batch.get(i);
        if (item instanceof Roll roll) {
          roll.future.completeExceptionally(new UncheckedIOException(failed));
        } else {
          failedFutures.add(((Pending) item).future);
        }
      }
      UncheckedIOException error = new UncheckedIOException(failed);
      completer.execute(() -> failedFutures.forEach(f -> f.completeExceptionally(error)));
    }
  }

  private IOException failureSoFar() {
    mutex.lock();
    try {
      return failure;
    } finally {
      mutex.unlock();
    }
  }

  /** Writes what is buffered (no sync). */
  private void writeOut() throws IOException {
    out.flip();
    int length = out.remaining();
    preallocate(writePos + length);
    channel.write(out, writePos);
    writePos += length;
    out.clear();
  }

  /**
   * Makes sure the file has been written (with zeros) up to at least {@code end}. fdatasync after
   * overwriting space that already exists has no file size to commit, which makes it about twice as
   * fast as after an append on ext4; recovery reads a zero record header as the end of the records.
   */
  private void preallocate(long end) throws IOException {
    if (end <= allocatedEnd) {
      return;
    }
    long target = Math.max(end, allocatedEnd + PREALLOCATE_BYTES);
    long pos = allocatedEnd;
    while (pos < target) {
      int n = (int) Math.min(zeros.capacity(), target - pos);
      zeros.clear().limit(n);
      channel.write(zeros, pos);
      pos += n;
    }
    allocatedEnd = pos;
  }

  /** Writes and syncs the buffered records batch[from, to), then completes their futures. */
  private void sync(List<Object> batch, int from, int to) throws IOException {
    long lastSynced = -1;
    long count = 0;
    for (int i = from; i < to; i++) {
      if (batch.get(i) instanceof Pending p) {
        lastSynced = p.version;
        count++;
      }
    }
    if (count == 0) {
      return;
    }
    writeOut();
    channel.force(false);
    syncs.incrementAndGet();
    nextBatch++;
    synchronized (segments) {
      current.lastVersion = lastSynced;
      current.records += count;
    }
    syncedVersion = lastSynced;
    CompletableFuture<?>[] done = new CompletableFuture<?>[(int) count];
    int k = 0;
    for (int i = from; i < to; i++) {
      if (batch.get(i) instanceof Pending p) {
        done[k++] = p.future;
      }
    }
    completer.execute(() -> {
      for (CompletableFuture<?> f : done) {
        f.complete(null);
      }
    });
  }

  /** Closes the current segment (already synced) and starts one at base; a no-op while the current one is empty. */
  private void startSegment(long base) throws IOException {
    if (current.records == 0) {
      return;
    }
    // Trimmed before the next segment exists: a segment other than the last one ends at its last record.
    channel.truncate(writePos);
    channel.force(true);
    Path path = dir.resolve(LogFormat.segmentName(base));
    FileLayer.OpenFile next = files.open(path, FileLayer.Mode.CREATE_NEW);
    try {
      next.write(LogFormat.segmentHeader(base, nextBatch), 0);
      next.force(true);
      // The new file must not vanish in a crash once records in it are acknowledged.
      files.syncDirectory(dir);
    } catch (IOException e) {
      next.close();
      throw e;
    }
    channel.close();
    channel = next;
    writePos = LogFormat.SEGMENT_HEADER_SIZE;
    allocatedEnd = writePos;
    Segment segment = new Segment(path, base, base - 1, 0);
    synchronized (segments) {
      current.closed = true;
      segments.add(segment);
    }
    current = segment;
    // Listed only now that its header is durable, and before any record goes into it.
    writeManifest();
  }

  // ---------------------------------------------------------------------------------------------
  // Recovery

  private static final class Recovery {
    long version;
    long snapshotVersion;
    long liveBytes;
    long nextBatch = 1;
    List<Segment> segments = new ArrayList<>();
    /** Segments whose records the storage or a snapshot already holds. */
    List<Path> covered = new ArrayList<>();
    FileLayer.OpenFile channel;
    long writePos;
  }

  private static Recovery recover(FileLayer files, Path dir, long durableVersion, boolean requireManifest,
      Replay replay) throws IOException {
    // Whatever a previous process left in the directory's page cache must be durable before we act on it.
    files.syncDirectory(dir);
    List<Path> segmentFiles = new ArrayList<>();
    List<Path> snapshotFiles = new ArrayList<>();
    for (Path p : files.list(dir)) {
      if (LogFormat.isTempSnapshot(p)) {
        LOG.info(MessageFormat.format("commit log {0}: deleting unfinished snapshot {1}", dir, p.getFileName()));
        files.deleteIfExists(p);
      } else if (LogFormat.segmentBase(p) >= 0) {
        segmentFiles.add(p);
      } else if (LogFormat.snapshotVersion(p) >= 0) {
        snapshotFiles.add(p);
      }
    }
    segmentFiles.sort(Comparator.comparingLong(LogFormat::segmentBase));
    snapshotFiles.sort(Comparator.comparingLong(LogFormat::snapshotVersion).reversed());
    Manifest manifest = Manifest.read(files, dir);
    if (manifest == null && requireManifest) {
      throw new IOException("commit log " + dir + " has no " + Manifest.FILE + ", though its storage records that it"
          + " had one: the log's segments cannot be checked, so the directory is not opened");
    }
    if (manifest != null) {
      segmentFiles = checkAgainstManifest(files, dir, manifest, segmentFiles);
    }

    Recovery r = new Recovery();
    for (Path p : snapshotFiles) {
      long v = LogFormat.snapshotVersion(p);
      if (v <= durableVersion) {
        // A legacy snapshot the storage already holds (a migration that stopped before deleting it).
        files.deleteIfExists(p);
        continue;
      }
      String problem = SnapshotFile.read(files, p, v, null);
      if (problem == null) {
        r.snapshotVersion = v;
        problem = SnapshotFile.read(files, p, v, replay);
        if (problem != null) {
          throw new IOException("snapshot " + p + " changed while it was being recovered: " + problem);
        }
        replay.snapshotLoaded(v);
        break;
      }
      LOG.warn(MessageFormat.format("commit log {0}: ignoring snapshot {1}: {2}", dir, p.getFileName(), problem));
    }
    long s = Math.max(r.snapshotVersion, durableVersion);
    r.version = s;
    if (manifest != null && s < manifest.logStart() - 1) {
      throw new IOException("commit log " + dir + ": the storage holds versions through " + s + " but the log"
          + " starts at version " + manifest.logStart() + " (" + Manifest.FILE + "): versions " + (s + 1) + " to "
          + (manifest.logStart() - 1) + " are in neither; was the storage replaced or restored from an older copy?");
    }

    // A segment is covered when the next one starts at or below snapshot + 1: all its versions are <= s.
    int firstNeeded = 0;
    while (firstNeeded < segmentFiles.size() - 1 && LogFormat.segmentBase(segmentFiles.get(firstNeeded + 1)) <= s + 1) {
      firstNeeded++;
    }
    // Deleted once a manifest without them is durable (a listed segment is never missing on purpose).
    r.covered.addAll(segmentFiles.subList(0, firstNeeded));
    List<Path> needed = segmentFiles.subList(firstNeeded, segmentFiles.size());
    if (!needed.isEmpty() && LogFormat.segmentBase(needed.get(0)) > s + 1) {
      throw new IOException("commit log " + dir + " is missing records: " + (s == 0 ? "no snapshot" : "the snapshot is at version " + s)
          + " but the oldest segment " + needed.get(0).getFileName() + " starts at version "
          + LogFormat.segmentBase(needed.get(0)));
    }

    long liveBytes = 0;
    for (int i = 0; i < needed.size(); i++) {
      Path p = needed.get(i);
      long base = LogFormat.segmentBase(p);
      boolean last = i == needed.size() - 1;
      if (i > 0 && r.version + 1 != base) {
        throw new IOException("commit log " + dir + " is missing records: segment " + needed.get(i - 1).getFileName()
            + " ends at version " + r.version + " but the next one is " + p.getFileName());
      }
      Manifest.Entry listed = manifest == null ? null : manifest.segment(base);
      SegmentReader.Result scan = SegmentReader.scan(files, p, base, last, listed != null, s, replay::record);
      if (listed != null && listed.closed() && scan.lastVersion != listed.closedThrough()) {
        throw new IOException("commit log segment " + p + " ends at version " + scan.lastVersion + " but "
            + Manifest.FILE + " records that its records run through version " + listed.closedThrough()
            + ": acknowledged commits are missing from it");
      }
      if (listed == null && manifest != null && scan.records > 0) {
        throw new IOException("commit log segment " + p + " holds records but is not in " + Manifest.FILE
            + ", which is older than the log: the log cannot be checked, so the directory is not opened");
      }
      liveBytes += scan.liveBytes;
      r.version = Math.max(r.version, scan.lastVersion);
      r.nextBatch = Math.max(r.nextBatch, Math.max(scan.lastBatch + 1, scan.firstBatch));
      Segment segment = new Segment(p, base, scan.lastVersion, scan.records);
      segment.closed = !last;
      r.segments.add(segment);
      if (last) {
        r.channel = openLast(files, dir, p, base, scan, r.nextBatch);
        r.writePos = r.channel.size();
      }
    }
    if (needed.isEmpty()) {
      long base = s + 1;
      Path p = dir.resolve(LogFormat.segmentName(base));
      r.channel = files.open(p, FileLayer.Mode.CREATE_NEW);
      r.channel.write(LogFormat.segmentHeader(base, r.nextBatch), 0);
      r.channel.force(true);
      files.syncDirectory(dir);
      r.writePos = LogFormat.SEGMENT_HEADER_SIZE;
      r.segments.add(new Segment(p, base, base - 1, 0));
    }
    if (manifest != null && r.version < manifest.acknowledgedThrough()) {
      Path lastFile = needed.isEmpty() ? dir : needed.get(needed.size() - 1);
      throw new IOException("commit log " + dir + " ends at version " + r.version + " (in " + lastFile.getFileName()
          + ") but " + Manifest.FILE + " records that commits through version " + manifest.acknowledgedThrough()
          + " were acknowledged: the end of the log is missing or damaged");
    }
    r.liveBytes = liveBytes;
    return r;
  }

  /**
   * Checks the segment files against the manifest: every listed segment must exist; unlisted ones below
   * the log's start are leftovers of a truncation (deleted); an unlisted one after the listed ones is
   * allowed only as a segment started by a roll whose manifest update a crash cut off (it holds no record,
   * checked when it is read). Returns the segment files to recover from.
   */
  private static List<Path> checkAgainstManifest(FileLayer files, Path dir, Manifest manifest, List<Path> segmentFiles)
      throws IOException {
    List<Path> kept = new ArrayList<>();
    long lastListed = manifest.segments().get(manifest.segments().size() - 1).base();
    for (Manifest.Entry e : manifest.segments()) {
      Path expected = dir.resolve(LogFormat.segmentName(e.base()));
      if (segmentFiles.stream().noneMatch(p -> p.getFileName().equals(expected.getFileName()))) {
        throw new IOException("commit log segment " + expected + " is missing: " + Manifest.FILE + " lists it, with "
            + (e.closed() ? "versions " + e.base() + " to " + e.closedThrough() : "every version from " + e.base())
            + "; acknowledged commits would be lost");
      }
    }
    for (Path p : segmentFiles) {
      long base = LogFormat.segmentBase(p);
      if (manifest.segment(base) != null || base > lastListed) {
        kept.add(p);
      } else if (base < manifest.logStart()) {
        LOG.info(MessageFormat.format("commit log {0}: deleting {1}, left over from a truncation", dir, p.getFileName()));
        files.deleteIfExists(p);
      } else {
        throw new IOException("commit log segment " + p + " is not in " + Manifest.FILE + " but lies inside the log it"
            + " describes: the log cannot be checked, so the directory is not opened");
      }
    }
    return kept;
  }

  /** Opens the last segment for appending, cutting off a torn tail or rewriting a torn header. */
  private static FileLayer.OpenFile openLast(FileLayer files, Path dir, Path p, long base, SegmentReader.Result scan,
      long nextBatch) throws IOException {
    FileLayer.OpenFile channel = files.open(p, FileLayer.Mode.WRITE);
    try {
      if (scan.tornReason != null) {
        LOG.warn(MessageFormat.format("commit log {0}: dropping the torn tail of {1}: {2}", dir,
            p.getFileName(), scan.tornReason));
      }
      if (!scan.headerValid) {
        channel.truncate(0);
        channel.write(LogFormat.segmentHeader(base, nextBatch), 0);
        channel.force(true);
      } else if (scan.goodEnd < scan.fileSize) {
        channel.truncate(scan.goodEnd);
        channel.force(true);
      }
      return channel;
    } catch (IOException | RuntimeException e) {
      channel.close();
      throw e;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Helpers

  private String pendingRolls() {
    mutex.lock();
    try {
      return rolls.keySet().toString();
    } finally {
      mutex.unlock();
    }
  }

  private static void awaitRoll(CompletableFuture<Void> roll) throws IOException {
    try {
      roll.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted while waiting for the commit log to roll its segment");
    } catch (ExecutionException e) {
      Throwable cause = e.getCause() instanceof UncheckedIOException u ? u.getCause() : e.getCause();
      throw cause instanceof IOException io ? io : new IOException("rolling the commit log segment failed", cause);
    }
  }

}
