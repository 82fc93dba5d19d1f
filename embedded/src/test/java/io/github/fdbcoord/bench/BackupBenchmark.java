package io.github.fdbcoord.bench;

import io.github.fdbcoord.embedded.BackupInfo;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.embedded.EmbeddedOptions;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * An online backup of a durable store of N keys (16-byte keys, 100-byte values; default 10M) while
 * {@code bench.writers} (default 16) threads commit single-key overwrites of random stored keys: durable
 * commits/s for {@code bench.seconds} (default 10) before the backup, during it, and after it; the
 * backup's time, size and file count; then the time of a restore of it into a new data directory and
 * of opening that.
 *
 * <p>Run: {@code bench/run.sh embedded BackupBenchmark <keys|dir>} (a directory loaded by
 * {@code DurableStorageBenchmark reopen} with {@code -Dbench.keep=true} is reused). The backup and the
 * restore go under {@code bench.dataRoot} (default /work/bench-data), deleted afterwards.
 */
public final class BackupBenchmark {
  private BackupBenchmark() {}

  public static void main(String[] args) throws Exception {
    String arg = args.length > 0 ? args[0] : "10m";
    int writers = Integer.getInteger("bench.writers", 16);
    int seconds = Integer.getInteger("bench.seconds", 10);
    DurableStorageBenchmark.header("BackupBenchmark " + arg + ", " + writers + " writers");
    DurableStorageBenchmark.Loaded loaded = DurableStorageBenchmark.loadedOrLoad(arg, "backup");
    Path work = DurableStorageBenchmark.freshDirectory("backup-copies");
    try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.durable(loaded.dir()))) {
      long keys = db.read(tr -> {
        byte[] v = tr.get("bench/count".getBytes(java.nio.charset.StandardCharsets.US_ASCII)).join();
        return v == null ? 0 : java.nio.ByteBuffer.wrap(v).getLong();
      });
      System.out.printf("store: %,d keys, %s on disk  [%s]%n", keys,
          DurableStorageBenchmark.mib(DurableStorageBenchmark.dirSize(loaded.dir())), DurableStorageBenchmark.load());
      LongAdder commits = new LongAdder();
      AtomicBoolean stop = new AtomicBoolean();
      ExecutorService pool = Executors.newFixedThreadPool(writers);
      List<CompletableFuture<Void>> running = new ArrayList<>();
      for (int w = 0; w < writers; w++) {
        running.add(CompletableFuture.runAsync(() -> {
          byte[] value = new byte[100];
          while (!stop.get()) {
            ThreadLocalRandom.current().nextBytes(value);
            byte[] key = DurableStorageBenchmark.key(ThreadLocalRandom.current().nextLong(keys));
            db.run(tr -> {
              tr.set(key, value);
              return null;
            });
            commits.increment();
          }
        }, pool));
      }
      TimeUnit.SECONDS.sleep(3);
      double before = DurableStorageBenchmark.measureWindow(commits, seconds);
      System.out.printf("before: %,.0f commits/s over %d s  [%s]%n", before, seconds, DurableStorageBenchmark.load());

      long c0 = commits.sum();
      long t0 = System.nanoTime();
      BackupInfo info = db.backup(work.resolve("backup")).get(30, TimeUnit.MINUTES);
      double during = (commits.sum() - c0) / ((System.nanoTime() - t0) / 1e9);
      System.out.printf("backup: %.2f s, version %d, %d files, %s; during it: %,.0f commits/s  [%s]%n",
          info.duration().toMillis() / 1e3, info.version(), info.files(), DurableStorageBenchmark.mib(info.bytes()),
          during, DurableStorageBenchmark.load());

      double after = DurableStorageBenchmark.measureWindow(commits, seconds);
      System.out.printf("after: %,.0f commits/s over %d s  [%s]%n", after, seconds, DurableStorageBenchmark.load());
      stop.set(true);
      CompletableFuture.allOf(running.toArray(new CompletableFuture[0])).join();
      pool.shutdown();
    }
    Path restored = work.resolve("restored");
    BackupInfo r = EmbeddedDatabase.restore(work.resolve("backup"), restored);
    long t1 = System.nanoTime();
    try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.durable(restored))) {
      byte[] count = db.read(tr -> tr.get("bench/count".getBytes(java.nio.charset.StandardCharsets.US_ASCII)).join());
      System.out.printf("restore: %.2f s (%s copied and checked); open of the restored directory %.2f s, count key %s"
          + "  [%s]%n", r.duration().toMillis() / 1e3, DurableStorageBenchmark.mib(r.bytes()),
          (System.nanoTime() - t1) / 1e9, count == null ? "missing" : "present", DurableStorageBenchmark.load());
    }
    DurableStorageBenchmark.cleanUp(work);
    if (!loaded.reused()) {
      DurableStorageBenchmark.cleanUp(loaded.dir());
    }
  }
}
