package io.github.fdbcoord.embedded.engine;

import io.github.fdbcoord.embedded.log.CommitLog;
import io.github.fdbcoord.embedded.log.FileLayer;
import io.github.fdbcoord.embedded.storage.RocksStorage;

import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Holds commits while the data directory's (or the storage's) file system has less free space than the
 * configured reserve, as FoundationDB's ratekeeper stops transactions when a log or storage server runs
 * short of space: an engine that ran into a full disk would stop until restarted. Checked by the applier;
 * read by every commit.
 *
 * <p>The engine's own writes take space too, and each check shares what is free between them, so that together
 * they keep half the reserve (see docs/embedded-durability.md, "What the reserve guarantees"):
 * <ul>
 *   <li>what the storage still owes: the commit log's segments (the storage writes their commits once more, in a
 *       flush, before they can be deleted) and the running compactions' inputs (a compaction writes its output,
 *       about as large, beside them until it ends);
 *   <li>the log's appends until the next check: at most {@link #appendBudgetSpent a budget} (each appended byte
 *       is owed once more to the storage), after which commits wait for the next check;
 *   <li>the compactions that may start until the next check: RocksDB starts one only while its inputs, with those
 *       of the running ones, fit in the room this check leaves them ({@link RocksStorage#roomForCompactions}).
 * </ul>
 * Flushes take only what the log's segments were counted for; a compaction's output replaces its inputs.
 */
final class DiskSpaceGate {
  private static final Logger LOG = LoggerFactory.getLogger(DiskSpaceGate.class);

  /** The room compactions get when the free space cannot be read: more than any disk, less than an overflow. */
  private static final long UNKNOWN_ROOM = 1L << 50;
  /** The appends' budget when no file system limits it: far more than is appended between two checks. */
  private static final long UNLIMITED_BUDGET = 1L << 50;

  /** The appends allowed since a check: {@code budget} bytes of records after the log's {@code appendedAt}. */
  private record AppendWindow(long appendedAt, long budget) {}

  private final List<Path> watched;
  private final long minFreeBytes;
  /** At most this much is appended to the log between two checks (a share of the reserve it would otherwise use). */
  private final long maxAppendBudget;
  private final FileLayer files;
  /** The directory the storage lives in, and the storage. */
  private final Path storageDirectory;
  private final RocksStorage storage;
  /** The commit log, whose segments the storage writes again before they can go; null in tests without one. */
  private final CommitLog log;
  /** Why commits are held for lack of disk space, or null. Written by {@link #check} only. */
  private volatile String lowOnSpace;
  /** What the log may take until the next check. Written by {@link #check} only. */
  private volatile AppendWindow appends = new AppendWindow(0, UNLIMITED_BUDGET);
  /** A free-space reading failed and was logged (once). Checking thread only. */
  private boolean unreadable;

  DiskSpaceGate(List<Path> watched, long minFreeBytes, FileLayer files, Path storageDirectory, RocksStorage storage,
      CommitLog log) {
    this.log = log;
    this.watched = List.copyOf(watched);
    this.minFreeBytes = minFreeBytes;
    this.maxAppendBudget = minFreeBytes / 16;
    this.files = files;
    this.storageDirectory = storageDirectory;
    this.storage = storage;
  }

  /** Why commits are held (which directory, how much is free), or null. */
  String lowOnSpace() {
    return lowOnSpace;
  }

  /**
   * The log has taken the budget the last check left it: commits wait for the next check (the applier makes it at
   * once). Not a reason to report: it lasts one round of the applier.
   */
  boolean appendBudgetSpent() {
    if (minFreeBytes == 0 || log == null) {
      return false;
    }
    AppendWindow w = appends;
    return log.bytesAppended() - w.appendedAt() > w.budget();
  }

  /**
   * Looks at the free space of the watched file systems: holds commits, sets the log's budget and the
   * compactions' room until the next check. Logged when the hold changes; a directory whose space cannot be read
   * is logged and not held for. Called from one thread at a time.
   */
  void check() {
    if (minFreeBytes == 0) {
      return;
    }
    // Read first: what is appended while the check reads the disk counts against the new budget.
    long appendedAt = log == null ? 0 : log.bytesAppended();
    long segments = 0;
    try {
      segments = log == null ? 0 : log.segmentBytes();
    } catch (IOException | RuntimeException e) {
      unreadable(watched.get(0), e);
    }
    long compactions = storage.compactionBytesInFlight();
    String low = null;
    long budget = UNLIMITED_BUDGET;
    for (Path dir : watched) {
      try {
        long usable = files.usableSpace(dir);
        long owed = dir.equals(storageDirectory) ? segments + compactions : 0;
        if (low == null && usable - owed < minFreeBytes) {
          low = owed == 0
              ? String.format(Locale.ROOT, "%s has %,d bytes of disk space free, less than minFreeSpaceBytes (%,d)",
                  dir, usable, minFreeBytes)
              : String.format(Locale.ROOT, "%s has %,d bytes of disk space free, of which the storage will take %,d"
                  + " to hold the commit log's segments and finish its compactions; less than minFreeSpaceBytes"
                  + " (%,d) is left", dir, usable, owed, minFreeBytes);
        }
        // An appended byte takes space twice: in the log, and in the storage once flushed. The appends between two
        // checks may go into the reserve's upper half (commits wait below the reserve, the engine's writes keep the
        // lower half), with the zeros a segment is written ahead with.
        budget = Math.min(budget,
            Math.max(0, (usable - owed - minFreeBytes / 2 - CommitLog.PREALLOCATED_BYTES) / 2));
      } catch (IOException | RuntimeException e) {
        unreadable(dir, e);
      }
    }
    budget = Math.min(budget, maxAppendBudget);
    appends = new AppendWindow(appendedAt, budget);
    limitCompactions(segments, budget);
    String was = lowOnSpace;
    lowOnSpace = low;
    if (low != null && was == null) {
      LOG.warn("embedded engine: " + low + ": new commits wait until space is freed (reads go on)");
    } else if (low == null && was != null) {
      LOG.info("embedded engine: disk space is above minFreeSpaceBytes again; held commits go on");
    }
  }

  /**
   * Lets the storage start compactions only while their inputs fit in what is free above half the reserve, once
   * the log's segments and the appends allowed until the next check (twice: in the log, then in the storage; and
   * the zeros a segment is written ahead with) are taken out.
   */
  private void limitCompactions(long segments, long appendBudget) {
    try {
      // The real file system's, not the file layer's: RocksDB writes there, not through the layer.
      long free = Files.getFileStore(storageDirectory).getUsableSpace();
      storage.roomForCompactions(
          free - segments - 2 * appendBudget - CommitLog.PREALLOCATED_BYTES - minFreeBytes / 2);
    } catch (IOException | RuntimeException e) {
      unreadable(storageDirectory, e);
      // Compactions then go on as they would without a reserve.
      storage.roomForCompactions(UNKNOWN_ROOM);
    }
  }

  private void unreadable(Path dir, Exception e) {
    if (!unreadable) {
      unreadable = true;
      LOG.warn("embedded engine: cannot read the free space of " + dir + " (" + e + "); commits are not held for it");
    }
  }
}
