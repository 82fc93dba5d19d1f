package io.github.fdbcoord.embedded.log;

import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;
import java.io.Closeable;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.text.MessageFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;

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
 * <h2>Group commit and recovery</h2>
 *
 * {@link #append} only queues the record: a {@link GroupCommitWriter} writes and syncs whatever is queued
 * as one batch. {@link #open} runs {@link LogRecovery}, which replays the newest good snapshot and the
 * records after it, and tells a torn tail of the last segment (dropped) from corruption of acknowledged
 * commits (the open fails). If {@code open} throws, whatever it had passed to the replay must be discarded.
 * The segments and the {@link Manifest} listing them are in {@link LogSegments}.
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
  /** How far ahead of its records a segment file is written (zeros), at most. */
  public static final long PREALLOCATED_BYTES = SegmentFile.PREALLOCATE_BYTES;
  private static final Logger LOG = LoggerFactory.getLogger(CommitLog.class);

  /** Receives recovered state, in order: snapshot entries first (any order), then records with version > snapshot version, ascending. */
  public interface Replay {
    void snapshotEntry(byte[] key, byte[] value);

    /** Called once after the last entry of a loaded (legacy) snapshot. */
    default void snapshotLoaded(long version) {}

    void record(long version, byte[] payload);
  }

  private final FileLayer files;
  private final Path dir;
  private final Closeable lock;
  private final long recoveredVersion;
  private final LogSegments segments;
  private final GroupCommitWriter writer;

  /** Serialises snapshots and truncations, and the directory lock's release after them. */
  private final Object snapshotLock = new Object();
  private long snapshotVersion;

  private CommitLog(FileLayer files, Path dir, Closeable lock, LogRecovery.Recovered recovery) {
    this.files = files;
    this.dir = dir;
    this.lock = lock;
    this.recoveredVersion = recovery.version;
    this.snapshotVersion = recovery.snapshotVersion;
    this.segments = new LogSegments(files, dir, recovery.segments, recovery.version);
    this.writer = new GroupCommitWriter(files, dir, segments, recovery);
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
      LogRecovery.Recovered recovery = LogRecovery.recover(files, dir, durableVersion, requireManifest, replay);
      log = new CommitLog(files, dir, lock, recovery);
      log.segments.writeManifest();
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
   * I/O error happens, the futures of every record queued by then fail with the IOException (wrapped in
   * UncheckedIOException; such a record may be on disk) and the log refuses further appends: their
   * futures fail at once with {@link LogFailedException} (those records were not written).
   *
   * <p>The log keeps {@code payload} until it is written: the caller must not change it afterwards.
   *
   * @throws IllegalArgumentException if the version does not ascend or the payload is too large
   * @throws IllegalStateException if the log is closed
   */
  public CompletableFuture<Void> append(long version, byte[] payload) {
    return writer.append(version, payload);
  }

  /**
   * The size of the log's segment files now: what the storage will write again (a flush) before the log behind it
   * can be deleted. A file that cannot be measured (deleted meanwhile) counts nothing.
   */
  public long segmentBytes() throws IOException {
    long bytes = 0;
    for (Path p : files.list(dir)) {
      if (LogFormat.segmentBase(p) >= 0) {
        try {
          bytes += java.nio.file.Files.size(p);
        } catch (IOException gone) {
          // Truncated away since the listing.
        }
      }
    }
    return bytes;
  }

  /**
   * Record bytes appended since the log opened, without a lock (the disk space gate reads it on every commit).
   * A segment file grows by up to {@link #PREALLOCATED_BYTES} more, written ahead of its records.
   */
  public long bytesAppended() {
    return writer.bytesAppended();
  }

  /** Bytes appended since the last snapshot (the engine uses it to decide when to compact); reset by {@link #rollSegment()}, the start of the next snapshot. */
  public long bytesSinceSnapshot() {
    return writer.bytesSinceSnapshot();
  }

  /** Compaction, step 1, called under the engine's commit lock: starts a new log segment, so every record appended afterwards goes to the new segment. Returns the version of the last record in the old segments (the caller passes the state at exactly this version to writeSnapshot). */
  public long rollSegment() throws IOException {
    return writer.roll();
  }

  /** Compaction, step 2, called off the commit lock on any thread: writes the full state at `version` (the value returned by rollSegment) to a snapshot file atomically (temp file, fsync, rename, fsync dir), then deletes the segments and older snapshots it covers. Concurrent appends continue meanwhile. A crash at any point must leave a recoverable directory. */
  public void writeSnapshot(long version, Iterator<Map.Entry<byte[], byte[]>> state) throws IOException {
    Objects.requireNonNull(state, "state");
    synchronized (snapshotLock) {
      // Throws once closed: the directory lock may belong to another process by now, touch nothing.
      CompletableFuture<Void> roll = writer.rollAfter(version);
      if (roll == null) {
        throw new IllegalArgumentException("version " + version + " was not returned by rollSegment() since the"
            + " last snapshot; rolls pending: " + writer.pendingRolls());
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
      int covered = segments.deleteCovered(version);
      for (Path p : files.list(dir)) {
        long v = LogFormat.snapshotVersion(p);
        if (v >= 0 && v < version) {
          files.deleteIfExists(p);
        }
      }
      files.syncDirectory(dir);
      writer.forgetRollsThrough(version);
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
      CompletableFuture<Void> roll = writer.rollAfter(version);
      if (roll != null) {
        awaitRoll(roll);
      }
      segments.deleteCovered(version);
      for (Path p : files.list(dir)) {
        long v = LogFormat.snapshotVersion(p);
        if (v >= 0 && v <= version) {
          files.deleteIfExists(p);
        }
      }
      files.syncDirectory(dir);
      writer.forgetRollsThrough(version);
    }
  }

  /**
   * A log copied for a backup: it starts after {@code storageVersion} (what the storage copy holds at
   * least) and recovers to the state at {@code version}; {@code lastRecord} is its newest record's version.
   */
  public record CopiedTail(long storageVersion, long version, long lastRecord) {}

  /** The storage's part of a backup, taken while the log keeps every record after the storage's version. */
  public interface StorageCopy {
    /**
     * Copies the storage; returns a version that the copy holds every commit up to (it may hold
     * later ones too: recovery skips the records it has).
     */
    long copy() throws IOException;
  }

  /**
   * The log's part of a backup: with truncation held off, takes {@code storage}'s copy, then writes into
   * {@code target} a log of one segment holding this log's records after the copy's version through
   * {@code through} (asked once the copy is taken; its commits must be synced) and its manifest, so that
   * the copy beside them recovers to the state at {@code through}.
   *
   * @throws IOException when a segment does not hold the records its place in the log says it does
   */
  public CopiedTail copyForBackup(Path target, StorageCopy storage, LongSupplier through)
      throws IOException {
    synchronized (snapshotLock) {
      // Once closed, the directory may belong to another process: read nothing from it.
      writer.checkOpen();
      long after = storage.copy();
      // May be above every record: a version that an idle database's read versions moved to.
      long upTo = through.getAsLong();
      long base = after + 1;
      long last = after;
      Path file = target.resolve(LogFormat.segmentName(base));
      try (FileLayer.OpenFile out = files.open(file, FileLayer.Mode.CREATE_NEW)) {
        out.write(LogFormat.segmentHeader(base, 1), 0);
        long[] position = {LogFormat.SEGMENT_HEADER_SIZE};
        long[] copied = {after};
        for (LogSegments.Segment s : segments.copy()) {
          if (s.lastVersion <= after || s.base > upTo) {
            continue;
          }
          if (copied[0] == after && s.base > after + 1) {
            throw new IOException("commit log " + dir + " no longer holds versions " + (after + 1) + " to "
                + (s.base - 1) + ", which the storage's copy lacks: its oldest needed segment is " + s.path);
          }
          SegmentReader.Span span = SegmentReader.readBetween(files, s.path, s.base, after, upTo, (version, payload) -> {
            ByteBuffer record = ByteBuffer.allocate(LogFormat.RECORD_HEADER_SIZE + payload.length);
            LogFormat.putRecord(record, version, 1, payload);
            try {
              out.write(record.flip(), position[0]);
            } catch (IOException e) {
              throw new UncheckedIOException(e);
            }
            position[0] += record.limit();
            copied[0] = version;
          });
          long expected = Math.min(s.lastVersion, upTo);
          if (!span.reachedLater() && span.lastVersion() < expected) {
            throw new IOException("commit log segment " + s.path + " ends at version " + span.lastVersion()
                + " but its records were synced through version " + expected + ": it is damaged");
          }
        }
        out.force(true);
        last = copied[0];
      } catch (UncheckedIOException e) {
        throw e.getCause();
      }
      new Manifest(base, last, List.of(new Manifest.Entry(base, -1))).write(files, target);
      return new CopiedTail(after, upTo, last);
    }
  }

  /**
   * Records in the manifest that every commit synced so far was acknowledged, so that recovery fails
   * instead of dropping them if the last segment's tail is later lost or damaged. Cheap when nothing
   * changed; the engine calls it about once a second.
   */
  public void recordAcknowledged() throws IOException {
    if (writer.isWorking()) {
      segments.writeManifest();
    }
  }

  /**
   * Why appends stall (the disk is full: see {@link GroupCommitWriter}), or null. While it stalls every
   * record's future fails with {@link LogStalledException}, and the records are written once space is back.
   */
  public IOException stalledBecause() {
    return writer.stalled();
  }

  /**
   * Sets what learns, in order with the completion of later records, the version through which
   * records whose futures failed with {@link LogStalledException} are durable after all.
   */
  public void onDurableAfterStall(LongConsumer listener) {
    writer.onDurableAfterStall(listener);
  }

  /** The manifest as last written (tests and tools). */
  public Manifest manifest() {
    return segments.manifest();
  }

  /** Waits for outstanding syncs, stops the sync thread, releases the directory lock. Idempotent. */
  @Override
  public void close() {
    if (!writer.close()) {
      return;
    }
    // A snapshot being written finishes before another process may take the directory.
    synchronized (snapshotLock) {
      try {
        lock.close();
      } catch (IOException e) {
        LOG.warn("commit log " + dir + ": releasing the lock failed", e);
      }
    }
  }

  /** Number of fsyncs of segment data so far (group commit makes it far lower than the number of records). */
  long syncCount() {
    return writer.syncCount();
  }

  /** Waits for a roll; fails (out of space) while the writer is stalled rather than wait for the disk. */
  private void awaitRoll(CompletableFuture<Void> roll) throws IOException {
    try {
      while (true) {
        try {
          roll.get(GroupCommitWriter.STALL_RETRY_NANOS, TimeUnit.NANOSECONDS);
          return;
        } catch (TimeoutException e) {
          IOException stall = writer.stalled();
          if (stall != null) {
            throw new IOException("commit log " + dir + " cannot roll its segment: " + stall.getMessage(), stall);
          }
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted while waiting for the commit log to roll its segment");
    } catch (ExecutionException e) {
      Throwable cause = e.getCause() instanceof UncheckedIOException u ? u.getCause() : e.getCause();
      throw cause instanceof IOException io ? io : new IOException("rolling the commit log segment failed", cause);
    }
  }
}
