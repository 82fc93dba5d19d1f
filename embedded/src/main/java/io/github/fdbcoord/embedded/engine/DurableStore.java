package io.github.fdbcoord.embedded.engine;

import io.github.fdbcoord.embedded.log.CommitLog;
import io.github.fdbcoord.embedded.log.LogRecordWriter;
import io.github.fdbcoord.embedded.storage.RocksStorage;
import io.github.fdbcoord.embedded.storage.VersionedStore;

import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;

/**
 * Opens an engine: in memory, or recovered from its data directory: the storage at its durable
 * version, then the commit log's records after it replayed into the storage, which is flushed so
 * that the log behind it can go. The replay writes into unsorted memtables that RocksDB sorts once
 * per flush, on its own threads while the log is still being read: inserting a random key into a
 * skip list costs a cache miss at every level, and that, not reading the log, was where a
 * recovery's time went.
 */
public final class DurableStore {
  private static final Logger LOG = LoggerFactory.getLogger(DurableStore.class);
  /** Recovery writes the storage in batches of about this many bytes. */
  private static final long RECOVERY_BATCH_BYTES = 16L << 20;
  private static final long PROGRESS_INTERVAL_NANOS = 5_000_000_000L;

  private DurableStore() {}

  /**
   * Opens the engine {@code config} describes: in memory, or recovered from its data directory.
   *
   * @throws UncheckedIOException when the data directory cannot be opened or recovered
   */
  public static Engine open(EngineConfig config) {
    if (!config.durable()) {
      return new Engine(config, new VersionedStore(), null, 0);
    }
    Path dir = config.dataDirectory();
    RocksStorage storage = null;
    CommitLog log = null;
    try {
      long started = System.nanoTime();
      storage = RocksStorage.open(config.storageDirectory(), config.storageCacheBytes(),
          config.storageWriteBufferBytes(), config.rowCacheBytes(), config.verifyChecksumsAtOpen(), true);
      long durable = storage.durableVersion();
      long storageOpened = System.nanoTime();
      Loader loader = new Loader(storage, dir);
      boolean manifestRequired = storage.logManifestRequired();
      log = CommitLog.open(config.files(), dir, durable, manifestRequired, loader);
      if (!manifestRequired) {
        // From now on a missing manifest is damage, not an older release's directory.
        storage.requireLogManifest();
      }
      // The log accepted the storage's version: table files the MANIFEST did not list were a crash's leftovers.
      storage.dropUnlistedTables();
      loader.finish(log.recoveredVersion());
      long replayed = System.nanoTime();
      boolean replayedAny = loader.records > 0 || loader.snapshotEntries > 0;
      if (replayedAny) {
        storage.flush();
      }
      // Opened again to serve: reads of a vector memtable sort it first. Null in between, so that a
      // failed second open does not close the first storage again.
      storage.close();
      storage = null;
      storage = RocksStorage.open(config.storageDirectory(), config.storageCacheBytes(),
          config.storageWriteBufferBytes(), config.rowCacheBytes(), false, false, config.minFreeSpaceBytes() > 0);
      if (replayedAny) {
        log.truncateThrough(log.rollSegment());
      }
      long now = System.nanoTime();
      // The phases apart: where a slow recovery spends its time.
      LOG.info(String.format("embedded engine %s opened in %d ms: storage at version %d, %d log records (%,d bytes)"
          + " and %d legacy snapshot entries replayed; storage open %d ms, log read and replay %d ms, flush, reopen"
          + " and truncation %d ms", dir, (now - started) / 1_000_000, durable, loader.records, loader.bytes,
          loader.snapshotEntries, (storageOpened - started) / 1_000_000, (replayed - storageOpened) / 1_000_000,
          (now - replayed) / 1_000_000));
      return new Engine(config, new VersionedStore(storage), log, log.recoveredVersion());
    } catch (IOException e) {
      String unlisted = storage == null ? "" : storage.unlistedTablesNote();
      closeQuietly(log, storage);
      throw new UncheckedIOException("cannot open the data directory " + dir + ": " + e.getMessage() + unlisted, e);
    } catch (RuntimeException | Error e) {
      closeQuietly(log, storage);
      throw e;
    }
  }

  private static void closeQuietly(CommitLog log, RocksStorage storage) {
    if (log != null) {
      log.close();
    }
    if (storage != null) {
      storage.close();
    }
  }

  /** Writes what the log replays into the storage, in batches, logging progress on long recoveries. */
  private static final class Loader implements CommitLog.Replay {
    private final RocksStorage storage;
    private final Path dir;
    private RocksStorage.WriteBatchBuilder batch;
    private long lastVersion = -1;
    long records;
    long bytes;
    long snapshotEntries;
    private long nextProgress = System.nanoTime() + PROGRESS_INTERVAL_NANOS;

    Loader(RocksStorage storage, Path dir) {
      this.storage = storage;
      this.dir = dir;
      this.batch = storage.batch();
    }

    @Override
    public void snapshotEntry(byte[] key, byte[] value) {
      batch.set(key, value);
      snapshotEntries++;
      if (batch.size() >= RECOVERY_BATCH_BYTES) {
        // A partly loaded snapshot is not a version: the recorded version stays where it was.
        write(-1);
      }
    }

    @Override
    public void snapshotLoaded(long version) {
      write(version);
    }

    @Override
    public void record(long version, byte[] payload) {
      LogRecordWriter.replay(payload, batch);
      lastVersion = version;
      records++;
      bytes += payload.length;
      if (batch.size() >= RECOVERY_BATCH_BYTES) {
        write(version);
      }
    }

    void finish(long recoveredVersion) {
      if (batch.count() > 0 || recoveredVersion > storage.durableVersion()) {
        write(Math.max(lastVersion, recoveredVersion));
      }
    }

    private void write(long version) {
      storage.apply(batch, version);
      batch = storage.batch();
      long now = System.nanoTime();
      if (now >= nextProgress) {
        nextProgress = now + PROGRESS_INTERVAL_NANOS;
        LOG.info(String.format("embedded engine %s: recovering, %d log records (%,d bytes) and %d legacy snapshot"
            + " entries replayed so far", dir, records, bytes, snapshotEntries));
      }
    }
  }
}
