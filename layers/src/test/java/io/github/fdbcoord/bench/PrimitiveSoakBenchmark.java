package io.github.fdbcoord.bench;

import com.apple.foundationdb.Database;
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

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Soak of the layers (issue 24): one primitive at a time, one client in a closed loop, for a given
 * time on a fresh in-memory or durable engine; prints operations/s per 10 s window, the live heap (after GC)
 * and (durable) the data directory's size, so that a decay over time shows. Each workload keeps its
 * data the same size: a mutex acquired and released, 10 strings from a pool of 1,000 interned
 * (existing after the first pass), an id allocated, a directory created and removed.
 *
 * <pre>
 * java -cp layers/target/test-classes:layers/target/classes:$(cat layers/target/bench.classpath) \
 *   io.github.fdbcoord.bench.PrimitiveSoakBenchmark [SECONDS] [memory|durable] [mutex,interner,allocator,directory]
 * </pre>
 */
public final class PrimitiveSoakBenchmark {
  private static final Duration WINDOW = Duration.ofSeconds(10);

  private PrimitiveSoakBenchmark() {}

  /** One operation of a workload, started by iteration {@code i}. */
  private interface Op {
    CompletableFuture<?> run(long i);
  }

  public static void main(String[] args) throws Exception {
    long seconds = args.length > 0 ? Long.parseLong(args[0]) : 180;
    boolean durable = args.length > 1 && args[1].equals("durable");
    String primitives = args.length > 2 ? args[2] : "mutex,interner,allocator,directory";
    System.out.printf(Locale.ROOT, "PrimitiveSoakBenchmark: %d s each, %s store, %d cores, %s%n", seconds,
        durable ? "durable" : "in-memory", Runtime.getRuntime().availableProcessors(), System.getProperty("java.vm.version"));
    for (String primitive : primitives.split(",")) {
      Path dir = durable ? Files.createTempDirectory("fdb-primitive-soak") : null;
      try (EmbeddedDatabase db = durable ? EmbeddedDatabase.open(EmbeddedOptions.durable(dir)) : EmbeddedDatabase.inMemory()) {
        soak(primitive, workload(primitive, db), seconds, dir);
      } finally {
        delete(dir);
      }
      System.gc();
    }
    System.exit(0);
  }

  private static Op workload(String primitive, Database db) throws Exception {
    String run = UUID.randomUUID().toString();
    switch (primitive) {
      case "mutex" -> {
        MutexService mutexes = MutexService.open(db, MutexOptions.builder().directory(List.of("soak", run)).build())
            .get(30, TimeUnit.SECONDS);
        return i -> mutexes.tryAcquire("m", "a").thenCompose(r -> {
          FencingToken token = r.token().orElseThrow();
          return mutexes.release("m", "a", token);
        });
      }
      case "interner" -> {
        StringInterner interner = InternerService.create(db, InternerOptions.builder().rootPath(List.of("soak", run)).build())
            .open("soak").get(30, TimeUnit.SECONDS);
        return i -> {
          List<String> batch = new ArrayList<>(10);
          for (int j = 0; j < 10; j++) {
            batch.add("string-" + ((i * 10 + j) % 1000));
          }
          return interner.intern(batch);
        };
      }
      case "allocator" -> {
        AllocatorService allocators = AllocatorService.create(db);
        String name = "soak-" + run;
        return i -> allocators.allocate(name);
      }
      case "directory" -> {
        DirectoryService directories = DirectoryService.create(db);
        return i -> directories.createOrOpen(List.of("soak", run, "d" + (i % 100)))
            .thenCompose(d -> directories.remove(List.of("soak", run, "d" + (i % 100))));
      }
      default -> throw new IllegalArgumentException("unknown primitive " + primitive);
    }
  }

  private static void soak(String primitive, Op op, long seconds, Path dir) throws Exception {
    System.out.printf(Locale.ROOT, "%s: start: store %s%n", primitive, size(dir));
    long windows = Math.max(1, seconds / WINDOW.toSeconds());
    List<Double> rates = new ArrayList<>();
    long i = 0;
    for (int w = 0; w < windows; w++) {
      long t0 = System.nanoTime();
      long end = t0 + WINDOW.toNanos();
      long ops = 0;
      while (System.nanoTime() < end) {
        op.run(i++).get(60, TimeUnit.SECONDS);
        ops++;
      }
      double rate = ops / ((System.nanoTime() - t0) / 1e9);
      rates.add(rate);
      System.out.printf(Locale.ROOT, "%s window %3d: %8.0f ops/s, live heap %4d MB, store %s%n", primitive, w, rate,
          liveHeapMb(), size(dir));
    }
    System.out.printf(Locale.ROOT, "%s: first window %.0f ops/s, last window %.0f ops/s%n", primitive, rates.get(0),
        rates.get(rates.size() - 1));
  }

  /** Heap in use after the last garbage collection of each pool (the live data, not garbage), in MB. */
  static long liveHeapMb() {
    long bytes = 0;
    for (java.lang.management.MemoryPoolMXBean pool : java.lang.management.ManagementFactory.getMemoryPoolMXBeans()) {
      java.lang.management.MemoryUsage used = pool.getCollectionUsage();
      if (pool.getType() == java.lang.management.MemoryType.HEAP && used != null) {
        bytes += used.getUsed();
      }
    }
    return bytes >> 20;
  }

  /** The data directory's size as "log N MB + storage N MB" (the commit log's segments, RocksDB's files); "-" in memory. */
  static String size(Path dir) {
    if (dir == null) {
      return "-";
    }
    try (var files = Files.walk(dir)) {
      long[] bytes = new long[2];
      files.filter(Files::isRegularFile).forEach(p -> bytes[p.startsWith(dir.resolve("storage")) ? 1 : 0] += p.toFile().length());
      return String.format(Locale.ROOT, "log %.1f MB + storage %.1f MB", bytes[0] / 1e6, bytes[1] / 1e6);
    } catch (java.io.IOException | java.io.UncheckedIOException e) {
      return "?";
    }
  }


  private static void delete(Path dir) throws java.io.IOException {
    if (dir == null) {
      return;
    }
    try (var files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }
}
