package io.github.fdbcoord.embedded.resolver;

import io.github.fdbcoord.embedded.bytes.Bytes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

public class ConflictHistoryTest {
  private static final long EPOCH = ConflictHistory.EPOCH_VERSIONS;

  private static byte[] k(String s) {
    return s.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
  }

  private static void writeKey(ConflictHistory h, byte[] key, long version) {
    h.write(key, Bytes.keyAfter(key), version);
  }

  private static boolean readsKey(ConflictHistory h, byte[] key, long readVersion) {
    return h.conflicts(key, Bytes.keyAfter(key), readVersion);
  }

  @Test
  void pointWriteConflictsWithPointReadOfTheSameKeyOnly() {
    ConflictHistory h = new ConflictHistory();
    writeKey(h, k("a"), 10);
    assertTrue(readsKey(h, k("a"), 9));
    assertFalse(readsKey(h, k("a"), 10), "a write at the read version is not newer than it");
    assertFalse(readsKey(h, k("b"), 9));
    assertFalse(readsKey(h, k("a\0"), 9), "a + \\x00 is a different key");
    assertFalse(readsKey(h, k(""), 9), "the empty key is a prefix of a, not a itself");
  }

  @Test
  void pointWriteAtTheEndOfARangeReadDoesNotConflict() {
    ConflictHistory h = new ConflictHistory();
    writeKey(h, k("b"), 10);
    assertFalse(h.conflicts(k("a"), k("b"), 5), "[a, b) excludes b");
    assertTrue(h.conflicts(k("a"), k("b\0"), 5));
    assertTrue(h.conflicts(k("b"), k("c"), 5));
    assertTrue(h.conflicts(k(""), k("\u00ff"), 5));
    assertFalse(h.conflicts(k("b\0"), k("c"), 5), "b is before b + \\x00");
  }

  @Test
  void rangeWriteCoversPointReadsInsideItOnly() {
    ConflictHistory h = new ConflictHistory();
    h.write(k("b"), k("d"), 10);
    assertTrue(readsKey(h, k("b"), 9));
    assertTrue(readsKey(h, k("c\u00ff\u00ff"), 9));
    assertFalse(readsKey(h, k("d"), 9), "the range write ends before d");
    assertFalse(readsKey(h, k("a"), 9));
    assertTrue(h.conflicts(k("a"), k("b\0"), 9));
    assertFalse(h.conflicts(k("a"), k("b"), 9));
    assertFalse(readsKey(h, k("c"), 10));
  }

  @Test
  void rewritingAKeyInOneEpochKeepsTheNewestVersion() {
    ConflictHistory h = new ConflictHistory();
    writeKey(h, k("x"), 10);
    writeKey(h, k("y"), 15);
    writeKey(h, k("x"), 20);
    assertTrue(readsKey(h, k("x"), 15));
    assertTrue(readsKey(h, k("x"), 19));
    assertFalse(readsKey(h, k("x"), 20));
    assertTrue(h.conflicts(k("w"), k("z"), 19), "a wide read sees the newest version too");
    assertFalse(h.conflicts(k("w"), k("z"), 20));
    assertEquals(2, h.size(), "a rewrite adds no entry");
  }

  @Test
  void cannotCheckReadsOlderThanAForgottenEpoch() {
    ConflictHistory h = new ConflictHistory();
    writeKey(h, k("a"), 100);
    writeKey(h, k("a"), 200);
    writeKey(h, k("b"), 100 + EPOCH);
    assertTrue(h.canCheck(0));
    h.forgetBefore(199);
    assertTrue(h.canCheck(0), "the first epoch still holds a write at 200");
    h.forgetBefore(200);
    assertFalse(h.canCheck(199));
    assertTrue(h.canCheck(200));
    assertFalse(readsKey(h, k("a"), 200));
    assertTrue(readsKey(h, k("b"), 200));
    h.forgetBefore(100 + EPOCH);
    assertFalse(h.canCheck(99 + EPOCH));
    assertTrue(h.canCheck(100 + EPOCH));
    assertEquals(0, h.size());
  }

  @Test
  void hashTableGrowsThroughManyDoublings() {
    ConflictHistory h = new ConflictHistory();
    int n = 20_000;
    for (int i = 0; i < n; i++) {
      writeKey(h, key(i), 1 + i);
    }
    assertEquals(n, h.size());
    for (int i = 0; i < n; i++) {
      assertTrue(readsKey(h, key(i), i), "key " + i);
      assertFalse(readsKey(h, key(i), i + 1), "key " + i);
    }
    assertFalse(readsKey(h, key(n), 0));
    // A wide read over all of them sorts the whole table at once.
    assertTrue(h.conflicts(key(0), key(n), n - 1));
    assertFalse(h.conflicts(key(0), key(n - 1), n - 1), "the newest key is at the end, excluded");
    assertTrue(h.conflicts(key(n / 2), Bytes.keyAfter(key(n / 2)), n / 2));
    assertTrue(h.conflicts(key(n / 2), key(n / 2 + 2), n / 2 + 1));
    assertFalse(h.conflicts(key(n / 2), key(n / 2 + 2), n / 2 + 2));
  }

  private static byte[] key(int i) {
    return new byte[] {'k', (byte) (i >>> 24), (byte) (i >>> 16), (byte) (i >>> 8), (byte) i};
  }

  // ---- Randomized model test ----

  /** Keys over {00, 01, fe, ff} of length 0..4: the empty key, many prefixes of each other, dense ranges. */
  private static final byte[][] ALPHABET;

  static {
    byte[] symbols = {0x00, 0x01, (byte) 0xfe, (byte) 0xff};
    List<byte[]> keys = new ArrayList<>();
    keys.add(new byte[0]);
    for (int len = 1; len <= 4; len++) {
      int combos = 1 << (2 * len);
      for (int c = 0; c < combos; c++) {
        byte[] key = new byte[len];
        for (int p = 0; p < len; p++) {
          key[p] = symbols[(c >>> (2 * p)) & 3];
        }
        keys.add(key);
      }
    }
    ALPHABET = keys.toArray(new byte[0][]);
  }

  private record Write(byte[] begin, byte[] end, long version) {}

  /** Brute force: every write kept, epochs tracked only to know which read versions can be checked. */
  private static final class Model {
    final List<Write> writes = new ArrayList<>();
    final List<long[]> epochs = new ArrayList<>(); // {first, last}, oldest first
    long forgotten;

    void write(byte[] begin, byte[] end, long version) {
      if (Bytes.compare(begin, end) >= 0) {
        return;
      }
      long[] last = epochs.isEmpty() ? null : epochs.get(epochs.size() - 1);
      if (last == null || version - last[0] >= EPOCH) {
        epochs.add(new long[] {version, version});
      } else {
        last[1] = version;
      }
      writes.add(new Write(begin, end, version));
    }

    void forgetBefore(long version) {
      while (!epochs.isEmpty() && epochs.get(0)[1] <= version) {
        forgotten = Math.max(forgotten, epochs.remove(0)[1]);
      }
      // Writes at or below the forgotten version cannot conflict with a checkable read.
      writes.removeIf(w -> w.version <= forgotten);
    }

    boolean canCheck(long readVersion) {
      return readVersion >= forgotten;
    }

    boolean conflicts(byte[] begin, byte[] end, long readVersion) {
      if (Bytes.compare(begin, end) >= 0) {
        return false;
      }
      for (Write w : writes) {
        if (w.version > readVersion && Bytes.compare(w.begin, end) < 0 && Bytes.compare(begin, w.end) < 0) {
          return true;
        }
      }
      return false;
    }
  }

  @Test
  void matchesABruteForceModel() {
    for (long seed = 1; seed <= 8; seed++) {
      try {
        runModel(seed, 4_000);
      } catch (AssertionError e) {
        throw new AssertionError("seed " + seed + ": " + e.getMessage(), e);
      }
    }
  }

  private static byte[] randomKey(Random r) {
    return ALPHABET[r.nextInt(ALPHABET.length)];
  }

  private static void runModel(long seed, int steps) {
    Random r = new Random(seed);
    ConflictHistory h = new ConflictHistory();
    Model m = new Model();
    long version = 1;
    int quietSteps = 0;
    for (int step = 0; step < steps; step++) {
      // About 400 steps per epoch, so an epoch fills its table well past the merge bound.
      int dice = r.nextInt(1000);
      version += dice < 975 ? 1 + r.nextInt(20) : dice < 998 ? 1 + r.nextInt(2_000) : EPOCH + r.nextInt((int) (2 * EPOCH));
      String op;
      if (r.nextInt(100) < 75) {
        byte[] key = randomKey(r);
        op = "write key " + HexFormat.of().formatHex(key) + " @" + version;
        h.write(key, Bytes.keyAfter(key), version);
        m.write(key, Bytes.keyAfter(key), version);
      } else {
        byte[] a = randomKey(r);
        byte[] b = r.nextInt(10) == 0 ? Bytes.keyAfter(a) : randomKey(r);
        op = "write range " + HexFormat.of().formatHex(a) + ".." + HexFormat.of().formatHex(b) + " @" + version;
        // Inverted and empty ranges are ignored by both.
        h.write(a, b, version);
        m.write(a, b, version);
      }
      if (r.nextInt(200) == 0) {
        long before = version - r.nextInt((int) (3 * EPOCH));
        op += "; forget before " + before;
        h.forgetBefore(before);
        m.forgetBefore(before);
      }
      // Bursts without reads let the unsorted tail grow far past the merge bound.
      if (quietSteps > 0) {
        quietSteps--;
        continue;
      }
      if (r.nextInt(40) == 0) {
        quietSteps = 50 + r.nextInt(300);
      }
      check(r, h, m, version, "step " + step + " (" + op + ")");
    }
  }

  private static void check(Random r, ConflictHistory h, Model m, long version, String where) {
    assertEquals(m.writes.isEmpty() && m.epochs.isEmpty(), h.size() == 0, where + ": emptiness");
    for (int q = 0; q < 12; q++) {
      long lo = Math.max(0, m.forgotten - 100);
      long rv = lo + (long) (r.nextDouble() * (version + 10 - lo));
      if (r.nextBoolean()) {
        rv = Math.max(0, version - r.nextInt(200));
      }
      assertEquals(m.canCheck(rv), h.canCheck(rv), where + ": canCheck(" + rv + ")");
      if (!m.canCheck(rv)) {
        continue;
      }
      byte[] begin;
      byte[] end;
      if (r.nextBoolean()) {
        begin = randomKey(r);
        end = Bytes.keyAfter(begin);
      } else {
        begin = randomKey(r);
        end = randomKey(r);
        if (Bytes.compare(begin, end) > 0) {
          byte[] t = begin;
          begin = end;
          end = t;
        }
        if (r.nextInt(8) == 0) {
          end = Bytes.keyAfter(end);
        }
        // Otherwise an equal pair stays an empty range, which nothing conflicts with.
      }
      assertEquals(m.conflicts(begin, end, rv), h.conflicts(begin, end, rv),
          where + ": conflicts(" + HexFormat.of().formatHex(begin) + ".." + HexFormat.of().formatHex(end) + ", " + rv + ")");
    }
  }
}
