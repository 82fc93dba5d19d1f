package io.github.fdbcoord.embedded;

import com.apple.foundationdb.FDBException;
import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.MutationType;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.directory.DirectoryLayer;
import com.apple.foundationdb.directory.DirectorySubspace;
import com.apple.foundationdb.tuple.Tuple;
import com.apple.foundationdb.tuple.Versionstamp;
import io.github.fdbcoord.fdb.FdbErrors;
import io.github.fdbcoord.fdb.Versionstamps;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The engine's core behaviours, end to end through fdb-java's interfaces. */
class EmbeddedDatabaseTest {
  private final EmbeddedDatabase db = EmbeddedDatabase.inMemory();

  @AfterEach
  void close() {
    db.close();
  }

  private static byte[] b(String s) {
    return s.getBytes();
  }

  private static long le(byte[] v) {
    return ByteBuffer.wrap(v).order(ByteOrder.LITTLE_ENDIAN).getLong();
  }

  private static byte[] le(long v) {
    return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array();
  }

  /**
   * A database in memory starts its versions near 0, as a new FoundationDB cluster does (about a million a second
   * from there), so code that subtracts a retention from a version meets the negative bounds it meets on a fresh
   * cluster (the counter log's trim cleared everything there, docs/cluster-manager.md); versions still only grow.
   */
  @Test
  void versionsInMemoryStartNearZeroAndGrow() {
    long first = db.read(tr -> tr.getReadVersion().join());
    assertTrue(first >= 0 && first < 60_000_000L, "a new database's read version " + first + " is under a minute of versions");
    Transaction tr = db.createTransaction();
    tr.set(b("k"), b("v"));
    tr.commit().join();
    long committed = tr.getCommittedVersion();
    tr.close();
    assertTrue(committed > first, committed + " after " + first);
    assertTrue(db.read(t -> t.getReadVersion().join()) >= committed);
  }

  @Test
  void readsOwnWritesAndCommits() {
    db.run(tr -> {
      tr.set(b("a"), b("1"));
      assertArrayEquals(b("1"), tr.get(b("a")).join());
      tr.mutate(MutationType.ADD, b("n"), le(5));
      tr.mutate(MutationType.ADD, b("n"), le(2));
      assertEquals(7, le(tr.get(b("n")).join()));
      return null;
    });
    assertArrayEquals(b("1"), db.run(tr -> tr.get(b("a")).join()));
    List<KeyValue> all = db.run(tr -> tr.getRange(b(""), b("\u00ff".substring(0, 0) + "z")).asList().join());
    assertEquals(2, all.size());
  }

  @Test
  void conflictingReadWriteFailsWith1020() {
    Transaction t1 = db.createTransaction();
    Transaction t2 = db.createTransaction();
    t1.get(b("k")).join();
    t2.get(b("k")).join();
    t1.set(b("k"), b("1"));
    t2.set(b("k"), b("2"));
    t1.commit().join();
    CompletionException e = assertThrows(CompletionException.class, () -> t2.commit().join());
    assertEquals(FdbErrors.NOT_COMMITTED, ((FDBException) e.getCause()).getCode());
  }

  @Test
  void snapshotReadDoesNotConflict() {
    Transaction t1 = db.createTransaction();
    Transaction t2 = db.createTransaction();
    t1.get(b("k")).join();
    t2.snapshot().get(b("k")).join();
    t1.set(b("k"), b("1"));
    t2.set(b("k"), b("2"));
    t1.commit().join();
    t2.commit().join();
    assertArrayEquals(b("2"), db.run(tr -> tr.get(b("k")).join()));
  }

  @Test
  void concurrentIncrementsAreSerializable() {
    int threads = 8;
    int each = 200;
    List<CompletableFuture<Void>> all = new ArrayList<>();
    for (int i = 0; i < threads; i++) {
      all.add(CompletableFuture.runAsync(() -> {
        for (int j = 0; j < each; j++) {
          db.run(tr -> {
            byte[] v = tr.get(b("counter")).join();
            long n = v == null ? 0 : le(v);
            tr.set(b("counter"), le(n + 1));
            return null;
          });
        }
      }));
    }
    CompletableFuture.allOf(all.toArray(new CompletableFuture[0])).join();
    assertEquals(threads * each, le(db.run(tr -> tr.get(b("counter")).join())));
  }

  /**
   * Writers commit batches of 1 to 40 new keys (short batches enter the sorted index one key at a
   * time, long ones as one run) while readers scan the whole range: every scan is in key order, sees
   * each batch whole or not at all, and sees every batch committed before it began; at the end every
   * key is there. Enough keys to merge the memtable several times.
   */
  @Test
  void rangeReadsSeeWholeBatchesWhileConcurrentCommitsAddKeys() throws Exception {
    int writers = 4;
    int batches = 250;
    java.util.Map<String, Integer> sizes = new java.util.concurrent.ConcurrentHashMap<>();
    Set<String> committed = java.util.concurrent.ConcurrentHashMap.newKeySet();
    AtomicBoolean stop = new AtomicBoolean();
    java.util.concurrent.ConcurrentLinkedQueue<String> problems = new java.util.concurrent.ConcurrentLinkedQueue<>();
    List<CompletableFuture<Void>> readers = new ArrayList<>();
    // Threads of their own (daemons): spinning readers on a shared pool can take every thread and
    // starve the writers (the common pool has only processors - 1 threads).
    java.util.concurrent.ExecutorService threads = java.util.concurrent.Executors.newFixedThreadPool(2 + writers, r -> {
      Thread t = new Thread(r, "range-read-test");
      t.setDaemon(true);
      return t;
    });
    for (int r = 0; r < 2; r++) {
      readers.add(CompletableFuture.runAsync(() -> {
        while (!stop.get()) {
          Set<String> before = new HashSet<>(committed);
          List<KeyValue> rows = db.run(tr -> tr.getRange(b("batch/"), b("batch0")).asList().join());
          java.util.Map<String, Integer> seen = new java.util.HashMap<>();
          for (int i = 0; i < rows.size(); i++) {
            if (i > 0 && java.util.Arrays.compareUnsigned(rows.get(i - 1).getKey(), rows.get(i).getKey()) >= 0) {
              problems.add("rows out of order");
            }
            String key = new String(rows.get(i).getKey());
            seen.merge(key.substring(0, key.lastIndexOf('/')), 1, Integer::sum);
          }
          seen.forEach((batch, n) -> {
            if (!n.equals(sizes.get(batch))) {
              problems.add("batch " + batch + " seen with " + n + " of " + sizes.get(batch) + " keys");
            }
          });
          for (String batch : before) {
            if (!seen.containsKey(batch)) {
              problems.add("batch " + batch + " committed before the scan is missing from it");
            }
          }
        }
      }, threads));
    }
    List<CompletableFuture<Void>> writing = new ArrayList<>();
    for (int w = 0; w < writers; w++) {
      final int writer = w;
      writing.add(CompletableFuture.runAsync(() -> {
        java.util.Random random = new java.util.Random(writer);
        for (int n = 0; n < batches; n++) {
          // Writers' batches interleave in key order: the batch number comes before the writer.
          String batch = String.format("batch/%04d/%d", n, writer);
          int size = 1 + random.nextInt(40);
          sizes.put(batch, size);
          db.run(tr -> {
            for (int i = 0; i < size; i++) {
              tr.set(b(batch + "/" + String.format("%02d", i)), le(i));
            }
            return null;
          });
          committed.add(batch);
        }
      }, threads));
    }
    try {
      CompletableFuture.allOf(writing.toArray(new CompletableFuture[0])).get(60, TimeUnit.SECONDS);
    } finally {
      stop.set(true);
    }
    CompletableFuture.allOf(readers.toArray(new CompletableFuture[0])).get(60, TimeUnit.SECONDS);
    threads.shutdown();
    assertTrue(problems.isEmpty(), problems.stream().distinct().limit(5).toList().toString());
    int expected = sizes.values().stream().mapToInt(Integer::intValue).sum();
    assertEquals(expected, db.run(tr -> tr.getRange(b("batch/"), b("batch0")).asList().join()).size());
  }

  @Test
  void versionstampedKeysOrderByCommit() {
    List<byte[]> stamps = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      Transaction tr = db.createTransaction();
      tr.mutate(MutationType.SET_VERSIONSTAMPED_KEY,
          Versionstamps.packKey(b("q/"), Tuple.from(Versionstamp.incomplete(i))), b("v" + i));
      CompletableFuture<byte[]> vs = tr.getVersionstamp();
      tr.commit().join();
      stamps.add(vs.join());
      tr.close();
    }
    List<KeyValue> rows = db.run(tr -> tr.getRange(b("q/"), b("q0")).asList().join());
    assertEquals(5, rows.size());
    for (int i = 0; i < 5; i++) {
      Tuple t = Tuple.fromBytes(rows.get(i).getKey(), 2, rows.get(i).getKey().length - 2);
      assertArrayEquals(stamps.get(i), t.getVersionstamp(0).getTransactionVersion());
    }
  }

  @Test
  void watchFiresOnChangeOnly() throws Exception {
    db.run(tr -> {
      tr.set(b("w"), b("x"));
      return null;
    });
    CompletableFuture<Void> watch = db.run(tr -> tr.watch(b("w")));
    db.run(tr -> {
      tr.set(b("w"), b("x"));
      return null;
    });
    Thread.sleep(50);
    assertFalse(watch.isDone());
    db.run(tr -> {
      tr.set(b("w"), b("y"));
      return null;
    });
    watch.get(2, TimeUnit.SECONDS);
  }

  @Test
  void cancellingWatchesWhileOthersWaitLosesNone() throws Exception {
    byte[] k = {7};
    AtomicBoolean stop = new AtomicBoolean();
    List<Thread> cancellers = new ArrayList<>();
    for (int t = 0; t < 3; t++) {
      Thread th = new Thread(() -> {
        while (!stop.get()) {
          db.run(tr -> {
            tr.get(k).join();
            return tr.watch(k);
          }).cancel(false);
        }
      });
      th.start();
      cancellers.add(th);
    }
    try {
      for (int i = 0; i < 300; i++) {
        CompletableFuture<Void> w = db.run(tr -> {
          tr.get(k).join();
          return tr.watch(k);
        });
        final int v = i;
        db.run(tr -> {
          tr.set(k, new byte[] {(byte) v, (byte) (v >> 8), 1});
          return null;
        });
        w.get(5, TimeUnit.SECONDS);
      }
    } finally {
      stop.set(true);
      for (Thread th : cancellers) {
        th.join();
      }
    }
  }

  @Test
  void deferredWriteErrorsFailTheCommit() {
    Transaction tr = db.createTransaction();
    tr.set(new byte[10_001], b("v"));
    CompletionException e = assertThrows(CompletionException.class, () -> tr.commit().join());
    assertEquals(FdbErrors.KEY_TOO_LARGE, ((FDBException) e.getCause()).getCode());
    assertNull(db.run(t -> t.get(new byte[10_001]).join()));
  }

  @Test
  void rangeIteratorFetchesWhenCreated() {
    db.run(tr -> {
      tr.set(new byte[] {'a', 1}, new byte[] {1});
      return null;
    });
    try (Transaction tr = db.createTransaction()) {
      var it = tr.getRange(com.apple.foundationdb.Range.startsWith(new byte[] {'a'})).iterator();
      tr.clear(com.apple.foundationdb.Range.startsWith(new byte[] {'a'}));
      assertTrue(it.onHasNext().join());
      assertFalse(tr.getRange(com.apple.foundationdb.Range.startsWith(new byte[] {'a'})).iterator().hasNext());
    }
  }

  @Test
  void callersKeepTheirArrays() {
    byte[] key = b("mine");
    byte[] value = b("v1");
    db.run(tr -> {
      tr.set(key, value);
      return null;
    });
    value[0] = 'X';
    key[0] = 'X';
    byte[] read = db.run(tr -> tr.get(b("mine")).join());
    assertArrayEquals(b("v1"), read);
    read[0] = 'Y';
    assertArrayEquals(b("v1"), db.run(tr -> tr.get(b("mine")).join()));
  }

  @Test
  void durableDirectoryRecoversCommitsAfterReopen(@TempDir Path dir) {
    try (EmbeddedDatabase durable = EmbeddedDatabase.open(EmbeddedOptions.builder().dataDirectory(dir)
        .compactAfterLogBytes(4096).build())) {
      for (int i = 0; i < 200; i++) {
        final int n = i;
        durable.run(tr -> {
          tr.set(b("k" + n), b("v" + n));
          tr.mutate(MutationType.ADD, b("count"), le(1));
          if (n % 10 == 0) {
            tr.clear(b("k" + (n - 1)));
          }
          return null;
        });
      }
    }
    try (EmbeddedDatabase reopened = EmbeddedDatabase.open(EmbeddedOptions.durable(dir))) {
      assertEquals(200, le(reopened.run(tr -> tr.get(b("count")).join())));
      assertArrayEquals(b("v198"), reopened.run(tr -> tr.get(b("k198")).join()));
      assertNull(reopened.run(tr -> tr.get(b("k189")).join()));
      long versionAfter = reopened.run(tr -> tr.getReadVersion().join());
      Transaction tr = reopened.createTransaction();
      tr.set(b("after"), b("x"));
      CompletableFuture<byte[]> stamp = tr.getVersionstamp();
      tr.commit().join();
      assertTrue(ByteBuffer.wrap(stamp.join()).getLong() > versionAfter - 1);
    }
  }

  @Test
  void defaultExecutorKeepsCompletingCommitsWhileEveryWorkerWaitsForOne(@TempDir Path dir) throws Exception {
    // A durable commit completes through the executor: callbacks on it that wait for commits (as run()
    // does) must not take every thread the completions need.
    int callbacks = 64;
    int commitsEach = 5;
    try (EmbeddedDatabase durable = EmbeddedDatabase.open(EmbeddedOptions.durable(dir))) {
      List<CompletableFuture<String>> all = new ArrayList<>();
      for (int c = 0; c < callbacks; c++) {
        final int id = c;
        all.add(CompletableFuture.supplyAsync(() -> {
          for (int i = 0; i < commitsEach; i++) {
            final int n = i;
            durable.run(tr -> {
              tr.set(b("w/" + id + "/" + n), b("x"));
              return null;
            });
          }
          return Thread.currentThread().getName() + (Thread.currentThread().isDaemon() ? " daemon" : "");
        }, durable.getExecutor()));
      }
      CompletableFuture.allOf(all.toArray(new CompletableFuture<?>[0])).get(60, TimeUnit.SECONDS);
      for (CompletableFuture<String> f : all) {
        assertTrue(f.join().matches("fdb-embedded-\\d+ daemon"), f.join());
      }
      assertEquals(callbacks * commitsEach, durable.run(tr -> tr.getRange(b("w/"), b("w0")).asList().join()).size());
    }
  }

  @Test
  void defaultExecutorCompletesCommitsWhileItsThreadsKeepSubmittingWork(@TempDir Path dir) throws Exception {
    // Busy clients' continuations keep submitting more from the executor's own threads; a fork-join
    // pool runs those first and left the commit completions handed in by the log waiting.
    try (EmbeddedDatabase durable = EmbeddedDatabase.open(EmbeddedOptions.durable(dir))) {
      Executor executor = durable.getExecutor();
      AtomicBoolean stop = new AtomicBoolean();
      AtomicLong spins = new AtomicLong();
      for (int i = 0; i < 2 * Runtime.getRuntime().availableProcessors(); i++) {
        executor.execute(new Runnable() {
          @Override
          public void run() {
            if (stop.get()) {
              return;
            }
            long until = System.nanoTime() + 20_000;
            while (System.nanoTime() < until) {
              Thread.onSpinWait();
            }
            spins.incrementAndGet();
            executor.execute(this);
          }
        });
      }
      try {
        for (int i = 0; i < 20; i++) {
          final int n = i;
          durable.runAsync(tr -> {
            tr.set(b("busy/" + n), b("x"));
            return CompletableFuture.completedFuture(null);
          }).get(5, TimeUnit.SECONDS);
        }
        assertTrue(spins.get() > 0, "the busy loops ran");
      } finally {
        stop.set(true);
      }
      assertEquals(20, durable.run(tr -> tr.getRange(b("busy/"), b("busy0")).asList().join()).size());
    }
  }

  @Test
  void directoryLayerRunsUnchanged() {
    DirectoryLayer dl = new DirectoryLayer();
    List<CompletableFuture<DirectorySubspace>> created = new ArrayList<>();
    IntStream.range(0, 32).forEach(i -> created.add(dl.createOrOpen(db, List.of("apps", "app" + i))));
    Set<String> prefixes = new HashSet<>();
    for (CompletableFuture<DirectorySubspace> f : created) {
      prefixes.add(Tuple.from(f.join().getKey()).toString());
    }
    assertEquals(32, prefixes.size());
    assertTrue(dl.exists(db, List.of("apps", "app7")).join());
    assertEquals(32, dl.list(db, List.of("apps")).join().size());
    dl.remove(db, List.of("apps")).join();
    assertFalse(dl.exists(db, List.of("apps", "app7")).join());
  }

  @Test
  void closingAnEngineStopsItsIndexMergeThread() throws Exception {
    Set<Thread> before = threadsNamed("fdb-embedded-index-merge");
    Set<Thread> started = new HashSet<>();
    for (int engine = 0; engine < 2; engine++) {
      try (EmbeddedDatabase db = EmbeddedDatabase.inMemory()) {
        // Enough keys for the window's index to merge its runs: each engine then owns a merge thread.
        for (int batch = 0; batch < 200 && started.size() <= engine; batch++) {
          int first = batch * 500;
          db.run(tr -> {
            for (int k = first; k < first + 500; k++) {
              tr.set(ByteBuffer.allocate(4).putInt(k).array(), new byte[8]);
            }
            return null;
          });
          Set<Thread> now = threadsNamed("fdb-embedded-index-merge");
          now.removeAll(before);
          started.addAll(now);
        }
      }
    }
    assertEquals(2, started.size(), "each engine ran its own merge thread: " + started);
    for (Thread t : started) {
      // An idle merge thread ends by itself after 10 s: closing must end it well before that.
      t.join(TimeUnit.SECONDS.toMillis(2));
      assertFalse(t.isAlive(), t + " still runs after its engine was closed");
    }
  }

  private static Set<Thread> threadsNamed(String name) {
    Set<Thread> threads = new HashSet<>();
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().equals(name)) {
        threads.add(t);
      }
    }
    return threads;
  }
}
