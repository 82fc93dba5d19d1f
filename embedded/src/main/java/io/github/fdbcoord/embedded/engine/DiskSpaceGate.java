package io.github.fdbcoord.embedded.engine;

import io.github.fdbcoord.embedded.log.FileLayer;

import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Holds commits while the data directory's (or the storage's) file system has less free space than the
 * configured reserve, as FoundationDB's ratekeeper stops transactions when a log or storage server runs
 * short of space: an engine that ran into a full disk would stop until restarted. Checked by the applier;
 * read by every commit.
 */
final class DiskSpaceGate {
  private static final Logger LOG = LoggerFactory.getLogger(DiskSpaceGate.class);

  private final List<Path> watched;
  private final long minFreeBytes;
  private final FileLayer files;
  /** Why commits are held for lack of disk space, or null. Written by {@link #check} only. */
  private volatile String lowOnSpace;
  /** A free-space reading failed and was logged (once). Checking thread only. */
  private boolean unreadable;

  DiskSpaceGate(List<Path> watched, long minFreeBytes, FileLayer files) {
    this.watched = List.copyOf(watched);
    this.minFreeBytes = minFreeBytes;
    this.files = files;
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
        if (usable < minFreeBytes) {
          low = String.format(Locale.ROOT, "%s has %,d bytes of disk space free, less than minFreeSpaceBytes (%,d)",
              dir, usable, minFreeBytes);
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
