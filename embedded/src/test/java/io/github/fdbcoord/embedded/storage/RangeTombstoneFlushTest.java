package io.github.fdbcoord.embedded.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.rocksdb.RocksIterator;

/**
 * Range clears that reach the storage as RocksDB range tombstones do not pile up in the mutable
 * memtable (where every new iterator pays for each of them) until the write buffer fills: the storage
 * flushes the memtable once it holds {@link RocksTuning#MEMTABLE_MAX_RANGE_DELETIONS} of them, and
 * the cleared data stays cleared and the rest readable across those flushes.
 */
@Timeout(60)
class RangeTombstoneFlushTest {
  /** Far larger than what the test writes: only the range deletions can make the memtable flush. */
  private static final long WRITE_BUFFER_BYTES = 64L << 20;
  private static final int KEYS_PER_GROUP = 4;

  @TempDir
  Path dir;

  private static byte[] key(int group, int i) {
    return String.format("group/%04d/%04d", group, i).getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] value(int group, int i) {
    return ("v" + group + "." + i).getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void theMutableMemtableIsFlushedOnceItHoldsTheLimitOfRangeDeletions() throws Exception {
    int limit = RocksTuning.MEMTABLE_MAX_RANGE_DELETIONS;
    int groups = 6 * limit + 10;
    long version = 0;
    try (RocksStorage storage = RocksStorage.open(dir, 8L << 20, WRITE_BUFFER_BYTES, 0)) {
      RocksStorage.WriteBatchBuilder fill = storage.batch();
      for (int g = 0; g < groups; g++) {
        for (int i = 0; i < KEYS_PER_GROUP; i++) {
          fill.set(key(g, i), value(g, i));
        }
      }
      storage.apply(fill, ++version);
      storage.flush();
      assertEquals(0, storage.properties().entriesInMutableMemtable(), "a flush leaves the mutable memtable empty");
      // From here on the memtable receives nothing but range deletions (every odd group, one commit
      // each), so its entry count is the number of range deletions it holds.
      long most = 0;
      int clears = 0;
      for (int g = 1; g < groups; g += 2) {
        RocksStorage.WriteBatchBuilder clear = storage.batch();
        clear.clearRange(key(g, 0), key(g + 1, 0));
        storage.apply(clear, ++version);
        clears++;
        most = Math.max(most, storage.properties().entriesInMutableMemtable());
      }
      assertTrue(clears > 2 * limit, "the test must issue well over the limit of range clears");
      assertTrue(most <= limit,
          "the mutable memtable held " + most + " range deletions, more than the limit " + limit
              + " after which it must be flushed");
      for (int g = 0; g < groups; g++) {
        for (int i = 0; i < KEYS_PER_GROUP; i++) {
          if (g % 2 == 1) {
            assertNull(storage.get(key(g, i)), "a cleared key came back after a flush");
          } else {
            assertArrayEquals(value(g, i), storage.get(key(g, i)));
          }
        }
      }
      List<String> seen = new ArrayList<>();
      try (RocksIterator it = storage.iterator()) {
        for (it.seekToFirst(); storage.valid(it); it.next()) {
          seen.add(new String(it.key(), StandardCharsets.UTF_8));
        }
      }
      assertEquals((groups - clears) * KEYS_PER_GROUP, seen.size(), "a scan sees exactly the keys not cleared: " + seen);
    }
  }
}
