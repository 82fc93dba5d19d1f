package io.github.fdbcoord.embedded.storage;

import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.Cache;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.CompressionType;
import org.rocksdb.DBOptions;
import org.rocksdb.Filter;
import org.rocksdb.IndexType;
import org.rocksdb.LRUCache;
import org.rocksdb.SstFileManager;
import org.rocksdb.VectorMemTableConfig;

/**
 * How the engine's storage configures RocksDB, in one place: the block cache, the table format, the
 * column families' memtables and compaction, and the database's options. Public where benchmarks
 * compare RocksDB alone with the same settings.
 */
public final class RocksTuning {
  /**
   * A memtable is flushed once it holds this many range deletions. Every iterator opened on the
   * storage (each range read, each range clear's scan) pays for the range tombstones of the mutable
   * memtable, and with a write buffer that takes minutes to fill they would pile up that long; once
   * flushed they sit in a table file whose fragmented tombstones are built once and cached.
   */
  static final int MEMTABLE_MAX_RANGE_DELETIONS = 8;

  private RocksTuning() {}

  /**
   * The block cache: few shards, half of it kept for index and filter blocks. A metadata block larger
   * than its shard is evicted at once, and every read then parses it again from the file (about 1 ms a
   * read with RocksDB's default 64 shards of a 64 MiB cache).
   */
  public static Cache blockCache(long bytes) {
    return new LRUCache(bytes, 2, false, 0.5);
  }

  /** The storage's table options. */
  public static BlockBasedTableConfig tableConfig(Cache cache, Filter bloom) {
    return new BlockBasedTableConfig()
        .setBlockCache(cache)
        .setFilterPolicy(bloom)
        // Index and filter blocks live in the block cache too, so RocksDB's memory stays within
        // the configured cache however many keys are stored; partitioned into 4 KiB pieces, so that
        // what a read needs is small and stays cached, with only the top level pinned.
        .setCacheIndexAndFilterBlocks(true)
        .setCacheIndexAndFilterBlocksWithHighPriority(true)
        .setIndexType(IndexType.kTwoLevelIndexSearch)
        .setPartitionFilters(true)
        .setMetadataBlockSize(4096)
        .setPinTopLevelIndexAndFilter(true)
        .setPinL0FilterAndIndexBlocksInCache(true)
        .setBlockSize(16 * 1024);
  }

  /** The options of both column families (the data and the engine's own records). */
  static ColumnFamilyOptions columnFamily(BlockBasedTableConfig table, long writeBufferBytes) {
    return new ColumnFamilyOptions()
        .setTableFormatConfig(table)
        .setWriteBufferSize(writeBufferBytes)
        .setMaxWriteBufferNumber(3)
        .setCompressionType(CompressionType.LZ4_COMPRESSION)
        .setLevelCompactionDynamicLevelBytes(true)
        .setMemtableMaxRangeDeletions(MEMTABLE_MAX_RANGE_DELETIONS);
  }

  /**
   * What the data's memtables may hold in all while a recovery replays the log: room for a typical crash's
   * tail (the MVCC window and the applier's lag of writes, 40–120 MB at tens of MB/s) while the first
   * ones are flushed; a larger tail waits for the flushes, as any write does.
   */
  static final long REPLAY_MEMTABLE_BYTES = 256L << 20;

  /**
   * The data's options while a recovery replays the log: append-only memtables, sorted when they are
   * flushed, enough of them that the replay does not wait for the flushes, and no compaction until the
   * storage is opened again to serve (the replay's table files are compacted then, so they are not
   * compressed now either).
   */
  static ColumnFamilyOptions replayFamily(BlockBasedTableConfig table, long writeBufferBytes) {
    int memtables = (int) Math.max(3, Math.min(64, REPLAY_MEMTABLE_BYTES / writeBufferBytes));
    return columnFamily(table, writeBufferBytes)
        .setMemTableConfig(new VectorMemTableConfig())
        .setCompressionType(CompressionType.NO_COMPRESSION)
        .setMaxWriteBufferNumber(memtables)
        .setDisableAutoCompactions(true)
        .setLevel0SlowdownWritesTrigger(1 << 20)
        .setLevel0StopWritesTrigger(1 << 20);
  }

  /** The database's options; with {@code files} RocksDB resumes by itself after a write failed for lack of space. */
  static DBOptions database(SstFileManager files) {
    return new DBOptions()
        .setSstFileManager(files)
        .setCreateIfMissing(true)
        .setCreateMissingColumnFamilies(true)
        // The data and the durable-version record must reach disk together.
        .setAtomicFlush(true)
        // The storage flushes when the engine asks (with writes allowed to stall), and the commit log keeps what
        // it did not flush. RocksDB's own flush at shutdown waits until a flush would not stop writes: while
        // compactions wait for room on a nearly full disk, that was for ever, and the close with it.
        .setAvoidFlushDuringShutdown(true)
        .setMaxBackgroundJobs(2)
        .setBytesPerSync(1L << 20)
        .setKeepLogFileNum(3);
  }
}
