package io.github.fdbcoord.bench;

import com.apple.foundationdb.Database;
import io.github.fdbcoord.cluster.FdbClusterManager;
import io.github.fdbcoord.cluster.FdbClusterManagerOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.shareddata.AsyncMap;
import io.vertx.core.shareddata.Counter;
import io.vertx.core.shareddata.Lock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The sustained lock workload of issue 24: three clustered Vert.x nodes on {@link FdbClusterManager}
 * in this JVM, all on one database; node B loops {@code getLockWithTimeout("L")} + {@code release}
 * while node C, every window, times one acquire + release of an unrelated lock. Reports cycles/s per
 * window, so a decay over time shows as falling windows. Used by {@link LockSoakBenchmark} and by the
 * cluster module's {@code LockSoakTest}.
 */
public final class LockSoak implements AutoCloseable {
  /**
   * One window's figures: B's cycles (or operations) per second, the CPU time this process spent per
   * cycle (every thread: B's, the engine's, the cluster managers'), C's single acquire + release in
   * milliseconds, the live heap.
   */
  public record Window(int index, double cyclesPerSecond, double cpuMillisPerCycle, double otherLockMillis, long heapMb) {}

  private final List<Vertx> nodes;

  private LockSoak(List<Vertx> nodes) {
    this.nodes = nodes;
  }

  /** Starts three nodes on {@code db} (under a fresh directory, so runs never share keys). */
  public static LockSoak start(Database db) throws Exception {
    FdbClusterManagerOptions options = FdbClusterManagerOptions.builder().database(db)
        .directory(List.of("fdb-coord-soak", UUID.randomUUID().toString())).build();
    List<Future<Vertx>> starting = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      starting.add(Vertx.builder()
          .with(new VertxOptions().setEventBusOptions(new EventBusOptions().setHost("127.0.0.1").setClusterPublicHost("127.0.0.1")))
          .withClusterManager(new FdbClusterManager(options))
          .buildClustered());
    }
    List<Vertx> nodes = new ArrayList<>();
    for (Future<Vertx> f : starting) {
      nodes.add(await(f));
    }
    return new LockSoak(nodes);
  }

  /** Node {@code index} (0, 1 or 2) of the three started. */
  public Vertx node(int index) {
    return nodes.get(index);
  }

  /**
   * Runs the loop for {@code total} (whole windows), reporting each {@code window} to {@code out} as it ends;
   * returns every window.
   */
  public List<Window> run(Duration total, Duration window, Consumer<Window> out) throws Exception {
    Vertx b = nodes.get(1);
    Vertx c = nodes.get(2);
    List<Window> windows = new ArrayList<>();
    long count = Math.max(1, total.toNanos() / window.toNanos());
    for (int index = 0; index < count; ) {
      long t0 = System.nanoTime();
      long cpu0 = processCpuNanos();
      long windowEnd = t0 + window.toNanos();
      long cycles = 0;
      while (System.nanoTime() < windowEnd) {
        Lock lock = await(b.sharedData().getLockWithTimeout("L", 30_000));
        lock.release();
        cycles++;
      }
      double seconds = (System.nanoTime() - t0) / 1e9;
      double cpuMillisPerCycle = (processCpuNanos() - cpu0) / 1e6 / cycles;
      long o = System.nanoTime();
      await(c.sharedData().getLockWithTimeout("other-" + index % 4, 30_000)).release();
      double otherMs = (System.nanoTime() - o) / 1e6;
      Window w = new Window(index++, cycles / seconds, cpuMillisPerCycle, otherMs, liveHeapMb());
      windows.add(w);
      out.accept(w);
    }
    return windows;
  }

  /**
   * Runs {@code workload} on node B for {@code total} (whole windows) instead of the lock loop:
   * {@code counter} increments one counter, {@code map} alternates a put and a get of 1,000 keys of
   * one async map, each operation awaited before the next.
   */
  public List<Window> runSharedData(String workload, Duration total, Duration window, Consumer<Window> out) throws Exception {
    Vertx b = nodes.get(1);
    Counter counter = await(b.sharedData().getCounter("soak-counter"));
    AsyncMap<String, String> map = await(b.sharedData().getAsyncMap("soak-map"));
    List<Window> windows = new ArrayList<>();
    long count = Math.max(1, total.toNanos() / window.toNanos());
    long i = 0;
    for (int index = 0; index < count; index++) {
      long t0 = System.nanoTime();
      long cpu0 = processCpuNanos();
      long windowEnd = t0 + window.toNanos();
      long ops = 0;
      while (System.nanoTime() < windowEnd) {
        switch (workload) {
          case "counter" -> await(counter.incrementAndGet());
          case "map" -> {
            String key = "k" + (i % 1000);
            if (i % 2 == 0) {
              await(map.put(key, "value-" + i));
            } else {
              await(map.get(key));
            }
          }
          default -> throw new IllegalArgumentException("unknown workload " + workload);
        }
        i++;
        ops++;
      }
      Window w = new Window(index, ops / ((System.nanoTime() - t0) / 1e9), (processCpuNanos() - cpu0) / 1e6 / ops, 0,
          liveHeapMb());
      windows.add(w);
      out.accept(w);
    }
    return windows;
  }

  /** The CPU time of every thread of this process so far. */
  public static long processCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  /** Heap in use after the last garbage collection of each pool (the live data, not garbage), in MB. */
  public static long liveHeapMb() {
    long bytes = 0;
    for (java.lang.management.MemoryPoolMXBean pool : java.lang.management.ManagementFactory.getMemoryPoolMXBeans()) {
      java.lang.management.MemoryUsage used = pool.getCollectionUsage();
      if (pool.getType() == java.lang.management.MemoryType.HEAP && used != null) {
        bytes += used.getUsed();
      }
    }
    return bytes >> 20;
  }

  @Override
  public void close() {
    for (Vertx v : nodes) {
      try {
        v.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
      } catch (Exception e) {
        // closing is best effort at the end of a run
      }
    }
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
  }
}
