package io.github.fdbcoord.embedded.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link RocksStorage#roomForCompactions}: RocksDB starts no compaction whose inputs do not fit in the room
 * given (level-0 table files pile up past its trigger of 4), and compacts them once there is room.
 */
@Timeout(60)
class CompactionRoomTest {
  private static final int TABLES = 8;
  private static final int KEYS_PER_TABLE = 64;

  @TempDir
  Path dir;

  private static byte[] key(int table, int i) {
    // Every table spans the whole key space: each overlaps the others, so a compaction must take them all.
    return String.format("k/%04d/%02d", i, table).getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void noCompactionStartsWithoutRoomForItsInputsAndTheyAreCompactedOnceThereIsRoom() throws Exception {
    Random random = new Random(34);
    byte[][] values = new byte[TABLES][];
    try (RocksStorage storage = RocksStorage.open(dir, 4L << 20, 4L << 20, 0)) {
      storage.roomForCompactions(0);
      long version = 0;
      for (int t = 0; t < TABLES; t++) {
        RocksStorage.WriteBatchBuilder batch = storage.batch();
        values[t] = new byte[4096];
        random.nextBytes(values[t]);
        for (int i = 0; i < KEYS_PER_TABLE; i++) {
          batch.set(key(t, i), values[t]);
        }
        storage.apply(batch, ++version);
        storage.flush();
      }
      assertEquals(TABLES, storage.properties().tableFilesAtLevel0(),
          "no compaction ran without room for it: every flush's table file is still at level 0");
      storage.roomForCompactions(1L << 30);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (storage.properties().tableFilesAtLevel0() >= TABLES) {
        if (System.nanoTime() > deadline) {
          throw new AssertionError("no compaction within 30 s once there was room for it");
        }
        Thread.sleep(10);
      }
      for (int t = 0; t < TABLES; t++) {
        for (int i = 0; i < KEYS_PER_TABLE; i++) {
          assertArrayEquals(values[t], storage.get(key(t, i)));
        }
      }
    }
  }
}
