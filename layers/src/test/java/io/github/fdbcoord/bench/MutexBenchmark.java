package io.github.fdbcoord.bench;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.directory.DirectoryLayer;
import com.apple.foundationdb.directory.DirectorySubspace;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.mutex.MutexHandle;
import io.github.fdbcoord.mutex.MutexOptions;
import io.github.fdbcoord.mutex.MutexService;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Mutex benchmark on the in-memory embedded engine (and a FoundationDB cluster, see below):
 * <ol>
 *   <li>hand-off latency: from the moment the holder's release has committed (its future completed)
 *       to the moment the waiter's acquire future completes, p50/p99 over many hand-offs between two
 *       services (as two processes);</li>
 *   <li>uncontended acquire + release cycles per second, one caller, one mutex;</li>
 *   <li>uncontended acquire + release cycles per second, 16 clients, each on a mutex of its own, then
 *       16 clients on one mutex;</li>
 *   <li>1,000 mutexes with 10 contenders each, all started at once: every contender acquires and
 *       releases its mutex; time to completion and grants per second.</li>
 * </ol>
 * With the cycles of one client it prints what an acquire and a release cost in the store: transactions,
 * read versions, reads, commits and round trips ({@link CountingDatabase}; the reaper's scans, one a
 * second per service, are counted in).
 * Run: {@code mvn -q -o test-compile exec:java -Dexec.mainClass=io.github.fdbcoord.bench.MutexBenchmark}
 * (optional args: hand-offs, uncontended seconds, mutexes, contenders per mutex). With
 * {@code -Dbench.clusterFile=<file>} the same figures follow on that FoundationDB cluster ({@link BenchTargets}).
 */
public final class MutexBenchmark {
  public static void main(String[] args) throws Exception {
    int handoffs = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
    int uncontendedSeconds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
    int mutexes = args.length > 2 ? Integer.parseInt(args[2]) : 1000;
    int contenders = args.length > 3 ? Integer.parseInt(args[3]) : 10;

    System.out.println("JVM " + System.getProperty("java.version") + ", " + Runtime.getRuntime().availableProcessors() + " cores");
    for (BenchTargets.Target target : BenchTargets.targets("embedded, in memory", EmbeddedDatabase::inMemory)) {
      System.out.println("== " + target.label());
      try (BenchTargets.Opened opened = target.open()) {
        run(opened.database(), handoffs, uncontendedSeconds, mutexes, contenders);
      }
    }
    System.exit(0);
  }

  private static void run(Database store, int handoffs, int uncontendedSeconds, int mutexes, int contenders)
      throws Exception {
    CountingDatabase counting = new CountingDatabase(store);
    Database db = counting.database();
    List<String> path = List.of("bench", "mutex-" + UUID.randomUUID());
    DirectorySubspace root = DirectoryLayer.getDefault().createOrOpen(db, path).join();
    // Hand-off hints (issue 36) between the two services, as a transport between processes would
    // deliver them (here a direct call); -Dbench.hints=false measures the watch alone.
    boolean hints = Boolean.parseBoolean(System.getProperty("bench.hints", "true"));
    System.out.println("hand-off hints " + (hints ? "on" : "off"));
    Map<String, MutexService> byOwner = new ConcurrentHashMap<>();
    MutexOptions options = MutexOptions.builder()
        .lease(Duration.ofSeconds(30)).heartbeatInterval(Duration.ofSeconds(5)).reaperInterval(Duration.ofSeconds(1))
        .handOffNotifier(hints ? (name, owner, token) -> {
          MutexService to = byOwner.get(owner);
          if (to != null) {
            to.recheck(name, owner);
          }
        } : null)
        .build();
    MutexService p1 = MutexService.create(db, root, options);
    MutexService p2 = MutexService.create(db, root, options);
    byOwner.put("left", p1);
    byOwner.put("right", p2);
    try {
      warmUp(p1, p2);
      handOffLatency(p1, p2, handoffs);
      rawCommits(db, root, uncontendedSeconds);
      uncontended(p1, uncontendedSeconds, counting);
      clients(p1, p2, 16, false, uncontendedSeconds);
      clients(p1, p2, 16, true, uncontendedSeconds);
      manyMutexes(p1, p2, mutexes, contenders);
    } finally {
      p1.close();
      p2.close();
      DirectoryLayer.getDefault().removeIfExists(db, path).join();
    }
  }

  private static void warmUp(MutexService p1, MutexService p2) throws Exception {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
    while (System.nanoTime() < end) {
      MutexHandle h = p1.acquire("warm", "a").get();
      CompletableFuture<MutexHandle> w = p2.acquire("warm", "b");
      h.release().get();
      w.get().release().get();
    }
  }

  private static void handOffLatency(MutexService p1, MutexService p2, int n) throws Exception {
    long[] samples = new long[n];
    long[] fromCall = new long[n];
    MutexService[] side = {p1, p2};
    String[] owner = {"left", "right"};
    MutexHandle holder = p1.acquire("handoff", owner[0]).get();
    for (int i = 0; i < n; i++) {
      int next = (i + 1) % 2;
      AtomicLong granted = new AtomicLong();
      CompletableFuture<MutexHandle> waiter = side[next].acquire("handoff", owner[next]);
      waiter.thenRun(() -> granted.set(System.nanoTime()));
      // Let the waiter enqueue and settle on its watch before the release.
      while (side[0].state("handoff").get().queue().isEmpty()) {
        Thread.onSpinWait();
      }
      Thread.sleep(1);
      AtomicLong committed = new AtomicLong();
      long called = System.nanoTime();
      CompletableFuture<?> released = holder.release().thenRun(() -> committed.set(System.nanoTime()));
      released.get();
      MutexHandle h = waiter.get();
      while (granted.get() == 0) {
        Thread.onSpinWait();
      }
      // The waiter may learn of its grant before the releaser's own future has completed: 0.
      samples[i] = Math.max(0, granted.get() - committed.get());
      fromCall[i] = granted.get() - called;
      holder = h;
    }
    holder.release().get();
    report("hand-off latency, release committed -> next owner's acquire completes", samples);
    report("hand-off latency, release called -> next owner's acquire completes", fromCall);
  }

  /** The floor under a transition: one blind single-key write, its read version and commit, one after another. */
  private static void rawCommits(Database db, DirectorySubspace root, int seconds) {
    byte[] key = root.pack(com.apple.foundationdb.tuple.Tuple.from("raw"));
    byte[] value = new byte[8];
    List<Long> samples = new ArrayList<>();
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (System.nanoTime() < end) {
      long t = System.nanoTime();
      db.run(tr -> {
        tr.set(key, value);
        return null;
      });
      samples.add(System.nanoTime() - t);
    }
    report("raw single-key commit (a blind write: GRV + commit)", samples.stream().mapToLong(Long::longValue).toArray(), "commits");
  }

  private static void uncontended(MutexService s, int seconds, CountingDatabase counting) throws Exception {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    long t0 = System.nanoTime();
    int cycles = 0;
    CountingDatabase.Counts zero = new CountingDatabase.Counts(0, 0, 0, 0, 0);
    CountingDatabase.Counts acquires = zero;
    CountingDatabase.Counts releases = zero;
    List<Long> acquireNanos = new ArrayList<>();
    List<Long> releaseNanos = new ArrayList<>();
    while (System.nanoTime() < end) {
      CountingDatabase.Counts before = counting.counts();
      long t = System.nanoTime();
      MutexHandle h = s.acquire("uncontended", "solo").get();
      long u = System.nanoTime();
      CountingDatabase.Counts acquired = counting.counts();
      h.release().get();
      releaseNanos.add(System.nanoTime() - u);
      acquireNanos.add(u - t);
      acquires = acquires.plus(acquired.minus(before));
      releases = releases.plus(counting.counts().minus(acquired));
      cycles++;
    }
    double secs = (System.nanoTime() - t0) / 1e9;
    System.out.printf("uncontended acquire+release: %d cycles in %.1f s = %.0f cycles/s%n", cycles, secs, cycles / secs);
    report("uncontended acquire, latency", acquireNanos.stream().mapToLong(Long::longValue).toArray(), "acquires");
    report("uncontended release, latency", releaseNanos.stream().mapToLong(Long::longValue).toArray(), "releases");
    System.out.printf("store cost per uncontended acquire: %s%n", acquires.per(cycles));
    System.out.printf("store cost per uncontended release: %s%n", releases.per(cycles));
  }

  /**
   * {@code n} clients, each acquiring and releasing in a loop for {@code seconds}, on the two services
   * in turn: on one mutex when {@code shared}, else on a mutex each.
   */
  private static void clients(MutexService p1, MutexService p2, int n, boolean shared, int seconds) throws Exception {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    AtomicInteger cycles = new AtomicInteger();
    List<CompletableFuture<Void>> loops = new ArrayList<>();
    long t0 = System.nanoTime();
    for (int i = 0; i < n; i++) {
      MutexService s = i % 2 == 0 ? p1 : p2;
      String name = shared ? "clients-shared" : "clients-" + i;
      String owner = "client-" + i;
      loops.add(CompletableFuture.runAsync(() -> {
        while (System.nanoTime() < end) {
          s.acquire(name, owner).thenCompose(MutexHandle::release).join();
          cycles.incrementAndGet();
        }
      }, r -> new Thread(r, "bench-client").start()));
    }
    CompletableFuture.allOf(loops.toArray(CompletableFuture[]::new)).get(5, TimeUnit.MINUTES);
    double secs = (System.nanoTime() - t0) / 1e9;
    System.out.printf("%d clients, %s: %d acquire+release cycles in %.1f s = %.0f cycles/s%n",
        n, shared ? "one mutex" : "a mutex each", cycles.get(), secs, cycles.get() / secs);
  }

  private static void manyMutexes(MutexService p1, MutexService p2, int mutexes, int contenders) throws Exception {
    AtomicInteger done = new AtomicInteger();
    AtomicInteger failed = new AtomicInteger();
    List<CompletableFuture<Void>> all = new ArrayList<>(mutexes * contenders);
    long t0 = System.nanoTime();
    for (int c = 0; c < contenders; c++) {
      for (int m = 0; m < mutexes; m++) {
        MutexService s = (m + c) % 2 == 0 ? p1 : p2;
        all.add(s.acquire("many-" + m, "c" + c, Duration.ofSeconds(120))
            .thenCompose(MutexHandle::release)
            .handle((e, err) -> {
              if (err != null) {
                failed.incrementAndGet();
              } else {
                done.incrementAndGet();
              }
              return null;
            }));
      }
    }
    CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(10, TimeUnit.MINUTES);
    double secs = (System.nanoTime() - t0) / 1e9;
    System.out.printf("%d mutexes x %d contenders at once: %d granted and released, %d failed, in %.2f s = %.0f grants/s%n",
        mutexes, contenders, done.get(), failed.get(), secs, done.get() / secs);
  }

  private static void report(String what, long[] samples) {
    report(what, samples, "hand-offs");
  }

  private static void report(String what, long[] samples, String unit) {
    int n = samples.length;
    Arrays.sort(samples);
    System.out.printf("%s, %d " + unit + ": p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, max %.3f ms%n",
        what, n, ms(samples[n / 2]), ms(samples[(int) (n * 0.90)]), ms(samples[(int) (n * 0.99)]), ms(samples[n - 1]));
  }

  private static double ms(long nanos) {
    return nanos / 1e6;
  }
}
