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
 * version, then the commit log's records after it, read into a {@link RecoveredTail} that goes into
 * the MVCC window and catches up into the storage in the background (only what exceeds its byte
 * bound, or a legacy snapshot, is written to the storage before the open).
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
      return new Engine(config, new VersionedStore(), null, 0, java.util.List.of());
    }
    Path dir = config.dataDirectory();
    RocksStorage storage = null;
    CommitLog log = null;
    try {
      long started = System.nanoTime();
      storage = RocksStorage.open(config.storageDirectory(), config.storageCacheBytes(),
          config.storageWriteBufferBytes(), config.rowCacheBytes(), config.verifyChecksumsAtOpen());
      long durable = storage.durableVersion();
      long storageOpened = System.nanoTime();
      // Half the backlog bound: commits then go on at once while the applier catches up.
      Loader loader = new Loader(storage, dir, new RecoveredTail(config.maxUnappliedBytes() / 2));
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
      if (loader.snapshotEntries > 0) {
        // A legacy snapshot moved wholly into the storage: flushed, its files can go.
        storage.flush();
        log.truncateThrough(log.rollSegment());
      }
      VersionedStore window = new VersionedStore(storage);
      RecoveredTail tail = loader.tail;
      tail.install(window);
      long now = System.nanoTime();
      // The phases apart: where a slow recovery spends its time.
      LOG.info(String.format("embedded engine %s opened in %d ms: storage at version %d, %d log records (%,d bytes)"
          + " read, %d of them (%,d bytes) into the window to catch up in the background, %d legacy snapshot"
          + " entries; storage open %d ms, log read and storage writes %d ms, window and flush %d ms", dir,
          (now - started) / 1_000_000, durable, loader.records, loader.bytes, tail.size(), tail.bytes(),
          loader.snapshotEntries, (storageOpened - started) / 1_000_000, (replayed - storageOpened) / 1_000_000,
          (now - replayed) / 1_000_000));
      return new Engine(config, window, log, log.recoveredVersion(), tail.records());
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

  /**
   * Keeps what the log replays in the recovered tail, and writes what goes beyond it (and a legacy
   * snapshot) into the storage, in batches, logging progress on long recoveries.
   */
  private static final class Loader implements CommitLog.Replay {
    private final RocksStorage storage;
    private final Path dir;
    final RecoveredTail tail;
    private RocksStorage.WriteBatchBuilder batch;
    /** The newest record written to the storage, or -1. */
    private long lastVersion = -1;
    long records;
    long bytes;
    long snapshotEntries;
    private long nextProgress = System.nanoTime() + PROGRESS_INTERVAL_NANOS;

    Loader(RocksStorage storage, Path dir, RecoveredTail tail) {
      this.storage = storage;
      this.dir = dir;
      this.tail = tail;
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
      records++;
      bytes += payload.length;
      tail.add(version, payload, this::toStorage);
    }

    private void toStorage(Applier.Logged record) {
      LogRecordWriter.replay(record.changes(), batch);
      lastVersion = record.version();
      if (batch.size() >= RECOVERY_BATCH_BYTES) {
        write(record.version());
      }
    }

    void finish(long recoveredVersion) {
      if (snapshotEntries > 0) {
        // An older release's directory: its state moves into the storage in one go, as it always did.
        tail.moveAll(this::toStorage);
      }
      if (tail.size() > 0) {
        // The storage's version stays below the tail's records, which the applier writes after it.
        if (batch.count() > 0) {
          write(lastVersion);
        }
      } else if (batch.count() > 0 || recoveredVersion > storage.durableVersion()) {
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
