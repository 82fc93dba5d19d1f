package io.github.fdbcoord.embedded.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The storage's row cache never answers with a value an apply has replaced. */
@Timeout(120)
class RowCacheTest {
  private static final int KEYS = 8;

  @TempDir
  Path dir;

  private static byte[] key(int i) {
    return ("row/" + i).getBytes(StandardCharsets.UTF_8);
  }

  private static long decode(byte[] value) {
    return value == null ? 0 : ByteBuffer.wrap(value).getLong();
  }

  @Test
  @Tag("slow")
  void readersNeverSeeAValueOlderThanTheLastCompletedApply() throws Exception {
    try (RocksStorage storage = RocksStorage.open(dir, 8L << 20, 4L << 20, Long.getLong("rowcache", 1L << 20))) {
      AtomicBoolean done = new AtomicBoolean();
      AtomicLong reads = new AtomicLong();
      ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
      List<Thread> readers = new ArrayList<>();
      for (int r = 0; r < 3; r++) {
        Thread t = new Thread(() -> {
          while (!done.get()) {
            int k = ThreadLocalRandom.current().nextInt(KEYS);
            long completed = storage.durableVersion();
            long seen = decode(storage.get(key(k)));
            long later = storage.durableVersion() + 1;
            reads.incrementAndGet();
            // Apply n writes n to every key, or clears them all when n is a multiple of 7: the read must
            // show one of the applies from the last completed one to the one in progress after it.
            boolean clearedMeanwhile = (later / 7) * 7 >= completed;
            if (seen == 0 ? completed > 0 && !clearedMeanwhile : seen < completed || seen > later) {
              problems.add("key " + k + " read " + seen + " between applies " + completed + " and " + later);
            }
          }
        });
        t.setDaemon(true);
        readers.add(t);
        t.start();
      }
      for (long n = 1; n <= 3000; n++) {
        RocksStorage.WriteBatchBuilder batch = storage.batch();
        if (n % 7 == 0) {
          batch.clearRange(key(0), key(KEYS));
        } else {
          if (n % 5 == 0) {
            batch.clearRange(key(0), key(KEYS));
          }
          for (int k = 0; k < KEYS; k++) {
            batch.set(key(k), ByteBuffer.allocate(8).putLong(n).array());
          }
        }
        storage.apply(batch, n);
      }
      done.set(true);
      for (Thread t : readers) {
        t.join();
      }
      assertTrue(problems.isEmpty(), problems.size() + " stale reads of " + reads.get() + ", e.g. " + problems.peek());
      assertTrue(reads.get() > 1000, "readers ran: " + reads.get());
      // After the last apply (3000, not a multiple of 7) every key holds it, cached or not.
      for (int k = 0; k < KEYS; k++) {
        assertEquals(3000, decode(storage.get(key(k))));
        assertEquals(3000, decode(storage.get(key(k))), "a cached read");
      }
    }
  }

  @Test
  void storedValuesAreCachedAbsentKeysAreNotAndWritesAreForgotten() throws Exception {
    try (RocksStorage storage = RocksStorage.open(dir, 8L << 20, 4L << 20, 1L << 20)) {
      byte[] k = key(1);
      assertNull(storage.get(k));
      assertFalse(storage.rowCached(k), "an absence is not cached");
      RocksStorage.WriteBatchBuilder batch = storage.batch();
      batch.set(k, new byte[] {42});
      storage.apply(batch, 1);
      assertArrayEquals(new byte[] {42}, storage.get(k));
      assertTrue(storage.rowCached(k), "a stored value is cached once read");
      assertArrayEquals(new byte[] {42}, storage.get(k), "a cached read");
      RocksStorage.WriteBatchBuilder overwrite = storage.batch();
      overwrite.set(k, new byte[] {43});
      storage.apply(overwrite, 2);
      assertFalse(storage.rowCached(k), "the apply forgot the replaced value");
      assertArrayEquals(new byte[] {43}, storage.get(k));
      // The caller's key array may change afterwards: the cache kept a copy.
      byte[] mutable = key(1);
      assertArrayEquals(new byte[] {43}, storage.get(mutable));
      mutable[mutable.length - 1] = '2';
      assertNull(storage.get(mutable));
      assertArrayEquals(new byte[] {43}, storage.get(key(1)));
    }
  }
}
