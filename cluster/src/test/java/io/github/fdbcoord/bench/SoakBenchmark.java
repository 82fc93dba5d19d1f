package io.github.fdbcoord.bench;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.Range;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.StreamingMode;
import io.github.fdbcoord.allocator.AllocatorService;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.directory.DirectoryService;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.embedded.EmbeddedOptions;
import io.github.fdbcoord.interner.InternerOptions;
import io.github.fdbcoord.interner.InternerService;
import io.github.fdbcoord.interner.StringInterner;
import io.github.fdbcoord.mutex.MutexOptions;
import io.github.fdbcoord.mutex.MutexService;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.shareddata.AsyncMap;
import io.vertx.core.shareddata.Counter;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Soak of every primitive at once (issue 24): on one fresh store (in memory or durable), one client
 * thread per workload in a closed loop, all running at the same time in this JVM, for N minutes.
 * Every minute it prints each workload's operations/s in that minute, the heap in use right after a
 * full collection ({@code System.gc()}, so the figures form a trend of live data, not of garbage), and
 * the store's size: the live keys and their bytes (one snapshot read of the whole key space) and, when
 * durable, the data directory. At the end: each workload's first and last minute.
 *
 * <p>Workloads (none grows its data): {@code mutex} tryAcquire + release (layers, direct);
 * {@code lock}, {@code counter}, {@code map} on a clustered node ({@link LockSoak}'s three nodes):
 * SharedData lock acquire + release, counter increment, async map put / get / remove over 1,000 keys;
 * {@code interner}: 10 strings of a pool of 1,000 interned and looked up, plus one new string into a
 * namespace that is removed and recreated every 5,000 operations; {@code allocator}: an HCA allocate
 * (the allocator clears its window as it advances); {@code directory}: create, list the parent, remove,
 * over 100 names.
 *
 * <pre>
 * bench/run.sh cluster SoakBenchmark MINUTES memory|durable [mutex,lock,counter,map,interner,allocator,directory]
 * </pre>
 */
public final class SoakBenchmark {
  private static final long MINUTE_NANOS = TimeUnit.MINUTES.toNanos(1);
  private static final String ALL = "mutex,lock,counter,map,interner,allocator,directory";
  /**
   * {@code -Dsoak.removeNamespaces=false} keeps the interner's old namespaces instead of removing them:
   * the same work without the large range clears, to tell their cost from plain CPU sharing.
   */
  private static final boolean REMOVE_NAMESPACES =
      Boolean.parseBoolean(System.getProperty("soak.removeNamespaces", "true"));

  private SoakBenchmark() {}

  /** One operation of a workload, iteration {@code i} of its loop. */
  private interface Op {
    CompletableFuture<?> run(long i) throws Exception;
  }

  /** A workload's loop and its counts; the loop ends when {@code stop} is set. */
  private static final class Workload implements Runnable {
    final String name;
    final Op op;
    final AtomicLong ops = new AtomicLong();
    final AtomicLong failures = new AtomicLong();
    final List<Double> perMinute = new ArrayList<>();
    volatile boolean stop;
    volatile String lastFailure = "";

    Workload(String name, Op op) {
      this.name = name;
      this.op = op;
    }

    @Override
    public void run() {
      for (long i = 0; !stop; i++) {
        try {
          op.run(i).get(60, TimeUnit.SECONDS);
          ops.incrementAndGet();
        } catch (Exception e) {
          failures.incrementAndGet();
          lastFailure = String.valueOf(e.getCause() != null ? e.getCause() : e);
        }
      }
    }
  }

  public static void main(String[] args) throws Exception {
    int minutes = args.length > 0 ? Integer.parseInt(args[0]) : 10;
    boolean durable = args.length > 1 && args[1].equals("durable");
    String names = args.length > 2 ? args[2] : ALL;
    System.out.printf(Locale.ROOT, "SoakBenchmark: %d min, %s store, workloads at once: %s; %d cores, %s%n", minutes,
        durable ? "durable" : "in-memory", names, Runtime.getRuntime().availableProcessors(),
        System.getProperty("java.vm.version"));
    Path dir = durable ? Files.createTempDirectory("fdb-soak") : null;
    try (EmbeddedDatabase db = durable ? EmbeddedDatabase.open(EmbeddedOptions.durable(dir)) : EmbeddedDatabase.inMemory();
         LockSoak cluster = LockSoak.start(db)) {
      List<Workload> workloads = new ArrayList<>();
      for (String name : names.split(",")) {
        workloads.add(new Workload(name, workload(name, db, cluster.node(1))));
      }
      System.out.printf(Locale.ROOT, "start: heap after GC %d MB, %s%n", heapAfterGcMb(), storeSize(db, dir));
      List<Thread> threads = new ArrayList<>();
      for (Workload w : workloads) {
        Thread t = new Thread(w, "soak-" + w.name);
        t.setDaemon(true);
        t.start();
        threads.add(t);
      }
      Map<String, Long> before = new LinkedHashMap<>();
      workloads.forEach(w -> before.put(w.name, 0L));
      long start = System.nanoTime();
      for (int m = 1; m <= minutes; m++) {
        long windowStart = System.nanoTime();
        TimeUnit.NANOSECONDS.sleep(start + m * MINUTE_NANOS - windowStart);
        double seconds = (System.nanoTime() - windowStart) / 1e9;
        StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "minute %3d:", m));
        for (Workload w : workloads) {
          long now = w.ops.get();
          double rate = (now - before.get(w.name)) / seconds;
          before.put(w.name, now);
          w.perMinute.add(rate);
          line.append(String.format(Locale.ROOT, " %s %.0f/s", w.name, rate));
          if (w.failures.get() > 0) {
            line.append(String.format(Locale.ROOT, " (%d failed: %s)", w.failures.get(), w.lastFailure));
          }
        }
        line.append(String.format(Locale.ROOT, " | heap after GC %d MB | %s | load %.2f", heapAfterGcMb(),
            storeSize(db, dir), ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage()));
        System.out.println(line);
      }
      workloads.forEach(w -> w.stop = true);
      for (Thread t : threads) {
        t.join(TimeUnit.SECONDS.toMillis(70));
      }
      for (Workload w : workloads) {
        double first = w.perMinute.get(0);
        double last = w.perMinute.get(w.perMinute.size() - 1);
        System.out.printf(Locale.ROOT, "%-9s first minute %8.0f/s, last minute %8.0f/s (%+.0f %%), %d failed%n", w.name,
            first, last, 100 * (last - first) / first, w.failures.get());
      }
    } finally {
      if (dir != null) {
        try (var files = Files.walk(dir)) {
          files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
      }
    }
    System.exit(0);
  }

  private static Op workload(String name, Database db, Vertx node) throws Exception {
    String run = UUID.randomUUID().toString();
    switch (name) {
      case "mutex" -> {
        MutexService mutexes = MutexService.open(db, MutexOptions.builder().directory(List.of("soak", run, "mutex")).build())
            .get(30, TimeUnit.SECONDS);
        return i -> mutexes.tryAcquire("m", "a").thenCompose(r -> {
          FencingToken token = r.token().orElseThrow();
          return mutexes.release("m", "a", token);
        });
      }
      case "lock" -> {
        return i -> stage(node.sharedData().getLockWithTimeout("soak-lock", 30_000).map(lock -> {
          lock.release();
          return null;
        }));
      }
      case "counter" -> {
        Counter counter = stage(node.sharedData().getCounter("soak-counter")).get(30, TimeUnit.SECONDS);
        return i -> stage(counter.incrementAndGet());
      }
      case "map" -> {
        AsyncMap<String, String> map = stage(node.sharedData().<String, String>getAsyncMap("soak-map"))
            .get(30, TimeUnit.SECONDS);
        return i -> {
          String key = "k" + (i / 3) % 1000;
          return switch ((int) (i % 3)) {
            case 0 -> stage(map.put(key, "value-" + i));
            case 1 -> stage(map.get(key));
            default -> stage(map.remove(key));
          };
        };
      }
      case "interner" -> {
        InternerService service = InternerService.create(db, InternerOptions.builder().rootPath(List.of("soak", run, "interner")).build());
        StringInterner pool = service.open("pool").get(30, TimeUnit.SECONDS);
        StringInterner[] fresh = {service.open("fresh-0").get(30, TimeUnit.SECONDS)};
        return i -> {
          long generation = i / 5_000;
          if (i > 0 && i % 5_000 == 0) {
            if (REMOVE_NAMESPACES) {
              service.removeNamespace("fresh-" + (generation - 1)).get(60, TimeUnit.SECONDS);
            }
            fresh[0] = service.open("fresh-" + generation).get(60, TimeUnit.SECONDS);
          }
          List<String> batch = new ArrayList<>(10);
          for (int j = 0; j < 10; j++) {
            batch.add("string-" + ((i * 10 + j) % 1000));
          }
          return pool.intern(batch)
              .thenCompose(pool::lookup)
              .thenCompose(found -> fresh[0].intern("new-" + i));
        };
      }
      case "allocator" -> {
        AllocatorService allocators = AllocatorService.create(db);
        String allocator = "soak-" + run;
        return i -> allocators.allocate(allocator);
      }
      case "directory" -> {
        DirectoryService directories = DirectoryService.create(db);
        List<String> parent = List.of("soak", run, "directory");
        return i -> {
          List<String> path = List.of("soak", run, "directory", "d" + (i % 100));
          return directories.createOrOpen(path)
              .thenCompose(d -> directories.list(parent, null, 100))
              .thenCompose(page -> directories.remove(path));
        };
      }
      default -> throw new IllegalArgumentException("unknown workload " + name + " (one of " + ALL + ")");
    }
  }

  private static <T> CompletableFuture<T> stage(Future<T> f) {
    return f.toCompletionStage().toCompletableFuture();
  }

  /** Heap in use right after a full collection, in MB: one sample of the live data per window. */
  static long heapAfterGcMb() {
    System.gc();
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed() >> 20;
  }

  /**
   * The store's live keys and their bytes (one snapshot read of the whole user key space) and, when
   * durable, the data directory's files ({@link LockSoakBenchmark#size}).
   */
  static String storeSize(Database db, Path dir) {
    try {
      long[] keysAndBytes = db.readAsync(tr -> tr.snapshot().getRange(new Range(new byte[0], new byte[] {(byte) 0xff}),
              ReadTransaction.ROW_LIMIT_UNLIMITED, false, StreamingMode.WANT_ALL).asList()
          .thenApply(kvs -> {
            long bytes = 0;
            for (KeyValue kv : kvs) {
              bytes += kv.getKey().length + kv.getValue().length;
            }
            return new long[] {kvs.size(), bytes};
          })).get(60, TimeUnit.SECONDS);
      String live = String.format(Locale.ROOT, "store %d keys %.1f kB", keysAndBytes[0], keysAndBytes[1] / 1e3);
      return dir == null ? live : live + ", dir " + LockSoakBenchmark.size(dir);
    } catch (Exception e) {
      return "store ? (" + e + ")";
    }
  }
}
