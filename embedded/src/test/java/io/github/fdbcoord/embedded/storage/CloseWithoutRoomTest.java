package io.github.fdbcoord.embedded.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A close while compactions wait for room (a disk near its reserve) and level 0 is one table short of
 * stopping writes, with unflushed writes in the memtable: RocksDB's own flush at shutdown waits until a
 * flush would not stop writes, which only a compaction can bring about, so a close that let it flush waited
 * for ever (DiskReserveTest hung 30 minutes in it). The storage flushes only when asked; what the close
 * does not flush is still in the commit log, which is truncated only behind {@link RocksStorage#durableVersion()}.
 */
@Timeout(120)
class CloseWithoutRoomTest {
  /** RocksDB's default level0_stop_writes_trigger, which the storage keeps. */
  private static final int STOP_WRITES_AT_LEVEL0 = 36;

  @TempDir
  Path dir;

  private static byte[] key(int table) {
    return String.format("k/%04d", table).getBytes(StandardCharsets.UTF_8);
  }

  private static void write(RocksStorage storage, int table, long version) {
    RocksStorage.WriteBatchBuilder batch = storage.batch();
    batch.set(key(table), new byte[] {(byte) table});
    storage.apply(batch, version);
  }

  @Test
  void aCloseWhoseFlushWouldStopWritesEndsWithoutFlushingAndKeepsWhatWasFlushed() throws Exception {
    int flushed = STOP_WRITES_AT_LEVEL0 - 1;
    RocksStorage storage = RocksStorage.open(dir, 4L << 20, 4L << 20, 0);
    storage.roomForCompactions(0);
    for (int t = 1; t <= flushed; t++) {
      write(storage, t, t);
      storage.flush();
    }
    assertEquals(flushed, storage.properties().tableFilesAtLevel0(), "no compaction ran without room for it");
    write(storage, flushed + 1, flushed + 1);

    Thread closing = new Thread(storage::close, "closing");
    closing.setDaemon(true);
    closing.start();
    closing.join(TimeUnit.SECONDS.toMillis(60));
    assertFalse(closing.isAlive(), "the close still waits after 60 s: " + stackOf(closing));

    try (RocksStorage reopened = RocksStorage.open(dir, 4L << 20, 4L << 20, 0)) {
      assertEquals(flushed, reopened.durableVersion(), "the storage holds what was flushed, the log the rest");
      for (int t = 1; t <= flushed; t++) {
        assertArrayEquals(new byte[] {(byte) t}, reopened.get(key(t)));
      }
      assertNull(reopened.get(key(flushed + 1)), "the unflushed write was not flushed by the close");
    }
  }

  private static String stackOf(Thread t) {
    StringBuilder b = new StringBuilder();
    for (StackTraceElement e : t.getStackTrace()) {
      b.append("\n\tat ").append(e);
    }
    return b.toString();
  }
}
