package io.github.fdbcoord.bench;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.Transaction;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.embedded.EmbeddedOptions;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Stream;

/**
 * Throughput of the embedded engine: single-key write commits per second in memory, point reads
 * per second, durable commits per second with 64 concurrent writers, and heap per stored pair.
 *
 * <p>Run: {@code mvn -q test-compile exec:java -Dexec.mainClass=io.github.fdbcoord.bench.EngineBenchmark
 * [-Dexec.args="memory|reads|durable|heap"]}
 */
public final class EngineBenchmark {
  private static final long SECONDS = Long.getLong("bench.seconds", 5);

  public static void main(String[] args) throws Exception {
    String only = args.length > 0 ? args[0] : "all";
    System.out.printf("machine: %d cores, max heap %d MiB, %s %s%n", Runtime.getRuntime().availableProcessors(),
        Runtime.getRuntime().maxMemory() >> 20, System.getProperty("java.vm.name"), System.getProperty("java.version"));
    if (only.equals("all") || only.equals("memory")) {
      for (int threads : new int[] {1, 2, 4}) {
        try (EmbeddedDatabase db = EmbeddedDatabase.inMemory()) {
          writes(db, threads, "in memory");
        }
      }
    }
    if (only.equals("all") || only.equals("reads")) {
      try (EmbeddedDatabase db = EmbeddedDatabase.inMemory()) {
        reads(db, 2);
      }
    }
    if (only.equals("all") || only.equals("durable")) {
      Path dir = Files.createTempDirectory("engine-bench");
      try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.durable(dir))) {
        asyncWriters(db, 64, "durable");
      } finally {
        try (Stream<Path> s = Files.walk(dir)) {
          s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
      }
    }
    if (only.equals("all") || only.equals("heap")) {
      heap();
    }
  }

  /** Events per second of {@code counter} over the measured window, after a second of warm-up. */
  private static double measure(LongAdder counter) throws InterruptedException {
    Thread.sleep(1000);
    long start = System.nanoTime();
    long before = counter.sum();
    Thread.sleep(SECONDS * 1000);
    return (counter.sum() - before) / ((System.nanoTime() - start) / 1e9);
  }

  private static byte[] key(long i) {
    return ByteBuffer.allocate(16).putLong(0x6b65792d00000000L).putLong(i).array();
  }

  /** Each thread commits single-key write transactions back to back. */
  private static void writes(Database db, int threads, String label) throws Exception {
    LongAdder commits = new LongAdder();
    AtomicBoolean stop = new AtomicBoolean();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    List<CompletableFuture<Void>> running = new ArrayList<>();
    byte[] value = new byte[16];
    for (int t = 0; t < threads; t++) {
      running.add(CompletableFuture.runAsync(() -> {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        while (!stop.get()) {
          try (Transaction tr = db.createTransaction()) {
            tr.set(key(r.nextLong(1_000_000)), value);
            tr.commit().join();
          }
          commits.increment();
        }
      }, pool));
    }
    double rate = measure(commits);
    stop.set(true);
    CompletableFuture.allOf(running.toArray(new CompletableFuture[0])).join();
    pool.shutdown();
    System.out.printf("%s: %d threads, single-key write commits: %,.0f /s%n", label, threads, rate);
  }

  /** 64 writers, each an asynchronous loop of single-key commits (what a durable log's group commit serves). */
  private static void asyncWriters(Database db, int writers, String label) throws Exception {
    LongAdder commits = new LongAdder();
    AtomicBoolean stop = new AtomicBoolean();
    List<CompletableFuture<Void>> loops = new ArrayList<>();
    byte[] value = new byte[16];
    for (int w = 0; w < writers; w++) {
      CompletableFuture<Void> done = new CompletableFuture<>();
      loops.add(done);
      writeLoop(db, value, commits, stop, done);
    }
    double rate = measure(commits);
    stop.set(true);
    CompletableFuture.allOf(loops.toArray(new CompletableFuture[0])).join();
    System.out.printf("%s: %d concurrent writers, single-key write commits: %,.0f /s%n", label, writers, rate);
  }

  private static void writeLoop(Database db, byte[] value, LongAdder commits, AtomicBoolean stop,
      CompletableFuture<Void> done) {
    if (stop.get()) {
      done.complete(null);
      return;
    }
    Transaction tr = db.createTransaction();
    tr.set(key(ThreadLocalRandom.current().nextLong(1_000_000)), value);
    tr.commit().whenComplete((v, t) -> {
      tr.close();
      if (t != null) {
        done.completeExceptionally(t);
        return;
      }
      commits.increment();
      db.getExecutor().execute(() -> writeLoop(db, value, commits, stop, done));
    });
  }

  /** Point reads of existing keys, 100 per transaction, on every core. */
  private static void reads(Database db, int threads) throws Exception {
    int keys = 100_000;
    byte[] value = new byte[16];
    for (int i = 0; i < keys; i += 1000) {
      final int from = i;
      db.run(tr -> {
        for (int k = from; k < from + 1000; k++) {
          tr.set(key(k), value);
        }
        return null;
      });
    }
    LongAdder reads = new LongAdder();
    AtomicBoolean stop = new AtomicBoolean();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    List<CompletableFuture<Void>> running = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      running.add(CompletableFuture.runAsync(() -> {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        while (!stop.get()) {
          try (Transaction tr = db.createTransaction()) {
            for (int i = 0; i < 100; i++) {
              if (tr.get(key(r.nextInt(keys))).join() == null) {
                throw new IllegalStateException("missing key");
              }
            }
          }
          reads.add(100);
        }
      }, pool));
    }
    double rate = measure(reads);
    stop.set(true);
    CompletableFuture.allOf(running.toArray(new CompletableFuture[0])).join();
    pool.shutdown();
    System.out.printf("in memory: %d threads, point reads (100 per transaction): %,.0f /s%n", threads, rate);
  }

  /** Heap per stored pair beyond its own key and value bytes. */
  private static void heap() throws Exception {
    int pairs = 1_000_000;
    byte[] value = new byte[16];
    long before = usedHeap();
    EmbeddedDatabase db = EmbeddedDatabase.inMemory();
    for (int i = 0; i < pairs; i += 10_000) {
      final int from = i;
      db.run(tr -> {
        for (int k = from; k < from + 10_000; k++) {
          tr.set(key(k), value);
        }
        return null;
      });
    }
    long after = usedHeap();
    double perPair = (after - before) / (double) pairs;
    System.out.printf("heap: %,d pairs of 16-byte key + 16-byte value: %.0f bytes/pair in all, %.0f beyond the 32 bytes"
        + " of key and value%n", pairs, perPair, perPair - 32);
    db.close();
  }

  private static long usedHeap() throws InterruptedException {
    for (int i = 0; i < 4; i++) {
      System.gc();
      Thread.sleep(100);
    }
    Runtime rt = Runtime.getRuntime();
    return rt.totalMemory() - rt.freeMemory();
  }
}
