package io.github.fdbcoord.bench;

import io.github.fdbcoord.embedded.EmbeddedDatabase;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.RocksDB;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * Reopen after {@code kill -9} under a sustained write load: the durable engine against RocksDB alone,
 * alternating in one run. The parent loads N keys (16-byte keys, 100-byte values) into an engine
 * directory and copies its storage for RocksDB alone; then, per round and per contender, a child JVM
 * opens the store and writes with {@code bench.writers} (default 8) threads, each commit 100 random keys
 * of the loaded range (the engine: durable commits; RocksDB: write batches with its WAL, unsynced, as a
 * RocksDB user's default), for {@code bench.seconds} (default 30) after it reports it is writing; the
 * parent kills it with SIGKILL and a second child times the open ({@code EmbeddedDatabase.open}, or
 * {@code RocksDB.open} with the engine's table options) and one read, and prints the process's CPU time
 * during the open (a figure a loaded machine disturbs less than the wall time) and, for the engine, how
 * long a close right after takes (it finishes moving the recovered log tail into RocksDB).
 *
 * <p>Run: {@code bench/run.sh embedded CrashReopenBenchmark 10m}; {@code bench.rounds} (default 3),
 * {@code bench.openJvmArgs} (JVM options of the reopening child, e.g. a flight recording),
 * {@code bench.compactAfterLogBytes} (the engine's log truncation threshold, passed to the children).
 */
public final class CrashReopenBenchmark {
  private static final int KEYS_PER_COMMIT = 100;

  private CrashReopenBenchmark() {}

  public static void main(String[] args) throws Exception {
    switch (args[0]) {
      case "write-engine" -> writeEngine(Paths.get(args[1]), Long.parseLong(args[2]));
      case "write-rocks" -> writeRocks(Paths.get(args[1]), Long.parseLong(args[2]));
      case "open-engine" -> openEngine(Paths.get(args[1]));
      case "open-rocks" -> openRocks(Paths.get(args[1]));
      default -> run(args[0]);
    }
    System.exit(0);
  }

  private static void run(String count) throws Exception {
    long keys = count.toLowerCase().endsWith("m") ? Long.parseLong(count.substring(0, count.length() - 1)) * 1_000_000
        : Long.parseLong(count);
    DurableStorageBenchmark.header("CrashReopenBenchmark " + keys);
    Path dir = DurableStorageBenchmark.freshDirectory("crash-reopen-" + keys);
    Path rocks = Paths.get(dir + "-rocks");
    try {
      DurableStorageBenchmark.load(dir, keys);
      exec(List.of("cp", "-r", dir.resolve("storage").toString(), rocks.toString()));
      int rounds = Integer.getInteger("bench.rounds", 3);
      List<String> engine = new ArrayList<>();
      List<String> alone = new ArrayList<>();
      for (int r = 1; r <= rounds; r++) {
        engine.add(round("engine", dir, keys, r));
        alone.add(round("rocks", rocks, keys, r));
      }
      System.out.println("summary, reopen after kill -9 (ms): engine " + engine + ", RocksDB alone " + alone);
    } finally {
      DurableStorageBenchmark.cleanUp(dir);
      DurableStorageBenchmark.cleanUp(rocks);
    }
  }

  /** One kill-and-reopen: returns the open time the second child printed. */
  private static String round(String who, Path dir, long keys, int round) throws Exception {
    Process writer = child("write-" + who, dir.toString(), Long.toString(keys));
    BufferedReader out = new BufferedReader(new InputStreamReader(writer.getInputStream(), StandardCharsets.UTF_8));
    String line;
    while ((line = out.readLine()) != null && !line.startsWith("WRITING")) {
      System.out.println("  " + who + " writer: " + line);
    }
    if (line == null) {
      throw new IllegalStateException(who + " writer ended before writing");
    }
    Thread pump = new Thread(() -> out.lines().forEach(l -> System.out.println("  " + who + " writer: " + l)));
    pump.setDaemon(true);
    pump.start();
    TimeUnit.SECONDS.sleep(Integer.getInteger("bench.seconds", 30));
    writer.destroyForcibly(); // SIGKILL
    writer.waitFor();
    System.out.printf("round %d, %s: killed (SIGKILL) after %d s of writes; %s on disk  [%s]%n", round, who,
        Integer.getInteger("bench.seconds", 30), DurableStorageBenchmark.mib(DurableStorageBenchmark.dirSize(dir)),
        DurableStorageBenchmark.load());
    Process opener = child("open-" + who, dir.toString());
    String result = null;
    try (BufferedReader r = new BufferedReader(new InputStreamReader(opener.getInputStream(), StandardCharsets.UTF_8))) {
      while ((line = r.readLine()) != null) {
        System.out.println("  " + who + " open: " + line);
        if (line.startsWith("OPEN_MS ")) {
          result = line.substring(8).trim();
        }
      }
    }
    if (opener.waitFor() != 0 || result == null) {
      throw new IllegalStateException(who + " reopen failed");
    }
    System.out.printf("round %d, %s: reopen %s ms  [%s]%n", round, who, result, DurableStorageBenchmark.load());
    return result;
  }

  private static Process child(String... args) throws Exception {
    String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    List<String> command = new ArrayList<>(List.of(java, "-Xmx" + System.getProperty("bench.childXmx", "2g")));
    String compactAfter = System.getProperty("bench.compactAfterLogBytes");
    if (compactAfter != null) {
      // The writer's log is truncated at this size: what its kill leaves to replay.
      command.add("-Dbench.compactAfterLogBytes=" + compactAfter);
    }
    String openOptions = System.getProperty("bench.openJvmArgs");
    if (openOptions != null && args[0].startsWith("open-")) {
      // e.g. -XX:StartFlightRecording=filename=open.jfr,settings=profile: where a reopen spends its time.
      command.addAll(List.of(openOptions.split(" ")));
    }
    command.addAll(List.of("-cp", System.getProperty("java.class.path"), CrashReopenBenchmark.class.getName()));
    command.addAll(List.of(args));
    return new ProcessBuilder(command).redirectErrorStream(true).start();
  }

  private static void exec(List<String> command) throws Exception {
    if (new ProcessBuilder(command).inheritIO().start().waitFor() != 0) {
      throw new IllegalStateException("failed: " + command);
    }
  }

  private static Runnable writerLoop(LongAdder commits, WriteOnce once) {
    return () -> {
      try {
        while (true) {
          once.write(ThreadLocalRandom.current());
          commits.increment();
        }
      } catch (Exception e) {
        e.printStackTrace();
      }
    };
  }

  private interface WriteOnce {
    void write(ThreadLocalRandom random) throws Exception;
  }

  private static void startWriters(LongAdder commits, WriteOnce once) throws InterruptedException {
    for (int w = 0; w < Integer.getInteger("bench.writers", 8); w++) {
      Thread t = new Thread(writerLoop(commits, once), "writer-" + w);
      t.setDaemon(true);
      t.start();
    }
    System.out.println("WRITING");
    long last = 0;
    while (true) {
      TimeUnit.SECONDS.sleep(5);
      long now = commits.sum();
      System.out.printf("%,d commits of %d keys in the last 5 s  [%s]%n", now - last, KEYS_PER_COMMIT,
          DurableStorageBenchmark.load());
      last = now;
    }
  }

  private static void writeEngine(Path dir, long keys) throws Exception {
    EmbeddedDatabase db = EmbeddedDatabase.open(DurableStorageBenchmark.options(dir).build());
    LongAdder commits = new LongAdder();
    startWriters(commits, random -> db.run(tr -> {
      for (int i = 0; i < KEYS_PER_COMMIT; i++) {
        byte[] value = new byte[100];
        random.nextBytes(value);
        tr.set(DurableStorageBenchmark.key(random.nextLong(keys)), value);
      }
      return null;
    }));
  }

  private static void writeRocks(Path dir, long keys) throws Exception {
    RocksDB.loadLibrary();
    DurableStorageBenchmark.withRocksAlone(dir, (rocks, handles) -> {
      ColumnFamilyHandle data = handles.get(0);
      LongAdder commits = new LongAdder();
      try (WriteOptions options = new WriteOptions()) {
        startWriters(commits, random -> {
          try (WriteBatch batch = new WriteBatch()) {
            for (int i = 0; i < KEYS_PER_COMMIT; i++) {
              byte[] value = new byte[100];
              random.nextBytes(value);
              batch.put(data, DurableStorageBenchmark.key(random.nextLong(keys)), value);
            }
            rocks.write(options, batch);
          }
        });
      }
    });
  }

  private static void openEngine(Path dir) throws Exception {
    RocksDB.loadLibrary();
    long t0 = System.nanoTime();
    long cpu0 = processCpuNanos();
    EmbeddedDatabase db = EmbeddedDatabase.open(DurableStorageBenchmark.options(dir).build());
    long ms = (System.nanoTime() - t0) / 1_000_000;
    long cpuMs = (processCpuNanos() - cpu0) / 1_000_000;
    byte[] v = db.read(tr -> tr.get(DurableStorageBenchmark.key(0)).join());
    System.out.println("read back key 0: " + (v == null ? "missing" : v.length + " bytes"));
    long c0 = System.nanoTime();
    // Moves whatever the open left for the background into RocksDB, flushes it and truncates the log.
    db.close();
    System.out.printf("open: %d ms of the process's CPU time; close right after: %d ms%n", cpuMs,
        (System.nanoTime() - c0) / 1_000_000);
    System.out.println("OPEN_MS " + ms);
  }

  /** CPU time of every thread of this process (RocksDB's background threads included). */
  private static long processCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
        .getOperatingSystemMXBean()).getProcessCpuTime();
  }

  private static void openRocks(Path dir) throws Exception {
    RocksDB.loadLibrary();
    long t0 = System.nanoTime();
    long cpu0 = processCpuNanos();
    DurableStorageBenchmark.withRocksAlone(dir, (rocks, handles) -> {
      long ms = (System.nanoTime() - t0) / 1_000_000;
      System.out.printf("open: %d ms of the process's CPU time%n", (processCpuNanos() - cpu0) / 1_000_000);
      byte[] v = rocks.get(handles.get(0), DurableStorageBenchmark.key(0));
      System.out.println("read back key 0: " + (v == null ? "missing" : v.length + " bytes"));
      System.out.println("OPEN_MS " + ms);
    });
  }
}
