package io.github.fdbcoord.bench;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.Range;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.async.AsyncUtil;
import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.Tuple;
import io.github.fdbcoord.allocator.HighContentionAllocator;
import io.github.fdbcoord.allocator.NaiveAllocator;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.embedded.EmbeddedOptions;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;

/**
 * Naive single-counter allocator against the windowed high-contention allocator (seed 000), at
 * 1, 4, 16 and 64 concurrent allocators, on the embedded engine with about 1 ms injected per read
 * and per commit (a network round trip to a cluster).
 *
 * <p>Each concurrent allocator is an asynchronous loop of allocations, each in its own retried
 * transaction; retries are counted by counting invocations of the transaction body. Every value is
 * also checked for uniqueness.
 *
 * <p>Run: {@code mvn -q -o test-compile exec:java -Dexec.mainClass=io.github.fdbcoord.bench.AllocatorBenchmark}
 * (system properties {@code bench.seconds} per cell, default 4, and {@code bench.latencyMs},
 * default 1; set them with {@code -Dexec.args} or {@code MAVEN_OPTS}). With {@code -Dbench.clusterFile=<file>}
 * the same cells run on that FoundationDB cluster too ({@link BenchTargets}), with no injected latency.
 */
public final class AllocatorBenchmark {
  private static final int[] CONCURRENCY = {1, 4, 16, 64};

  private AllocatorBenchmark() {}

  public static void main(String[] args) throws Exception {
    double seconds = Double.parseDouble(System.getProperty("bench.seconds", "4"));
    long latencyMs = Long.parseLong(System.getProperty("bench.latencyMs", "1"));
    EmbeddedOptions options = EmbeddedOptions.builder().latency(Duration.ofMillis(latencyMs)).build();
    List<String> rows = new ArrayList<>();
    for (BenchTargets.Target target : BenchTargets.targets("embedded, " + latencyMs + " ms latency",
        () -> EmbeddedDatabase.open(options))) {
      try (BenchTargets.Opened opened = target.open()) {
        Database db = opened.database();
        Executor executor = db.getExecutor();
        for (String kind : new String[] {"naive", "windowed"}) {
          for (int concurrency : CONCURRENCY) {
            Subspace subspace = new Subspace(Tuple.from("bench", "allocator", UUID.randomUUID().toString()));
            Function<Transaction, CompletableFuture<Long>> once = kind.equals("naive")
                ? new NaiveAllocator("bench", db, subspace, executor)::allocateOnce
                : new HighContentionAllocator("bench", db, subspace, executor)::allocateOnce;
            Result r = run(db, executor, once, concurrency, seconds);
            String row = String.format("| %s | %-8s | %3d | %8.0f | %6.3f | %s |", target.label(), kind, concurrency,
                r.perSecond(), r.retriesPerAllocation(), r.distinct ? "yes" : "NO");
            System.out.println(row);
            rows.add(row);
            db.run(tr -> {
              tr.clear(Range.startsWith(subspace.getKey()));
              return null;
            });
          }
        }
      }
    }
    System.out.println();
    System.out.printf("embedded: latency %d ms per read and commit; %.1f s per cell%n", latencyMs, seconds);
    System.out.println("| store | allocator | concurrent | allocations/s | retries/allocation | all distinct |");
    System.out.println("|---|---|---:|---:|---:|---|");
    rows.forEach(System.out::println);
    System.exit(0);
  }

  private static Result run(Database db, Executor executor, Function<Transaction, CompletableFuture<Long>> once,
                            int concurrency, double seconds) throws Exception {
    LongAdder attempts = new LongAdder();
    LongAdder allocations = new LongAdder();
    Set<Long> values = ConcurrentHashMap.newKeySet();
    LongAdder duplicates = new LongAdder();
    long start = System.nanoTime();
    long deadline = start + (long) (seconds * 1e9);
    List<CompletableFuture<Void>> loops = new ArrayList<>();
    for (int i = 0; i < concurrency; i++) {
      loops.add(AsyncUtil.whileTrue(() -> db.runAsync(tr -> {
        attempts.increment();
        return once.apply(tr);
      }, executor).thenApply(v -> {
        allocations.increment();
        if (!values.add(v)) {
          duplicates.increment();
        }
        return System.nanoTime() < deadline;
      }), executor));
    }
    CompletableFuture.allOf(loops.toArray(new CompletableFuture<?>[0])).get((long) seconds + 120, TimeUnit.SECONDS);
    double elapsed = (System.nanoTime() - start) / 1e9;
    long n = allocations.sum();
    return new Result(n / elapsed, n == 0 ? 0 : (attempts.sum() - n) / (double) n, duplicates.sum() == 0);
  }

  private record Result(double perSecond, double retriesPerAllocation, boolean distinct) {}
}
