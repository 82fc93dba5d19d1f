package io.github.fdbcoord.embedded.storage;

import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.LiveFileMetaData;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;

/**
 * What the storage's open RocksDB tells about the data it holds: its properties (table files at level 0,
 * memtables, compaction debt), for a log line and for tests, and the table files it lists, for the scrub.
 */
final class RocksProperties {
  private final Path dir;
  private final RocksDB db;
  private final ColumnFamilyHandle data;
  private final StorageDamage damage;

  RocksProperties(Path dir, RocksDB db, ColumnFamilyHandle data, StorageDamage damage) {
    this.dir = dir;
    this.db = db;
    this.data = data;
    this.damage = damage;
  }

  /** As {@link RocksStorage#stallCause()}; "unknown" and RocksDB's reason when a property cannot be read. */
  String stallCause() {
    try {
      return db.getProperty(data, "rocksdb.num-files-at-level0") + " table files at level 0, "
          + db.getProperty(data, "rocksdb.num-immutable-mem-table") + " memtables waiting for a flush, "
          + db.getProperty(data, "rocksdb.estimate-pending-compaction-bytes") + " bytes waiting for compaction";
    } catch (RocksDBException e) {
      return "unknown: " + StorageFiles.stateOf(e);
    }
  }

  /** Table files at level 0 of the data, which compactions move down (for tests). */
  long tableFilesAtLevel0() {
    try {
      return Long.parseLong(db.getProperty(data, "rocksdb.num-files-at-level0"));
    } catch (RocksDBException e) {
      throw damage.failure("reading a property of", e);
    }
  }

  /** The entries (writes, deletes and range deletions) in RocksDB's mutable memtable of the data (for tests). */
  long entriesInMutableMemtable() {
    try {
      return db.getLongProperty(data, "rocksdb.num-entries-active-mem-table");
    } catch (RocksDBException e) {
      throw damage.failure("reading a property of", e);
    }
  }

  /** The table files the open storage lists now, with their sizes, for the scrub. */
  Map<Path, Long> liveTables() {
    Map<Path, Long> tables = new TreeMap<>();
    for (LiveFileMetaData f : db.getLiveFilesMetaData()) {
      tables.put(dir.resolve(StorageFiles.fileName(f.fileName())), f.size());
    }
    return tables;
  }
}
