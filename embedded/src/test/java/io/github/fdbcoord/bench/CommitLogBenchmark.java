package io.github.fdbcoord.bench;

import io.github.fdbcoord.embedded.log.CommitLog;
import io.github.fdbcoord.embedded.log.CommitLogProbe;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import java.util.stream.Stream;

/**
 * Durable append throughput of {@link CommitLog}: W writers (default 64), each appending a ~100-byte record
 * under a shared lock (as the engine's commit lock does) and waiting for its fsync before the next one.
 * Arguments (all optional): writers, seconds, payload bytes, data directory (default: a temp dir under
 * target/, deleted afterwards).
 */
public final class CommitLogBenchmark {
  public static void main(String[] args) throws Exception {
    int writers = args.length > 0 ? Integer.parseInt(args[0]) : 64;
    double seconds = args.length > 1 ? Double.parseDouble(args[1]) : 5;
    int payloadBytes = args.length > 2 ? Integer.parseInt(args[2]) : 100;
    Path base = args.length > 3 ? Path.of(args[3]) : Path.of("target");
    Files.createDirectories(base);
    Path dir = Files.createTempDirectory(base, "commit-log-bench-");
    try {
      run(dir, writers, 1, payloadBytes, false);
      Result r = run(dir, writers, seconds, payloadBytes, true);
      System.out.printf("CommitLogBenchmark: %d writers, %d-byte payloads, %.1f s, dir %s%n", writers, payloadBytes,
          r.seconds, dir.toAbsolutePath());
      System.out.printf("  records/s: %,.0f%n", r.records / r.seconds);
      System.out.printf("  fsyncs/s:  %,.0f (%.1f records per fsync)%n", r.syncs / r.seconds,
          (double) r.records / Math.max(1, r.syncs));
      System.out.printf("  append-to-durable latency: p50 %.2f ms, p99 %.2f ms%n", r.p50Micros / 1000.0,
          r.p99Micros / 1000.0);
    } finally {
      try (Stream<Path> s = Files.walk(dir)) {
        for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(p);
        }
      }
    }
  }

  private record Result(long records, long syncs, double seconds, long p50Micros, long p99Micros) {}

  private static Result run(Path dir, int writers, double seconds, int payloadBytes, boolean measure)
      throws IOException, InterruptedException {
    ReentrantLock commitLock = new ReentrantLock();
    long[] clock = {0};
    AtomicBoolean stop = new AtomicBoolean();
    long[][] latencies = new long[writers][];
    int[] counts = new int[writers];
    try (CommitLog log = CommitLog.open(dir, new CommitLog.Replay() {
      @Override
      public void snapshotEntry(byte[] key, byte[] value) {}

      @Override
      public void record(long version, byte[] payload) {}
    })) {
      clock[0] = log.recoveredVersion();
      List<Thread> threads = new ArrayList<>();
      for (int w = 0; w < writers; w++) {
        int id = w;
        latencies[w] = new long[1 << 16];
        threads.add(new Thread(() -> {
          byte[] payload = new byte[payloadBytes];
          while (!stop.get()) {
            ThreadLocalRandom.current().nextBytes(payload);
            long start = System.nanoTime();
            CompletableFuture<Void> f;
            commitLock.lock();
            try {
              f = log.append(++clock[0], payload.clone());
            } finally {
              commitLock.unlock();
            }
            f.join();
            long micros = (System.nanoTime() - start) / 1000;
            if (counts[id] == latencies[id].length) {
              latencies[id] = Arrays.copyOf(latencies[id], counts[id] * 2);
            }
            latencies[id][counts[id]++] = micros;
          }
        }, "writer-" + w));
      }
      long syncsBefore = CommitLogProbe.syncCount(log);
      long t0 = System.nanoTime();
      threads.forEach(Thread::start);
      Thread.sleep((long) (seconds * 1000));
      stop.set(true);
      for (Thread t : threads) {
        t.join();
      }
      double elapsed = (System.nanoTime() - t0) / 1e9;
      long syncs = CommitLogProbe.syncCount(log) - syncsBefore;
      int total = Arrays.stream(counts).sum();
      long[] all = new long[total];
      int k = 0;
      for (int w = 0; w < writers; w++) {
        System.arraycopy(latencies[w], 0, all, k, counts[w]);
        k += counts[w];
      }
      Arrays.sort(all);
      return new Result(total, syncs, elapsed, all[total / 2], all[(int) (total * 0.99)]);
    }
  }
}
