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
 * <p>Also keeps the storage's compactions above half the reserve ({@link #limitCompactions}): a compaction
 * rewrites up to the whole storage beside its inputs, and nothing else the engine writes on its own grows that
 * much (a flush writes the memtables, after which the log behind them is deleted).
 */
final class DiskSpaceGate {
  private static final Logger LOG = LoggerFactory.getLogger(DiskSpaceGate.class);

  /** The room compactions get when the free space cannot be read: more than any disk, less than an overflow. */
  private static final long UNKNOWN_ROOM = 1L << 50;

  private final List<Path> watched;
  private final long minFreeBytes;
  private final FileLayer files;
  /** The directory the storage lives in, and the storage. */
  private final Path storageDirectory;
  private final RocksStorage storage;
  /** The commit log, whose segments the storage writes again before they can go. */
  private final CommitLog log;
  /** Why commits are held for lack of disk space, or null. Written by {@link #check} only. */
  private volatile String lowOnSpace;
  /** A free-space reading failed and was logged (once). Checking thread only. */
  private boolean unreadable;

  DiskSpaceGate(List<Path> watched, long minFreeBytes, FileLayer files, Path storageDirectory, RocksStorage storage,
      CommitLog log) {
    this.log = log;
    this.watched = List.copyOf(watched);
    this.minFreeBytes = minFreeBytes;
    this.files = files;
    this.storageDirectory = storageDirectory;
    this.storage = storage;
  }

  /**
   * Lets the storage start a compaction only while its inputs fit in the free space above half the reserve.
   * Off with the reserve (0). Not on the applier's thread: a storage whose compactions wait for room stalls
   * the applier's writes once level 0 is full, and the room must still grow when space is freed.
   */
  void limitCompactions() {
    if (minFreeBytes == 0) {
      return;
    }
    try {
      // The real file system's, not the file layer's: RocksDB writes there, not through the layer.
      storage.roomForCompactions(Files.getFileStore(storageDirectory).getUsableSpace() - minFreeBytes / 2);
    } catch (IOException | RuntimeException e) {
      // check() logs an unreadable free space (once); compactions then go on as they would without a reserve.
      storage.roomForCompactions(UNKNOWN_ROOM);
    }
  }

  /** Why commits are held (which directory, how much is free), or null. */
  String lowOnSpace() {
    return lowOnSpace;
  }

  /**
   * Looks at the free space of the watched file systems. Logged when it changes; a directory whose
   * space cannot be read is logged and not held for. Called from one thread at a time.
   */
  void check() {
    if (minFreeBytes == 0) {
      return;
    }
    String low = null;
    for (Path dir : watched) {
      try {
        long usable = files.usableSpace(dir);
        // The log's segments are written once more, into the storage, before they can be deleted: space taken.
        long owed = dir.equals(storageDirectory) && log != null ? log.segmentBytes() : 0;
        if (usable - owed < minFreeBytes) {
          low = owed == 0
              ? String.format(Locale.ROOT, "%s has %,d bytes of disk space free, less than minFreeSpaceBytes (%,d)",
                  dir, usable, minFreeBytes)
              : String.format(Locale.ROOT, "%s has %,d bytes of disk space free, of which the storage will take %,d"
                  + " to hold the commit log's segments before they are deleted; less than minFreeSpaceBytes (%,d)"
                  + " is left", dir, usable, owed, minFreeBytes);
          break;
        }
      } catch (IOException | RuntimeException e) {
        if (!unreadable) {
          unreadable = true;
          LOG.warn("embedded engine: cannot read the free space of " + dir + " (" + e + "); commits are not held for it");
        }
      }
    }
    String was = lowOnSpace;
    lowOnSpace = low;
    if (low != null && was == null) {
      LOG.warn("embedded engine: " + low + ": new commits wait until space is freed (reads go on)");
    } else if (low == null && was != null) {
      LOG.info("embedded engine: disk space is above minFreeSpaceBytes again; held commits go on");
    }
  }
}
