package io.github.fdbcoord.embedded.storage;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.Cache;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.Env;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.SstFileManager;

/**
 * The native objects of the storage's open RocksDB database: the database, its two column families (the data
 * and the engine's own records), the table-file manager and the cache and options they were opened with.
 * Opened together, after the checks that keep RocksDB's own open from turning damage into silent loss, and
 * closed together: the column families before the database, the options and cache after it.
 */
final class RocksHandles {
  private static final byte[] META_FAMILY = "engine-meta".getBytes(StandardCharsets.US_ASCII);

  final RocksDB db;
  /** The stored keys (RocksDB's default column family). */
  final ColumnFamilyHandle data;
  /** The engine's own records: the durable version, whether the commit log keeps a manifest. */
  final ColumnFamilyHandle meta;
  /** Tracks the table files' sizes; decides whether a compaction may start (see {@link StorageSpace}). */
  final SstFileManager files;
  /** Table files the RocksDB MANIFEST did not list when the database was opened (see {@link #open}). */
  final List<String> unlistedTables;
  /** What the database was opened with; RocksDB must have closed before they are. */
  private final List<AutoCloseable> resources;

  private RocksHandles(RocksDB db, ColumnFamilyHandle data, ColumnFamilyHandle meta, SstFileManager files,
      List<String> unlistedTables, List<AutoCloseable> resources) {
    this.db = db;
    this.data = data;
    this.meta = meta;
    this.files = files;
    this.unlistedTables = unlistedTables;
    this.resources = resources;
  }

  /**
   * Opens (creating if needed) the database in {@code dir}, the storage's directory in {@code dataDirectory}, as
   * {@link RocksStorage#open(Path, long, long, long, boolean, boolean, boolean)} describes: a missing
   * {@code CURRENT} is refused and table files the MANIFEST does not list are kept before RocksDB's open, and with
   * {@code verifyChecksums} every table file's checksums are read first.
   */
  static RocksHandles open(Path dataDirectory, Path dir, long cacheBytes, long writeBufferBytes,
      boolean verifyChecksums, boolean forReplay, boolean compactionsWaitForRoom) throws IOException {
    Files.createDirectories(dir);
    StorageFiles.refuseMissingCurrent(dir);
    List<String> unlisted = StorageFiles.keepUnlistedTables(dataDirectory, dir);
    if (verifyChecksums) {
      List<String> damaged = StorageFiles.verifyTables(dir);
      if (!damaged.isEmpty()) {
        throw new IOException("the engine's storage " + dir + " is damaged (checksums verified at open): "
            + String.join("; ", damaged));
      }
    }
    List<AutoCloseable> resources = new ArrayList<>();
    Cache cache = RocksTuning.blockCache(cacheBytes);
    resources.add(cache);
    BloomFilter bloom = new BloomFilter(10, false);
    resources.add(bloom);
    BlockBasedTableConfig table = RocksTuning.tableConfig(cache, bloom);
    ColumnFamilyOptions family = RocksTuning.columnFamily(table, writeBufferBytes);
    resources.add(family);
    ColumnFamilyOptions dataFamily = family;
    if (forReplay) {
      dataFamily = RocksTuning.replayFamily(table, writeBufferBytes);
      resources.add(dataFamily);
    }
    SstFileManager files;
    try {
      files = new SstFileManager(Env.getDefault());
    } catch (RocksDBException e) {
      closeAll(resources);
      throw new IOException("cannot open the engine's storage " + dir + ": " + e.getMessage(), e);
    }
    resources.add(files);
    DBOptions options = RocksTuning.database(files);
    if (compactionsWaitForRoom) {
      StorageSpace.compactionsWaitForRoom(files, options);
    }
    if (forReplay) {
      // A vector memtable takes one writer at a time; its flushes run side by side, synced once at their end.
      options.setAllowConcurrentMemtableWrite(false).setBytesPerSync(0).setMaxBackgroundJobs(4);
    }
    resources.add(options);
    List<ColumnFamilyDescriptor> families = List.of(
        new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, dataFamily),
        new ColumnFamilyDescriptor(META_FAMILY, family));
    List<ColumnFamilyHandle> handles = new ArrayList<>();
    RocksDB db;
    try {
      db = RocksDB.open(options, dir.toString(), families, handles);
    } catch (RocksDBException e) {
      closeAll(resources);
      throw StorageFiles.openFailure(dataDirectory, dir, e);
    }
    return new RocksHandles(db, handles.get(0), handles.get(1), files, unlisted, resources);
  }

  /** Closes the database and everything it was opened with; the caller has stopped its background work. */
  void close() {
    data.close();
    meta.close();
    db.close();
    closeAll(resources);
  }

  private static void closeAll(List<AutoCloseable> resources) {
    for (AutoCloseable r : resources) {
      try {
        r.close();
      } catch (Exception e) {
        // Native handles: nothing left to do.
      }
    }
  }
}
