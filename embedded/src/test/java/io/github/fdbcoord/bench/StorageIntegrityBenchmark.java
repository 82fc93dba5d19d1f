package io.github.fdbcoord.bench;

import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.embedded.EmbeddedOptions;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Stream;

/**
 * What finding damage before a read costs, on a closed durable store (a data directory written by
 * {@code DurableStorageBenchmark}'s loader, or any other): {@code StorageIntegrityBenchmark <dataDirectory>}
 * times a plain open, an open with {@code verifyChecksumsAtOpen}, {@link EmbeddedDatabase#verify} of the closed
 * directory, one background scrub pass at the default rate, and 64 writers' commits/s without and with the
 * scrub running (alternating, {@code bench.seconds} each, default 20). The directory is opened and closed
 * several times and written to (the writers' keys), never removed.
 */
public final class StorageIntegrityBenchmark {
  private static final int SECONDS = Integer.getInteger("bench.seconds", 20);
  private static final int WRITERS = Integer.getInteger("bench.writers", 64);

  private StorageIntegrityBenchmark() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 1 || !Files.isDirectory(Path.of(args[0]))) {
      System.err.println("usage: StorageIntegrityBenchmark <dataDirectory of a closed durable store>");
      System.exit(2);
    }
    Path dir = Path.of(args[0]);
    System.out.printf("StorageIntegrityBenchmark %s: %.0f MiB of table files, %d cores  [%s]%n", dir,
        tableBytes(dir) / 1048576.0, Runtime.getRuntime().availableProcessors(), load());
    for (int round = 1; round <= 2; round++) {
      long t0 = System.nanoTime();
      EmbeddedDatabase.open(EmbeddedOptions.durable(dir)).close();
      long plain = System.nanoTime() - t0;
      t0 = System.nanoTime();
      EmbeddedDatabase.open(EmbeddedOptions.builder().dataDirectory(dir).verifyChecksumsAtOpen(true).build()).close();
      long verified = System.nanoTime() - t0;
      t0 = System.nanoTime();
      List<String> damaged = EmbeddedDatabase.verify(dir);
      long verify = System.nanoTime() - t0;
      System.out.printf("round %d: open (and close) %.2f s; with verifyChecksumsAtOpen %.2f s; verify of the closed"
          + " directory %.2f s (%d damaged)  [%s]%n", round, plain / 1e9, verified / 1e9, verify / 1e9, damaged.size(),
          load());
    }
    long rate = EmbeddedOptions.DEFAULT_SCRUB_BYTES_PER_SECOND;
    for (int round = 1; round <= 2; round++) {
      try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.durable(dir))) {
        System.out.printf("round %d: %d writers, no scrub: %,.0f commits/s  [%s]%n", round, WRITERS,
            commits(db, SECONDS), load());
      }
      try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.builder().dataDirectory(dir)
          .scrubInterval(Duration.ofMillis(1)).scrubBytesPerSecond(rate).build())) {
        long t0 = System.nanoTime();
        double during = commits(db, SECONDS);
        boolean stillScrubbing = db.scrubPasses() == 0;
        System.out.printf("round %d: %d writers, scrub at %d MiB/s running throughout: %,.0f commits/s%s  [%s]%n",
            round, WRITERS, rate >> 20, during, stillScrubbing ? "" : " (the pass ended before the run did)", load());
        if (round == 1) {
          while (db.scrubPasses() == 0) {
            Thread.sleep(100);
          }
          System.out.printf("one scrub pass at %d MiB/s (commits running for the first %d s): %.1f s; damage: %s"
              + "  [%s]%n", rate >> 20, SECONDS, (System.nanoTime() - t0) / 1e9,
              db.storageDamage().orElse("none"), load());
        }
      }
    }
    System.exit(0);
  }

  /** Single-key commits of 16-byte keys and 100-byte values by {@link #WRITERS} threads: commits/s. */
  private static double commits(EmbeddedDatabase db, int seconds) throws InterruptedException {
    LongAdder done = new LongAdder();
    AtomicBoolean stop = new AtomicBoolean();
    List<Thread> threads = new ArrayList<>();
    for (int w = 0; w < WRITERS; w++) {
      Thread t = new Thread(() -> {
        byte[] value = new byte[100];
        while (!stop.get()) {
          ThreadLocalRandom r = ThreadLocalRandom.current();
          r.nextBytes(value);
          byte[] key = ByteBuffer.allocate(16).putLong(0x62656e63682d7772L).putLong(r.nextLong()).array();
          db.run(tr -> {
            tr.set(key, value);
            return null;
          });
          done.increment();
        }
      });
      t.start();
      threads.add(t);
    }
    Thread.sleep(2_000);
    long from = done.sum();
    long t0 = System.nanoTime();
    Thread.sleep(seconds * 1000L);
    double rate = (done.sum() - from) / ((System.nanoTime() - t0) / 1e9);
    stop.set(true);
    for (Thread t : threads) {
      t.join();
    }
    return rate;
  }

  private static long tableBytes(Path dir) throws java.io.IOException {
    try (Stream<Path> files = Files.list(dir.resolve("storage"))) {
      return files.filter(p -> p.toString().endsWith(".sst")).mapToLong(p -> p.toFile().length()).sum();
    }
  }

  private static String load() {
    return String.format("load average %.2f", ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
  }
}
