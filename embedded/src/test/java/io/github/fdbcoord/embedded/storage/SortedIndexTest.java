package io.github.fdbcoord.embedded.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.fdbcoord.embedded.bytes.Bytes;
import io.github.fdbcoord.embedded.bytes.KeyHash;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.NavigableMap;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

public class SortedIndexTest {

  private static VersionedStore.Chain chain(byte[] key) {
    return new VersionedStore.Chain(key, KeyHash.hash(key));
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
  @Tag("slow")
  void matchesModelWhileMerging() throws Exception {
    for (long seed = 1; seed <= 12; seed++) {
      Random r = new Random(seed);
      // Tiny memtables merge all the time; larger ones hold a key's killed and live chains at once.
      SortedIndex index = new SortedIndex(seed <= 6 ? 8 : 96);
      TreeMap<byte[], VersionedStore.Chain> model = new TreeMap<>(Bytes.ORDER);
      // Adds wait here and go in as one sorted run (as a commit's new chains do), of a random length
      // on either side of SortedIndex.MIN_RUN, so both memtable structures hold keys.
      TreeMap<byte[], VersionedStore.Chain> run = new TreeMap<>(Bytes.ORDER);
      int runLength = 1;
      for (int step = 0; step < 6_000; step++) {
        byte[] key = randomKey(r, seed);
        VersionedStore.Chain live = model.get(key);
        int op = r.nextInt(10);
        if (live != null && op < 3) {
          addRun(index, run);
          assertTrue(live.tryKill());
          index.noteKilled();
          model.remove(key);
        } else if (live != null && op < 5) {
          run.put(key, live);
        } else if (live == null) {
          VersionedStore.Chain c = chain(key);
          run.put(key, c);
          model.put(key, c);
        }
        if (run.size() >= runLength) {
          addRun(index, run);
          runLength = 1 + r.nextInt(2 * SortedIndex.MIN_RUN);
        }
        if (step % 7 == 0) {
          addRun(index, run);
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
      // The merge thread runs in the background: on a loaded machine it may not have run during the
      // steps yet, so wait for it (bounded) and check the merged index against the model too.
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (index.merges() == 0 && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      assertTrue(index.merges() > 0, "the test must exercise merges");
      addRun(index, run);
      List<VersionedStore.Chain> all = read(index, Bytes.EMPTY, null, false);
      assertEquals(new ArrayList<>(model.values()), all, "seed " + seed + " after the merges");
    }
  }

  private static void addRun(SortedIndex index, TreeMap<byte[], VersionedStore.Chain> run) {
    index.addAll(run.values().toArray(new VersionedStore.Chain[0]), run.size());
    run.clear();
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

  /**
   * Adders insert whole sorted runs (as commits do, clustered like one client's keys) while readers
   * scan bounded ranges both ways: every chain whose run was added before a scan began is in it,
   * in order, and the final contents match a model.
   */
  @Test
  void sortedRunsAddedConcurrentlyAreSeenByLaterScans() throws Exception {
    SortedIndex index = new SortedIndex(512);
    int threads = 3;
    int runsPerThread = 1_500;
    ExecutorService pool = Executors.newFixedThreadPool(threads + 2);
    AtomicBoolean stop = new AtomicBoolean();
    ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
    // Chains whose run completed, in completion order: a scan must see every one listed before it began.
    List<VersionedStore.Chain> done = Collections.synchronizedList(new ArrayList<>());
    List<CompletableFuture<Void>> readers = new ArrayList<>();
    for (int rd = 0; rd < 2; rd++) {
      final boolean reverse = rd == 1;
      readers.add(CompletableFuture.runAsync(() -> {
        Random r = new Random(reverse ? 2 : 1);
        while (!stop.get()) {
          int cluster = r.nextInt(6);
          int from = r.nextInt(5_000);
          byte[] begin = ByteBuffer.allocate(8).putInt(cluster).putInt(from).array();
          // Sometimes into the next cluster, so a scan also crosses cluster boundaries.
          byte[] end = ByteBuffer.allocate(8).putInt(cluster + r.nextInt(2)).putInt(from + r.nextInt(3_000)).array();
          List<VersionedStore.Chain> before;
          synchronized (done) {
            before = new ArrayList<>(done);
          }
          List<VersionedStore.Chain> seen = read(index, begin, end, reverse);
          java.util.Set<byte[]> keys = new java.util.TreeSet<>(Bytes.ORDER);
          for (int i = 0; i < seen.size(); i++) {
            keys.add(seen.get(i).bytes);
            int order = i == 0 ? 0 : Bytes.compare(seen.get(i - 1).bytes, seen.get(i).bytes) * (reverse ? -1 : 1);
            if (order >= 0 && i > 0) {
              problems.add("scan out of order at " + i);
            }
          }
          for (VersionedStore.Chain c : before) {
            if (Bytes.compare(c.bytes, begin) >= 0 && Bytes.compare(c.bytes, end) < 0 && !keys.contains(c.bytes)) {
              problems.add("a chain added before the scan is missing from it");
              break;
            }
          }
        }
      }, pool));
    }
    List<CompletableFuture<Void>> adders = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      final int thread = t;
      adders.add(CompletableFuture.runAsync(() -> {
        Random r = new Random(thread);
        for (int run = 0; run < runsPerThread; run++) {
          // A run of 1 to 40 consecutive keys in one of six clusters, shared between threads, so
          // runs interleave and some keys are added twice (the same key: a re-add).
          int cluster = r.nextInt(6);
          int start = r.nextInt(5_000);
          int n = 1 + r.nextInt(40);
          VersionedStore.Chain[] chains = new VersionedStore.Chain[n];
          for (int i = 0; i < n; i++) {
            chains[i] = chain(ByteBuffer.allocate(8).putInt(cluster).putInt(start + i).array());
          }
          index.addAll(chains, n);
          done.addAll(List.of(chains));
        }
      }, pool));
    }
    for (CompletableFuture<Void> a : adders) {
      a.get(60, TimeUnit.SECONDS);
    }
    stop.set(true);
    for (CompletableFuture<Void> rd : readers) {
      rd.get(60, TimeUnit.SECONDS);
    }
    pool.shutdown();
    assertTrue(problems.isEmpty(), problems.stream().distinct().toList().toString());
    assertTrue(index.merges() > 0, "the test must exercise merges");
    java.util.Set<byte[]> model = new java.util.TreeSet<>(Bytes.ORDER);
    done.forEach(c -> model.add(c.bytes));
    List<byte[]> got = new ArrayList<>();
    read(index, Bytes.EMPTY, null, false).forEach(c -> got.add(c.bytes));
    assertEquals(model.size(), got.size());
    Iterator<byte[]> expected = model.iterator();
    for (byte[] k : got) {
      assertTrue(java.util.Arrays.equals(expected.next(), k));
    }
  }

  /**
   * A key's chain goes into the run table, is killed, and the key's next chain goes into the skip
   * list of the same memtable: reads see the live one, before the memtable's merge and after it.
   */
  @Test
  void aLiveChainWinsOverItsKeysKilledChainInTheOtherMemtableStructure() throws Exception {
    int memtable = 64;
    SortedIndex index = new SortedIndex(memtable);
    byte[] key = {1, 5};
    VersionedStore.Chain old = chain(key);
    VersionedStore.Chain[] run = new VersionedStore.Chain[SortedIndex.MIN_RUN];
    run[0] = old;
    for (int i = 1; i < run.length; i++) {
      run[i] = chain(new byte[] {1, (byte) (5 + i)});
    }
    index.addAll(run, run.length);
    assertTrue(old.tryKill());
    index.noteKilled();
    VersionedStore.Chain fresh = chain(key.clone());
    index.add(fresh);
    assertEquals(List.of(fresh), read(index, key, new byte[] {1, 6}, false));
    assertEquals(List.of(fresh), read(index, key, new byte[] {1, 6}, true));
    // Fill the memtable so it is merged, and wait for that merge.
    for (int i = 0; index.merges() == 0; i++) {
      index.add(chain(new byte[] {2, (byte) (i >> 8), (byte) i}));
      if (i > memtable) {
        Thread.sleep(1);
      }
    }
    assertEquals(List.of(fresh), read(index, key, new byte[] {1, 6}, false));
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

  /**
   * Each store merges on a thread of its own, and closing the store stops it: engines in one JVM
   * share no thread, and a closed engine leaves none behind.
   */
  @Test
  void eachStoreOwnsItsMergeThreadAndClosingStopsIt() throws Exception {
    Set<Thread> before = mergeThreads();
    SortedIndex firstIndex = new SortedIndex(64);
    SortedIndex secondIndex = new SortedIndex(64);
    Set<Thread> started;
    try (VersionedStore first = new VersionedStore(firstIndex);
        VersionedStore second = new VersionedStore(secondIndex)) {
      for (int k = 0; k < 1_000; k++) {
        byte[] key = ByteBuffer.allocate(4).putInt(k).array();
        first.put(key, key, k + 1, 0);
        second.put(key, key, k + 1, 0);
      }
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while ((firstIndex.merges() == 0 || secondIndex.merges() == 0) && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      assertTrue(firstIndex.merges() > 0 && secondIndex.merges() > 0, "both indexes merged");
      started = mergeThreads();
      started.removeAll(before);
      assertEquals(2, started.size(), "one merge thread per store: " + started);
    }
    for (Thread t : started) {
      t.join(TimeUnit.SECONDS.toMillis(10));
      assertFalse(t.isAlive(), t + " still running after its store was closed");
    }
    // A closed index still serves reads, with what it held before (merged or not).
    assertEquals(1_000, read(firstIndex, Bytes.EMPTY, null, false).size());
    firstIndex.add(chain(new byte[] {(byte) 0xfe}));
    assertEquals(1_001, read(firstIndex, Bytes.EMPTY, null, false).size());
  }

  private static Set<Thread> mergeThreads() {
    Set<Thread> threads = new HashSet<>();
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().equals(SortedIndex.MERGE_THREAD_NAME)) {
        threads.add(t);
      }
    }
    return threads;
  }

  /**
   * Keys cleared behind a log's head are killed while nothing new arrives: the killed chains must
   * leave the merged levels without waiting for the memtable to fill (issue 24: range clears and
   * reads crossed them on every later commit).
   */
  @Test
  void killedChainsLeaveTheMergedLevelsWithoutNewAdds() throws Exception {
    int memtableSize = 64;
    SortedIndex index = new SortedIndex(memtableSize);
    try {
      List<VersionedStore.Chain> chains = new ArrayList<>();
      for (int i = 0; i < 20_000; i += 100) {
        VersionedStore.Chain[] run = new VersionedStore.Chain[100];
        for (int j = 0; j < 100; j++) {
          run[j] = chain(ByteBuffer.allocate(4).putInt(i + j).array());
          chains.add(run[j]);
        }
        index.addAll(run, run.length);
      }
      // Generous: merges run on their own thread, which a loaded machine may leave unscheduled for seconds.
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (index.mergedChains() < chains.size() && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      assertEquals(chains.size(), index.mergedChains(), "the chains reached the merged levels");
      for (VersionedStore.Chain c : chains) {
        assertTrue(c.tryKill());
        index.noteKilled();
      }
      // Without a merge of their own the killed chains would all stay (20,000). A chain a merge's pass
      // missed was killed, and counted, after that merge reset the count, and a merge ending with a
      // memtable's worth counted starts the next one: fewer than that can stay, however the merge
      // thread and the killing thread interleave (before, kills during the last merge were left to a
      // later trigger: 610 stayed once on CI).
      deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (index.mergedChains() >= memtableSize && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      assertTrue(index.mergedChains() < memtableSize,
          "killed chains dropped by merges of their own: " + index.mergedChains() + " of " + chains.size() + " left");
      assertEquals(List.of(), read(index, new byte[0], null, false));
    } finally {
      index.close();
    }
  }
}
