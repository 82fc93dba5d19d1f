package io.github.fdbcoord.bench;

import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.embedded.EmbeddedOptions;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * Soak of SharedData locks (issue 24), or of a counter or an async map: {@link LockSoak} for a given time on the in-memory engine or
 * the durable one, printing cycles/s per 10 s window, the live heap (after GC) and (durable) the data
 * directory's size, then the first and last minute.
 *
 * <pre>
 * java -cp cluster/target/test-classes:cluster/target/classes:$(cat cluster/target/bench.classpath) \
 *   io.github.fdbcoord.bench.LockSoakBenchmark [SECONDS] [memory|durable] [lock|counter|map]
 * </pre>
 */
public final class LockSoakBenchmark {
  private static final Duration WINDOW = Duration.ofSeconds(10);

  private LockSoakBenchmark() {}

  public static void main(String[] args) throws Exception {
    long seconds = args.length > 0 ? Long.parseLong(args[0]) : 300;
    boolean durable = args.length > 1 && args[1].equals("durable");
    String workload = args.length > 2 ? args[2] : "lock";
    Path dir = durable ? Files.createTempDirectory("fdb-lock-soak") : null;
    System.out.printf(Locale.ROOT, "LockSoakBenchmark %s: %d s, %s store, %d cores, %s%n", workload, seconds,
        durable ? "durable" : "in-memory", Runtime.getRuntime().availableProcessors(), System.getProperty("java.vm.version"));
    try (EmbeddedDatabase db = durable ? EmbeddedDatabase.open(EmbeddedOptions.durable(dir)) : EmbeddedDatabase.inMemory();
         LockSoak soak = LockSoak.start(db)) {
      System.out.printf(Locale.ROOT, "start: store %s%n", size(dir));
      List<LockSoak.Window> windows = workload.equals("lock")
          ? soak.run(Duration.ofSeconds(seconds), WINDOW, w ->
              System.out.printf(Locale.ROOT, "window %3d: %8.0f cycles/s, %6.3f ms CPU/cycle, other lock %7.1f ms, live heap %4d MB, store %s%n",
                  w.index(), w.cyclesPerSecond(), w.cpuMillisPerCycle(), w.otherLockMillis(), w.heapMb(), size(dir)))
          : soak.runSharedData(workload, Duration.ofSeconds(seconds), WINDOW, w ->
              System.out.printf(Locale.ROOT, "%s window %3d: %8.0f ops/s, %6.3f ms CPU/op, live heap %4d MB, store %s%n",
                  workload, w.index(), w.cyclesPerSecond(), w.cpuMillisPerCycle(), w.heapMb(), size(dir)));
      int perMinute = (int) (60 / WINDOW.toSeconds());
      if (windows.size() >= 2 * perMinute) {
        System.out.printf(Locale.ROOT, "first minute %.0f /s, last minute %.0f /s%n",
            mean(windows.subList(0, perMinute)), mean(windows.subList(windows.size() - perMinute, windows.size())));
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

  static double mean(List<LockSoak.Window> ws) {
    return ws.stream().mapToDouble(LockSoak.Window::cyclesPerSecond).average().orElse(0);
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

}
