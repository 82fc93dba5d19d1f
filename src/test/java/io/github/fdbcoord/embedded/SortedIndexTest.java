package io.github.fdbcoord.embedded;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.NavigableMap;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class SortedIndexTest {

  private static VersionedStore.Chain chain(byte[] key) {
    return new VersionedStore.Chain(key, VersionedStore.HashKey.hash(key));
  }

  private static List<VersionedStore.Chain> read(SortedIndex index, byte[] begin, byte[] end, boolean reverse) {
    List<VersionedStore.Chain> out = new ArrayList<>();
    index.chains(begin, end, reverse).forEachRemaining(out::add);
    return out;
  }

  /**
   * A small alphabet: many equal keys, prefixes of each other, and the empty key. Odd seeds put most
   * keys under one shared prefix, and some longer than the base's 8-byte comparison window after it,
   * so the window's ties, padding and keys outside the shared prefix are all exercised.
   */
  private static byte[] randomKey(Random r, long seed) {
    boolean shared = seed % 2 == 1 && r.nextInt(10) > 0;
    int length = r.nextInt(seed % 2 == 1 ? 12 : 4);
    byte[] k = new byte[(shared ? 2 : 0) + length];
    int i = 0;
    if (shared) {
      k[i++] = 5;
      k[i++] = 5;
    }
    for (; i < k.length; i++) {
      k[i] = (byte) (r.nextInt(3) * 0x7f);
    }
    return k;
  }

  /** Random adds, re-adds and kills, merging all the while; every read matches a sorted model. */
  @Test
  void matchesModelWhileMerging() throws Exception {
    for (long seed = 1; seed <= 6; seed++) {
      Random r = new Random(seed);
      SortedIndex index = new SortedIndex(8);
      TreeMap<byte[], VersionedStore.Chain> model = new TreeMap<>(Bytes.ORDER);
      for (int step = 0; step < 4_000; step++) {
        byte[] key = randomKey(r, seed);
        VersionedStore.Chain live = model.get(key);
        int op = r.nextInt(10);
        if (live != null && op < 3) {
          assertTrue(live.tryKill());
          index.noteKilled();
          model.remove(key);
        } else if (live != null && op < 5) {
          index.add(live);
        } else if (live == null) {
          VersionedStore.Chain c = chain(key);
          index.add(c);
          model.put(key, c);
        }
        if (step % 7 == 0) {
          byte[] a = randomKey(r, seed);
          byte[] b = randomKey(r, seed);
          byte[] begin = Bytes.min(a, b);
          byte[] end = r.nextInt(5) == 0 ? null : Bytes.max(a, b);
          boolean reverse = r.nextBoolean();
          NavigableMap<byte[], VersionedStore.Chain> expected =
              end == null ? model.tailMap(begin, true) : model.subMap(begin, true, end, false);
          List<VersionedStore.Chain> want = new ArrayList<>((reverse ? expected.descendingMap() : expected).values());
          List<VersionedStore.Chain> got = read(index, begin, end, reverse);
          assertEquals(want.size(), got.size(), "seed " + seed + " step " + step);
          for (int i = 0; i < want.size(); i++) {
            assertSame(want.get(i), got.get(i), "seed " + seed + " step " + step + " position " + i);
          }
        }
      }
      assertTrue(index.merges() > 0, "the test must exercise merges");
    }
  }

  /** Adders on several threads while readers scan: scans stay sorted, and nothing added is lost. */
  @Test
  void concurrentAddsAreNeverLostAndScansStaySorted() throws Exception {
    SortedIndex index = new SortedIndex(256);
    int threads = 4;
    int perThread = 40_000;
    ExecutorService pool = Executors.newFixedThreadPool(threads + 1);
    AtomicBoolean stop = new AtomicBoolean();
    ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
    CompletableFuture<Void> reader = CompletableFuture.runAsync(() -> {
      while (!stop.get()) {
        byte[] previous = null;
        for (Iterator<VersionedStore.Chain> it = index.chains(Bytes.EMPTY, null, false); it.hasNext(); ) {
          byte[] k = it.next().bytes;
          if (previous != null && Bytes.compare(previous, k) >= 0) {
            problems.add("scan out of order");
          }
          previous = k;
        }
      }
    }, pool);
    List<CompletableFuture<List<VersionedStore.Chain>>> adders = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      final int thread = t;
      adders.add(CompletableFuture.supplyAsync(() -> {
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < perThread; i++) {
          order.add(i);
        }
        Collections.shuffle(order, new Random(thread));
        List<VersionedStore.Chain> mine = new ArrayList<>();
        for (int i : order) {
          VersionedStore.Chain c = chain(ByteBuffer.allocate(8).putInt(i).putInt(thread).array());
          index.add(c);
          mine.add(c);
        }
        return mine;
      }, pool));
    }
    TreeMap<byte[], VersionedStore.Chain> all = new TreeMap<>(Bytes.ORDER);
    for (CompletableFuture<List<VersionedStore.Chain>> a : adders) {
      for (VersionedStore.Chain c : a.get(60, TimeUnit.SECONDS)) {
        all.put(c.bytes, c);
      }
    }
    stop.set(true);
    reader.get(60, TimeUnit.SECONDS);
    pool.shutdown();
    assertTrue(problems.isEmpty(), problems.toString());
    assertTrue(index.merges() > 0, "the test must exercise merges");
    List<VersionedStore.Chain> got = read(index, Bytes.EMPTY, null, false);
    assertEquals(all.size(), got.size());
    int i = 0;
    for (VersionedStore.Chain c : all.values()) {
      assertSame(c, got.get(i++));
    }
    List<VersionedStore.Chain> reversed = read(index, Bytes.EMPTY, null, true);
    Collections.reverse(reversed);
    assertEquals(got, reversed);
  }

  @Test
  void aKilledChainIsReplacedByItsKeysNewChain() {
    SortedIndex index = new SortedIndex(2);
    byte[] key = {1};
    VersionedStore.Chain old = chain(key);
    index.add(old);
    for (int i = 0; i < 10; i++) {
      index.add(chain(new byte[] {2, (byte) i}));
    }
    assertTrue(old.tryKill());
    index.noteKilled();
    assertTrue(read(index, key, new byte[] {2}, false).isEmpty());
    VersionedStore.Chain fresh = chain(key.clone());
    index.add(fresh);
    List<VersionedStore.Chain> got = read(index, Bytes.EMPTY, new byte[] {2}, false);
    assertEquals(List.of(fresh), got);
    assertFalse(fresh.killed());
  }
}
