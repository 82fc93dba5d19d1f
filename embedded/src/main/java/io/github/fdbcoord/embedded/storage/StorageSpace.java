package io.github.fdbcoord.embedded.storage;

import org.rocksdb.DBOptions;
import org.rocksdb.LiveFileMetaData;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.SstFileManager;
import org.rocksdb.Status;

/**
 * How the storage's RocksDB meets a disk that fills up: a compaction starts only within the room the engine
 * gives it ({@link RocksStorage#roomForCompactions}), the compactions running are measured
 * ({@link RocksStorage#compactionBytesInFlight}), and a write RocksDB refused for lack of space is told from
 * other failures ({@link RocksStorage#outOfSpace}).
 */
final class StorageSpace {
  /**
   * Far more than any disk: added to both RocksDB's space limit and the headroom it asks of a compaction, so
   * that the limit decides compactions alone. A flush or compaction output that takes the table files past the
   * limit itself stops RocksDB until {@code Resume}, which the Java API lacks; the slack keeps that out of reach.
   */
  private static final long SPACE_LIMIT_SLACK = 1L << 40;

  private final RocksDB db;
  private final SstFileManager files;
  /** Whether compactions are limited from the open on: only then is their size in flight read. */
  private final boolean compactionsLimited;

  StorageSpace(RocksDB db, SstFileManager files, boolean compactionsLimited) {
    this.db = db;
    this.files = files;
    this.compactionsLimited = compactionsLimited;
  }

  /** Before the open: RocksDB starts no compaction until {@link #allowCompactions} is called. */
  static void compactionsWaitForRoom(SstFileManager files, DBOptions options) {
    // Room for nothing beyond the files RocksDB finds at open (it counts them as it opens them).
    files.setCompactionBufferSize(SPACE_LIMIT_SLACK);
    files.setMaxAllowedSpaceUsage(SPACE_LIMIT_SLACK);
    // RocksDB reserves 1.1 x the target file size (about 70 MiB) ahead of each compaction output with fallocate:
    // a 70 MiB compaction given room for 70 MiB took 130 MiB and a file system's last byte at a reopen.
    options.setAllowFAllocate(false);
  }

  /** Lets compactions start while their inputs fit in {@code bytes} more than the table files take now. */
  void allowCompactions(long bytes) {
    files.setCompactionBufferSize(SPACE_LIMIT_SLACK);
    files.setMaxAllowedSpaceUsage(files.getTotalSize() + Math.max(0, bytes) + SPACE_LIMIT_SLACK);
  }

  /** Whether compactions were limited from the open on: only then is their size in flight read. */
  boolean compactionsLimited() {
    return compactionsLimited;
  }

  /**
   * The size of the inputs of the compactions running now, read from the table files RocksDB marks as being
   * compacted, not from its compaction callbacks: a callback attaches a RocksDB thread to the JVM, and one that
   * ended while the JVM exited (RocksDB's exit handler joins its threads with the JVM's lock held) hung the
   * process for ever. The database must be open.
   */
  long compactionBytesInFlight() {
    long bytes = 0;
    for (LiveFileMetaData f : db.getLiveFilesMetaData()) {
      if (f.beingCompacted()) {
        bytes += f.size();
      }
    }
    return bytes;
  }

  /** As {@link RocksStorage#outOfSpace}: told by the status's sub-code, never by words of the message. */
  static boolean outOfSpace(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof RocksDBException r && r.getStatus() != null
          && r.getStatus().getSubCode() == Status.SubCode.NoSpace) {
        return true;
      }
    }
    return false;
  }
}
