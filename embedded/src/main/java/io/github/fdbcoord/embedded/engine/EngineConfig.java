package io.github.fdbcoord.embedded.engine;

import io.github.fdbcoord.embedded.log.FileLayer;

import java.nio.file.Path;
import java.util.Objects;

/**
 * The engine's settings: the public {@code EmbeddedOptions} builds this record and holds it (adding only
 * the transactions' executor), so that the engine does not depend on the layer above it and no setting
 * is copied from one to the other.
 *
 * @param dataDirectory where the commit log lives, or null in memory
 * @param storageDirectory where RocksDB lives (the data directory unless a test moved it); null in memory
 * @param files what the data directory's files are read and written through
 * @param readLatencyNanos delay added to every read that goes to storage
 * @param commitLatencyNanos delay added to every commit before it is resolved
 * @param compactAfterLogBytes the log is truncated behind the storage once it grows past this
 * @param storageCacheBytes RocksDB's block cache
 * @param storageWriteBufferBytes RocksDB's memtable size
 * @param rowCacheBytes heap for values read from the storage (0: off)
 * @param maxUnappliedBytes commits wait while more changes than this are not yet in the storage
 * @param minFreeSpaceBytes commits wait while a watched disk has less free space than this (0: off)
 * @param applyObserver test seam told of the applier's steps, or null
 * @param verifyChecksumsAtOpen whether the storage's table files are verified before it opens
 * @param scrubIntervalNanos how often the background scrub reads the whole storage (0: never)
 * @param scrubBytesPerSecond the scrub's average read rate
 */
public record EngineConfig(Path dataDirectory, Path storageDirectory, FileLayer files, long readLatencyNanos,
    long commitLatencyNanos, long compactAfterLogBytes, long storageCacheBytes, long storageWriteBufferBytes,
    long rowCacheBytes, long maxUnappliedBytes, long minFreeSpaceBytes, ApplyObserver applyObserver,
    boolean verifyChecksumsAtOpen, long scrubIntervalNanos, long scrubBytesPerSecond) {

  /** Checks that the durable mode's settings are complete. */
  public EngineConfig {
    Objects.requireNonNull(files, "files");
    if (dataDirectory != null) {
      Objects.requireNonNull(storageDirectory, "storageDirectory");
    }
  }

  /** Whether the engine keeps its data in a directory (else in memory). */
  public boolean durable() {
    return dataDirectory != null;
  }
}
