package io.github.fdbcoord.bench;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.Transaction;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.embedded.EmbeddedOptions;
import io.github.fdbcoord.embedded.storage.RocksTuning;
import org.rocksdb.Cache;
import org.rocksdb.BloomFilter;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.CompressionType;
import org.rocksdb.DBOptions;
import org.rocksdb.FlushOptions;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Stream;

/**
 * The durable engine (commit log + RocksDB beneath the MVCC window) at sizes beyond memory, and
 * RocksDB alone as the peer. One mode per run:
 *
 * <ul>
 *   <li>{@code reopen <keys>}: loads N keys (16-byte keys, 100-byte random values) into a fresh
 *       directory, closes it, then a child JVM ({@code -Xmx} from {@code bench.childXmx}, default 1g)
 *       times {@code EmbeddedDatabase.open}, reads keys back, reports heap in use after GC and RSS,
 *       then times RocksDB alone opening the engine's {@code storage/} directory.</li>
 *   <li>{@code reads <keys|dir>}: point reads/s on a durable store of N keys (default 10M), a hot set
 *       of 100,000 keys read at random by 2 threads, 100 reads per transaction; then uniform reads
 *       over all N keys for comparison.</li>
 *   <li>{@code stall <keys|dir>}: 64 writers of single-key commits on a store of N keys (default 10M)
 *       for {@code bench.seconds} (default 60); every acknowledgement's time is recorded; prints the
 *       longest gap between two consecutive acknowledgements (all writers), commit latency p50/p99/max
 *       and commits/s.</li>
 *   <li>{@code dirsize}: 1,000,000 overwrites of 1,000 keys (100-byte values), then a clear of
 *       everything; the data directory's size after each step and after close/reopen, for the engine
 *       and for plain RocksDB (WAL on), with the ratios.</li>
 *   <li>{@code commits}: durable single-key commits/s, 64 writers, against RocksDB's synced puts
 *       ({@code setSync(true)}, 64 threads), alternating rounds in one run; the engine's writers both as
 *       asynchronous loops on its executor and as 64 threads each waiting in {@code db.run}.</li>
 * </ul>
 *
 * <p>Run: {@code java -Xmx4g -cp core/target/classes:core/target/test-classes:<test classpath>
 * io.github.fdbcoord.bench.DurableStorageBenchmark <mode> [arg]}. A {@code <keys|dir>} argument that
 * names an existing directory loaded by {@code reopen} (with {@code -Dbench.keep=true}) is reused and
 * kept. Properties: {@code bench.dataRoot} (default /work/bench-data: every run uses a fresh directory
 * under it and deletes it afterwards unless {@code bench.keep=true}), {@code bench.seconds},
 * {@code bench.warmup}, {@code bench.writers}, {@code bench.loadWriters} (default 4),
 * {@code bench.loadBatch} (keys per load transaction, default 10,000), {@code bench.childXmx},
 * {@code bench.cacheBytes} (the engine's storageCacheBytes; default: the engine's default),
 * {@code bench.rounds}, {@code bench.hotKeys}, {@code bench.readThreads}, {@code bench.overwrites},
 * {@code bench.valueBytes}.
 */
public final class DurableStorageBenchmark {
  private static final Path DATA_ROOT = Paths.get(System.getProperty("bench.dataRoot", "/work/bench-data"));
  private static final boolean KEEP = Boolean.getBoolean("bench.keep");
  private static final int VALUE_BYTES = Integer.getInteger("bench.valueBytes", 100);
  /** Holds the number of keys a directory was loaded with, so later runs can reuse it. */
  private static final byte[] COUNT_KEY = "bench/count".getBytes(StandardCharsets.US_ASCII);

  /** Every key {@link #key} makes lies in [KEYS_BEGIN, KEYS_END). */
  private static final byte[] KEYS_BEGIN = ByteBuffer.allocate(8).putLong(0x6b65792d00000000L).array();
  private static final byte[] KEYS_END = ByteBuffer.allocate(8).putLong(0x6b65792d00000001L).array();

  private DurableStorageBenchmark() {}

  public static void main(String[] args) throws Exception {
    if (args.length == 0) {
      System.err.println("usage: DurableStorageBenchmark reopen <keys> | reads <keys|dir> | stall <keys|dir>"
          + " | dirsize | commits");
      System.exit(2);
    }
    String mode = args[0];
    if (mode.equals("open-child")) {
      openChild(Paths.get(args[1]), Long.parseLong(args[2]));
      return;
    }
    header("DurableStorageBenchmark " + String.join(" ", args));
    switch (mode) {
      case "reopen" -> reopen(args.length > 1 ? parseCount(args[1]) : 1_000_000);
      case "reads" -> reads(args.length > 1 ? args[1] : "10000000");
      case "stall" -> stall(args.length > 1 ? args[1] : "10000000");
      case "dirsize" -> dirsize();
      case "commits" -> commits();
      default -> {
        System.err.println("unknown mode " + mode);
        System.exit(2);
      }
    }
    System.exit(0);
  }

  // ---------------------------------------------------------------------------------------------
  // reopen

  private static void reopen(long keys) throws Exception {
    Path dir = freshDirectory("reopen-" + keys);
    try {
      load(dir, keys);
      String xmx = System.getProperty("bench.childXmx", "1g");
      String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
      List<String> command = new ArrayList<>(List.of(java, "-Xmx" + xmx));
      if (System.getProperty("bench.cacheBytes") != null) {
        command.add("-Dbench.cacheBytes=" + System.getProperty("bench.cacheBytes"));
      }
      command.addAll(List.of("-cp", System.getProperty("java.class.path"), DurableStorageBenchmark.class.getName(),
          "open-child", dir.toString(), Long.toString(keys)));
      System.out.printf("child JVM: %s ... open-child %s %d%n", String.join(" ", command.subList(0, 2)), dir, keys);
      Process child = new ProcessBuilder(command).inheritIO().start();
      int rc = child.waitFor();
      if (rc != 0) {
        throw new IllegalStateException("child JVM exited with " + rc);
      }
    } finally {
      cleanUp(dir);
    }
  }

  /** In the child JVM: times the engine's open, then RocksDB's alone, on the same directory. */
  private static void openChild(Path dir, long keys) throws Exception {
    header("open-child " + dir);
    long[] sample = new long[5];
    for (int i = 0; i < sample.length; i++) {
      sample[i] = ThreadLocalRandom.current().nextLong(keys);
    }
    // A fresh process pays for loading RocksDB's native library once (extracting it to a temporary
    // file): timed on its own, so the two opens below compare the same work.
    long tLib = System.nanoTime();
    RocksDB.loadLibrary();
    long libNanos = System.nanoTime() - tLib;
    long t0 = System.nanoTime();
    EmbeddedDatabase db = EmbeddedDatabase.open(options(dir).build());
    long openNanos = System.nanoTime() - t0;
    long t1 = System.nanoTime();
    int found = db.read(tr -> {
      int n = 0;
      for (long i : sample) {
        byte[] v = tr.get(key(i)).join();
        if (v != null && v.length == VALUE_BYTES) {
          n++;
        }
      }
      return n;
    });
    long readNanos = System.nanoTime() - t1;
    long recorded = storedCount(db);
    System.out.printf("RocksDB native library load (once per process): %.0f ms%n", libNanos / 1e6);
    System.out.printf("engine open (EmbeddedDatabase.open): %.0f ms (%.0f ms with the library load), then %d of %d"
        + " random keys read back in %.1f ms (store records %,d keys)  [%s]%n", openNanos / 1e6,
        (openNanos + libNanos) / 1e6, found, sample.length, readNanos / 1e6, recorded, load());
    if (found != sample.length || recorded != keys) {
      throw new IllegalStateException("data missing after reopen");
    }
    memoryReport("engine open");
    long t2 = System.nanoTime();
    db.close();
    System.out.printf("engine close: %.0f ms%n", (System.nanoTime() - t2) / 1e6);

    // RocksDB alone on the engine's storage directory, with the engine's table settings.
    Path storage = dir.resolve("storage");
    long t3 = System.nanoTime();
    withRocksAlone(storage, (rocks, handles) -> {
      long rocksOpen = System.nanoTime() - t3;
      int rocksFound = 0;
      long t4 = System.nanoTime();
      for (long i : sample) {
        byte[] v = rocks.get(handles.get(0), key(i));
        if (v != null && v.length == VALUE_BYTES) {
          rocksFound++;
        }
      }
      System.out.printf("RocksDB alone open (listColumnFamilies + RocksDB.open of %s, same table options): %.0f ms,"
          + " then %d of %d keys read back in %.1f ms%n", storage, rocksOpen / 1e6, rocksFound, sample.length,
          (System.nanoTime() - t4) / 1e6);
      memoryReport("RocksDB alone open (engine closed)");
    });
  }

  // ---------------------------------------------------------------------------------------------
  // reads

  private static void reads(String arg) throws Exception {
    Loaded loaded = loadedOrLoad(arg, "reads");
    int hotKeys = Integer.getInteger("bench.hotKeys", 100_000);
    int threads = Integer.getInteger("bench.readThreads", 2);
    try (EmbeddedDatabase db = EmbeddedDatabase.open(options(loaded.dir).build())) {
      long keys = storedCount(db);
      System.out.printf("store: %,d keys, %s on disk, storageCacheBytes %d MiB%n", keys, mib(dirSize(loaded.dir)),
          db.embeddedOptions().storageCacheBytes() >> 20);
      byte[][] hot = new byte[(int) Math.min(hotKeys, keys)][];
      for (int i = 0; i < hot.length; i++) {
        hot[i] = key(ThreadLocalRandom.current().nextLong(keys));
      }
      double hotRate = pointReads(db, threads, () -> hot[ThreadLocalRandom.current().nextInt(hot.length)]);
      System.out.printf("durable, %,d keys stored: %d threads, point reads (100 per transaction) of a hot set of %,d"
          + " random keys: %,.0f /s  [%s]%n", keys, threads, hot.length, hotRate, load());
      double uniformRate = pointReads(db, threads, () -> key(ThreadLocalRandom.current().nextLong(keys)));
      System.out.printf("durable, %,d keys stored: %d threads, point reads (100 per transaction) uniform over all"
          + " keys: %,.0f /s  [%s]%n", keys, threads, uniformRate, load());
      memoryReport("after reads");
    }
    try {
      rocksAloneReads(loaded.dir.resolve("storage"), threads, hotKeys);
    } finally {
      if (!loaded.reused) {
        cleanUp(loaded.dir);
      }
    }
  }

  /** The same reads from RocksDB alone on the engine's storage directory (same table options), for comparison. */
  private static void rocksAloneReads(Path storage, int threads, int hotKeys) throws Exception {
    withRocksAlone(storage, (rocks, handles) -> {
      ColumnFamilyHandle data = handles.get(0);
      byte[] count = null;
      for (ColumnFamilyHandle h : handles) {
        count = count != null ? count : rocks.get(h, COUNT_KEY);
      }
      long keys = ByteBuffer.wrap(count).getLong();
      System.out.printf("RocksDB alone on %s: levels%n%s", storage, rocks.getProperty(data, "rocksdb.levelstats"));
      System.out.printf("RocksDB alone: pending compaction bytes %s%n",
          rocks.getProperty(data, "rocksdb.estimate-pending-compaction-bytes"));
      byte[][] hot = new byte[(int) Math.min(hotKeys, keys)][];
      for (int i = 0; i < hot.length; i++) {
        hot[i] = key(ThreadLocalRandom.current().nextLong(keys));
      }
      for (String which : List.of("hot set", "uniform")) {
        LongAdder reads = new LongAdder();
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> running = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          Thread thread = new Thread(() -> {
            try (org.rocksdb.ReadOptions ro = new org.rocksdb.ReadOptions()) {
              while (!stop.get()) {
                for (int i = 0; i < 100; i++) {
                  byte[] k = which.equals("hot set") ? hot[ThreadLocalRandom.current().nextInt(hot.length)]
                      : key(ThreadLocalRandom.current().nextLong(keys));
                  if (rocks.get(data, ro, k) == null) {
                    throw new IllegalStateException("missing key");
                  }
                }
                reads.add(100);
              }
            } catch (org.rocksdb.RocksDBException e) {
              throw new IllegalStateException(e);
            }
          });
          thread.start();
          running.add(thread);
        }
        double rate = measure(reads, "point reads");
        stop.set(true);
        for (Thread thread : running) {
          thread.join();
        }
        System.out.printf("RocksDB alone, %,d keys stored: %d threads, point reads (RocksDB.get) %s: %,.0f /s  [%s]%n",
            keys, threads, which.equals("hot set") ? "of a hot set of " + hot.length + " random keys"
                : "uniform over all keys", rate, load());
      }
      System.out.printf("RocksDB alone: levels after the reads%n%s", rocks.getProperty(data, "rocksdb.levelstats"));
      handles.forEach(ColumnFamilyHandle::close);
    });
  }

  /** What a benchmark does with RocksDB alone, opened on the engine's storage directory. */
  interface RocksAloneUse {
    void accept(RocksDB rocks, List<ColumnFamilyHandle> handles) throws Exception;
  }

  /** Opens RocksDB alone on the engine's storage directory, with the storage's own table options. */
  static void withRocksAlone(Path storage, RocksAloneUse use) throws Exception {
    List<byte[]> names;
    try (Options listOptions = new Options()) {
      names = RocksDB.listColumnFamilies(listOptions, storage.toString());
    }
    try (Cache cache = RocksTuning.blockCache(cacheBytes());
        BloomFilter bloom = new BloomFilter(10, false);
        ColumnFamilyOptions family = new ColumnFamilyOptions()
            .setTableFormatConfig(RocksTuning.tableConfig(cache, bloom))
            .setCompressionType(CompressionType.LZ4_COMPRESSION).setLevelCompactionDynamicLevelBytes(true);
        DBOptions dbOptions = new DBOptions().setAtomicFlush(true).setMaxBackgroundJobs(2)) {
      List<ColumnFamilyDescriptor> descriptors = new ArrayList<>();
      for (byte[] name : names) {
        descriptors.add(new ColumnFamilyDescriptor(name, family));
      }
      List<ColumnFamilyHandle> handles = new ArrayList<>();
      try (RocksDB rocks = RocksDB.open(dbOptions, storage.toString(), descriptors, handles)) {
        try {
          use.accept(rocks, handles);
        } finally {
          handles.forEach(ColumnFamilyHandle::close);
        }
      }
    }
  }

  private static double pointReads(Database db, int threads, java.util.function.Supplier<byte[]> nextKey)
      throws Exception {
    LongAdder reads = new LongAdder();
    AtomicBoolean stop = new AtomicBoolean();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    List<CompletableFuture<Void>> running = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      running.add(CompletableFuture.runAsync(() -> {
        while (!stop.get()) {
          try (Transaction tr = db.createTransaction()) {
            for (int i = 0; i < 100; i++) {
              if (tr.get(nextKey.get()).join() == null) {
                throw new IllegalStateException("missing key");
              }
            }
          }
          reads.add(100);
        }
      }, pool));
    }
    double rate = measure(reads, "point reads");
    stop.set(true);
    CompletableFuture.allOf(running.toArray(new CompletableFuture[0])).join();
    pool.shutdown();
    return rate;
  }

  // ---------------------------------------------------------------------------------------------
  // stall

  private static void stall(String arg) throws Exception {
    Loaded loaded = loadedOrLoad(arg, "stall");
    int writers = Integer.getInteger("bench.writers", 64);
    int seconds = Integer.getInteger("bench.seconds", 60);
    int warmup = Integer.getInteger("bench.warmup", 2);
    try (EmbeddedDatabase db = EmbeddedDatabase.open(options(loaded.dir).build())) {
      long keys = storedCount(db);
      long sizeBefore = dirSize(loaded.dir);
      System.out.printf("store: %,d keys, %s on disk; %d writers of single-key commits (%d-byte values, random"
          + " existing keys) for %d s after %d s of warm-up  [%s]%n", keys, mib(sizeBefore), writers, VALUE_BYTES,
          seconds, warmup, load());
      AtomicBoolean recording = new AtomicBoolean();
      AtomicBoolean stop = new AtomicBoolean();
      LongList[] acks = new LongList[writers];
      LongList[] latencies = new LongList[writers];
      List<CompletableFuture<Void>> loops = new ArrayList<>();
      for (int w = 0; w < writers; w++) {
        acks[w] = new LongList();
        latencies[w] = new LongList();
        CompletableFuture<Void> done = new CompletableFuture<>();
        loops.add(done);
        stallLoop(db, keys, acks[w], latencies[w], recording, stop, done);
      }
      TimeUnit.SECONDS.sleep(warmup);
      long start = System.nanoTime();
      recording.set(true);
      long lastPrint = start;
      long printed = 0;
      while (System.nanoTime() - start < seconds * 1_000_000_000L) {
        TimeUnit.MILLISECONDS.sleep(200);
        if (System.nanoTime() - lastPrint >= 10_000_000_000L) {
          long n = 0;
          for (LongList l : acks) {
            n += l.sizeRacy();
          }
          System.out.printf("  %3.0f s: %,.0f commits/s over the last 10 s, %s on disk  [%s]%n",
              (System.nanoTime() - start) / 1e9, (n - printed) / ((System.nanoTime() - lastPrint) / 1e9),
              mib(dirSize(loaded.dir)), load());
          printed = n;
          lastPrint = System.nanoTime();
        }
      }
      recording.set(false);
      long end = System.nanoTime();
      stop.set(true);
      CompletableFuture.allOf(loops.toArray(new CompletableFuture[0])).get(60, TimeUnit.SECONDS);

      int total = 0;
      for (LongList l : acks) {
        total += l.size;
      }
      long[] all = new long[total + 2];
      long[] lat = new long[total];
      int p = 0;
      int q = 0;
      for (int w = 0; w < writers; w++) {
        System.arraycopy(acks[w].values, 0, all, p, acks[w].size);
        p += acks[w].size;
        System.arraycopy(latencies[w].values, 0, lat, q, latencies[w].size);
        q += latencies[w].size;
      }
      all[p++] = start; // a stall at the very beginning or end of the window counts too
      all[p++] = end;
      Arrays.sort(all);
      Arrays.sort(lat);
      long[] gaps = new long[all.length - 1];
      for (int i = 1; i < all.length; i++) {
        gaps[i - 1] = all[i] - all[i - 1];
      }
      // The five longest gaps and when they started.
      Integer[] order = new Integer[gaps.length];
      for (int i = 0; i < order.length; i++) {
        order[i] = i;
      }
      Arrays.sort(order, (a, b) -> Long.compare(gaps[b], gaps[a]));
      StringBuilder worst = new StringBuilder();
      for (int i = 0; i < Math.min(5, order.length); i++) {
        worst.append(String.format("%s%.1f ms at %.1f s", i == 0 ? "" : ", ", gaps[order[i]] / 1e6,
            (all[order[i]] - start) / 1e9));
      }
      long over50 = Arrays.stream(gaps).filter(g -> g > 50_000_000L).count();
      System.out.printf("durable, %,d keys stored, %d writers: %,.0f commits/s over %d s; longest gap between two"
          + " consecutive acknowledgements %.1f ms (gaps > 50 ms: %d); commit latency p50 %.2f ms, p99 %.2f ms,"
          + " p99.9 %.2f ms, max %.1f ms  [%s]%n", keys, writers, total / ((end - start) / 1e9), seconds,
          gaps[order[0]] / 1e6, over50, pct(lat, 0.50) / 1e6, pct(lat, 0.99) / 1e6, pct(lat, 0.999) / 1e6,
          lat.length == 0 ? 0 : lat[lat.length - 1] / 1e6, load());
      System.out.println("longest gaps: " + worst);
      System.out.printf("data directory after the run: %s%n", mib(dirSize(loaded.dir)));
      memoryReport("after stall run");
    } finally {
      if (!loaded.reused) {
        cleanUp(loaded.dir);
      }
    }
  }

  private static void stallLoop(EmbeddedDatabase db, long keys, LongList acks, LongList latencies,
      AtomicBoolean recording, AtomicBoolean stop, CompletableFuture<Void> done) {
    if (stop.get()) {
      done.complete(null);
      return;
    }
    byte[] value = new byte[VALUE_BYTES];
    ThreadLocalRandom.current().nextBytes(value);
    Transaction tr = db.createTransaction();
    tr.set(key(ThreadLocalRandom.current().nextLong(keys)), value);
    long t0 = System.nanoTime();
    tr.commit().whenComplete((v, t) -> {
      long now = System.nanoTime();
      tr.close();
      if (t != null) {
        done.completeExceptionally(t);
        return;
      }
      if (recording.get()) {
        acks.add(now);
        latencies.add(now - t0);
      }
      db.getExecutor().execute(() -> stallLoop(db, keys, acks, latencies, recording, stop, done));
    });
  }

  private static long pct(long[] sorted, double p) {
    if (sorted.length == 0) {
      return 0;
    }
    return sorted[(int) Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
  }

  /** A growable array of longs written by one writer's callbacks at a time (each waits for the previous). */
  private static final class LongList {
    long[] values = new long[1 << 16];
    volatile int size;

    void add(long v) {
      if (size == values.length) {
        values = Arrays.copyOf(values, values.length * 2);
      }
      values[size] = v;
      size = size + 1;
    }

    int sizeRacy() {
      return size;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // dirsize

  private static void dirsize() throws Exception {
    int overwrites = Integer.getInteger("bench.overwrites", 1_000_000);
    int keySpace = 1000;
    int writers = Integer.getInteger("bench.writers", 64);
    Path engineDir = freshDirectory("dirsize-engine");
    Path rocksDir = freshDirectory("dirsize-rocksdb");
    try {
      long[] engine = new long[4];
      long t0 = System.nanoTime();
      try (EmbeddedDatabase db = EmbeddedDatabase.open(options(engineDir).build())) {
        AtomicLong issued = new AtomicLong();
        List<CompletableFuture<Void>> loops = new ArrayList<>();
        for (int w = 0; w < writers; w++) {
          CompletableFuture<Void> done = new CompletableFuture<>();
          loops.add(done);
          overwriteLoop(db, issued, overwrites, keySpace, done);
        }
        CompletableFuture.allOf(loops.toArray(new CompletableFuture[0])).get(30, TimeUnit.MINUTES);
        double secs = (System.nanoTime() - t0) / 1e9;
        engine[0] = dirSize(engineDir);
        System.out.printf("engine: %,d single-key overwrites of %,d keys (%d writers) in %.1f s (%,.0f /s); data"
            + " directory %s  [%s]%n", overwrites, keySpace, writers, secs, overwrites / secs, mib(engine[0]), load());
        TimeUnit.SECONDS.sleep(8); // past the MVCC window: the applier has moved everything into RocksDB
        engine[1] = dirSize(engineDir);
        System.out.printf("engine: 8 s later: %s%n", mib(engine[1]));
        db.run(tr -> {
          tr.clear(KEYS_BEGIN, KEYS_END);
          return null;
        });
        TimeUnit.SECONDS.sleep(8);
        engine[2] = dirSize(engineDir);
        System.out.printf("engine: after clearing everything (+8 s): %s%n", mib(engine[2]));
      }
      long afterClose = dirSize(engineDir);
      try (EmbeddedDatabase db = EmbeddedDatabase.open(options(engineDir).build())) {
        engine[3] = dirSize(engineDir);
        long remaining = db.read(tr -> (long) tr.getRange(KEYS_BEGIN, KEYS_END).asList().join().size());
        System.out.printf("engine: after close %s, after reopen %s (%d keys remain)%n", mib(afterClose), mib(engine[3]),
            remaining);
      }
      listFiles(engineDir);

      long[] rocks = new long[4];
      RocksDB.loadLibrary();
      try (Options opts = new Options().setCreateIfMissing(true);
          WriteOptions wo = new WriteOptions()) {
        RocksDB db = RocksDB.open(opts, rocksDir.toString());
        long t1 = System.nanoTime();
        byte[] value = new byte[VALUE_BYTES];
        for (int i = 0; i < overwrites; i++) {
          ThreadLocalRandom.current().nextBytes(value);
          db.put(wo, key(ThreadLocalRandom.current().nextInt(keySpace)), value);
        }
        double secs = (System.nanoTime() - t1) / 1e9;
        rocks[0] = dirSize(rocksDir);
        System.out.printf("RocksDB (default options, WAL on, unsynced puts, 1 thread): %,d overwrites in %.1f s;"
            + " data directory %s%n", overwrites, secs, mib(rocks[0]));
        TimeUnit.SECONDS.sleep(8);
        rocks[1] = dirSize(rocksDir);
        System.out.printf("RocksDB: 8 s later: %s%n", mib(rocks[1]));
        db.deleteRange(wo, KEYS_BEGIN, KEYS_END);
        TimeUnit.SECONDS.sleep(8);
        rocks[2] = dirSize(rocksDir);
        System.out.printf("RocksDB: after deleteRange of everything (+8 s): %s%n", mib(rocks[2]));
        db.close();
        long rocksAfterClose = dirSize(rocksDir);
        db = RocksDB.open(opts, rocksDir.toString());
        rocks[3] = dirSize(rocksDir);
        System.out.printf("RocksDB: after close %s, after reopen %s%n", mib(rocksAfterClose), mib(rocks[3]));
        db.close();
      }
      listFiles(rocksDir);
      String[] steps = {"after the overwrites", "8 s after the overwrites", "after the clear", "after close/reopen"};
      for (int i = 0; i < 4; i++) {
        System.out.printf("dirsize %-25s engine %s, RocksDB %s: %.2fx%n", steps[i] + ":", mib(engine[i]), mib(rocks[i]),
            engine[i] / (double) rocks[i]);
      }
    } finally {
      cleanUp(engineDir);
      cleanUp(rocksDir);
    }
  }

  private static void overwriteLoop(EmbeddedDatabase db, AtomicLong issued, long total, int keySpace,
      CompletableFuture<Void> done) {
    if (issued.getAndIncrement() >= total) {
      done.complete(null);
      return;
    }
    byte[] value = new byte[VALUE_BYTES];
    ThreadLocalRandom.current().nextBytes(value);
    Transaction tr = db.createTransaction();
    tr.set(key(ThreadLocalRandom.current().nextInt(keySpace)), value);
    tr.commit().whenComplete((v, t) -> {
      tr.close();
      if (t != null) {
        done.completeExceptionally(t);
        return;
      }
      db.getExecutor().execute(() -> overwriteLoop(db, issued, total, keySpace, done));
    });
  }

  private static void listFiles(Path dir) throws IOException {
    try (Stream<Path> s = Files.walk(dir)) {
      StringBuilder b = new StringBuilder("  files of " + dir.getFileName() + ":");
      s.filter(Files::isRegularFile).sorted().forEach(p -> {
        try {
          b.append(String.format(" %s=%,d", dir.relativize(p), Files.size(p)));
        } catch (IOException e) {
          b.append(" ").append(dir.relativize(p)).append("=?");
        }
      });
      System.out.println(b);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // commits

  private static void commits() throws Exception {
    int writers = Integer.getInteger("bench.writers", 64);
    int rounds = Integer.getInteger("bench.rounds", 3);
    int seconds = Integer.getInteger("bench.seconds", 10);
    Path engineDir = freshDirectory("commits-engine");
    Path rocksDir = freshDirectory("commits-rocksdb");
    RocksDB.loadLibrary();
    double engineSum = 0;
    double blockingSum = 0;
    double rocksSum = 0;
    try (EmbeddedDatabase db = EmbeddedDatabase.open(options(engineDir).build());
        Options opts = new Options().setCreateIfMissing(true);
        WriteOptions synced = new WriteOptions().setSync(true);
        RocksDB rocks = RocksDB.open(opts, rocksDir.toString())) {
      System.out.printf("%d writers, single-key commits of a random key among 1,000,000 (%d-byte values); %d rounds"
          + " of %d s each after 2 s of warm-up%n", writers, VALUE_BYTES, rounds, seconds);
      for (int round = 1; round <= rounds; round++) {
        double e = engineCommits(db, writers, seconds);
        System.out.printf("round %d: engine durable commits (%d asynchronous writers on the default executor): %,.0f /s"
            + "  [%s]%n", round, writers, e, load());
        double r = rocksSyncedPuts(rocks, synced, writers, seconds);
        System.out.printf("round %d: RocksDB synced puts (setSync(true), %d threads): %,.0f /s  [%s]%n", round, writers,
            r, load());
        double b = engineBlockingCommits(db, writers, seconds);
        System.out.printf("round %d: engine durable commits (%d threads, each waiting in db.run): %,.0f /s  [%s]%n",
            round, writers, b, load());
        System.out.printf("round %d: ratio engine / RocksDB: %.2fx asynchronous, %.2fx blocking threads%n", round,
            e / r, b / r);
        engineSum += e;
        blockingSum += b;
        rocksSum += r;
      }
      System.out.printf("commits: mean over %d rounds: engine %,.0f /s asynchronous, %,.0f /s blocking threads;"
          + " RocksDB %,.0f /s; ratios %.2fx and %.2fx%n", rounds, engineSum / rounds, blockingSum / rounds,
          rocksSum / rounds, engineSum / rocksSum, blockingSum / rocksSum);
    } finally {
      cleanUp(engineDir);
      cleanUp(rocksDir);
    }
  }

  private static double engineCommits(EmbeddedDatabase db, int writers, int seconds) throws Exception {
    LongAdder commits = new LongAdder();
    AtomicBoolean stop = new AtomicBoolean();
    List<CompletableFuture<Void>> loops = new ArrayList<>();
    for (int w = 0; w < writers; w++) {
      CompletableFuture<Void> done = new CompletableFuture<>();
      loops.add(done);
      commitLoop(db, commits, stop, done);
    }
    double rate = measure(commits, seconds);
    stop.set(true);
    CompletableFuture.allOf(loops.toArray(new CompletableFuture[0])).get(60, TimeUnit.SECONDS);
    return rate;
  }

  private static void commitLoop(EmbeddedDatabase db, LongAdder commits, AtomicBoolean stop,
      CompletableFuture<Void> done) {
    if (stop.get()) {
      done.complete(null);
      return;
    }
    byte[] value = new byte[VALUE_BYTES];
    ThreadLocalRandom.current().nextBytes(value);
    Transaction tr = db.createTransaction();
    tr.set(key(ThreadLocalRandom.current().nextLong(1_000_000)), value);
    tr.commit().whenComplete((v, t) -> {
      tr.close();
      if (t != null) {
        done.completeExceptionally(t);
        return;
      }
      commits.increment();
      // On the executor's thread that completed the commit, as a client's continuation runs; a
      // durable commit never completes at once, so this does not recurse.
      commitLoop(db, commits, stop, done);
    });
  }

  private static double rocksSyncedPuts(RocksDB rocks, WriteOptions synced, int threads, int seconds)
      throws Exception {
    return onThreads("rocksdb-writer-", threads, seconds,
        value -> rocks.put(synced, key(ThreadLocalRandom.current().nextLong(1_000_000)), value));
  }

  /** The engine as RocksDB is driven: each writer a thread of its own that waits for its commit. */
  private static double engineBlockingCommits(EmbeddedDatabase db, int threads, int seconds) throws Exception {
    return onThreads("engine-writer-", threads, seconds, value -> db.run(tr -> {
      tr.set(key(ThreadLocalRandom.current().nextLong(1_000_000)), value);
      return null;
    }));
  }

  private interface Write {
    void run(byte[] value) throws Exception;
  }

  /** Runs {@code write} in a loop on each of {@code threads} threads; returns the writes/s measured. */
  private static double onThreads(String name, int threads, int seconds, Write write) throws Exception {
    LongAdder writes = new LongAdder();
    AtomicBoolean stop = new AtomicBoolean();
    List<Thread> running = new ArrayList<>();
    AtomicLong failures = new AtomicLong();
    for (int t = 0; t < threads; t++) {
      Thread thread = new Thread(() -> {
        byte[] value = new byte[VALUE_BYTES];
        while (!stop.get()) {
          ThreadLocalRandom.current().nextBytes(value);
          try {
            write.run(value);
          } catch (Exception e) {
            failures.incrementAndGet();
            return;
          }
          writes.increment();
        }
      }, name + t);
      thread.start();
      running.add(thread);
    }
    double rate = measure(writes, seconds);
    stop.set(true);
    for (Thread thread : running) {
      thread.join();
    }
    if (failures.get() > 0) {
      throw new IllegalStateException(failures.get() + " " + name + "threads failed");
    }
    return rate;
  }

  // ---------------------------------------------------------------------------------------------
  // loading

  record Loaded(Path dir, boolean reused) {}

  /** An existing directory named by {@code arg}, reused and kept, or a fresh one loaded with {@code arg} keys. */
  static Loaded loadedOrLoad(String arg, String label) throws Exception {
    Path given = Paths.get(arg);
    if (Files.isDirectory(given)) {
      System.out.printf("reusing %s (%s on disk)%n", given, mib(dirSize(given)));
      return new Loaded(given, true);
    }
    long keys = parseCount(arg);
    Path dir = freshDirectory(label + "-" + keys);
    load(dir, keys);
    return new Loaded(dir, KEEP);
  }

  /** Loads {@code keys} keys (16-byte keys in random order, 100-byte random values), closes the engine. */
  static void load(Path dir, long keys) throws Exception {
    int writers = Integer.getInteger("bench.loadWriters", 4);
    int batch = Integer.getInteger("bench.loadBatch", 10_000);
    AtomicLong nextBatch = new AtomicLong();
    LongAdder loaded = new LongAdder();
    long batches = (keys + batch - 1) / batch;
    long t0 = System.nanoTime();
    EmbeddedDatabase db = EmbeddedDatabase.open(options(dir).build());
    ExecutorService pool = Executors.newFixedThreadPool(writers);
    List<CompletableFuture<Void>> running = new ArrayList<>();
    for (int w = 0; w < writers; w++) {
      running.add(CompletableFuture.runAsync(() -> {
        byte[] values = new byte[batch * VALUE_BYTES];
        for (long b = nextBatch.getAndIncrement(); b < batches; b = nextBatch.getAndIncrement()) {
          long from = b * batch;
          long to = Math.min(keys, from + batch);
          ThreadLocalRandom.current().nextBytes(values);
          db.run(tr -> {
            for (long i = from; i < to; i++) {
              int off = (int) (i - from) * VALUE_BYTES;
              tr.set(key(i), Arrays.copyOfRange(values, off, off + VALUE_BYTES));
            }
            return null;
          });
          loaded.add(to - from);
        }
      }, pool));
    }
    CompletableFuture<Void> all = CompletableFuture.allOf(running.toArray(new CompletableFuture[0]));
    long lastPrint = System.nanoTime();
    while (!all.isDone()) {
      try {
        all.get(1, TimeUnit.SECONDS);
      } catch (java.util.concurrent.TimeoutException e) {
        if (System.nanoTime() - lastPrint > 30_000_000_000L) {
          lastPrint = System.nanoTime();
          System.out.printf("  loading: %,d keys after %.0f s, %s on disk  [%s]%n", loaded.sum(),
              (lastPrint - t0) / 1e9, mib(dirSize(dir)), load());
        }
      }
    }
    all.join();
    pool.shutdown();
    db.run(tr -> {
      tr.set(COUNT_KEY, ByteBuffer.allocate(8).putLong(keys).array());
      return null;
    });
    long loadNanos = System.nanoTime() - t0;
    long t1 = System.nanoTime();
    db.close();
    long closeNanos = System.nanoTime() - t1;
    System.out.printf("load: %,d keys (16-byte keys in random order, %d-byte random values), %d writers, %,d keys per"
        + " transaction: %.1f s, %,.0f keys/s (%.1f MB/s of keys and values); close %.1f s; data directory %s"
        + "  [%s]%n", keys, VALUE_BYTES, writers, batch, loadNanos / 1e9, keys / (loadNanos / 1e9),
        keys * (16.0 + VALUE_BYTES) / (loadNanos / 1e3), closeNanos / 1e9, mib(dirSize(dir)), load());
  }

  private static long storedCount(Database db) {
    byte[] v = db.read(tr -> tr.get(COUNT_KEY).join());
    return v == null ? -1 : ByteBuffer.wrap(v).getLong();
  }

  // ---------------------------------------------------------------------------------------------
  // helpers

  static EmbeddedOptions.Builder options(Path dir) {
    EmbeddedOptions.Builder b = EmbeddedOptions.builder().dataDirectory(dir);
    if (System.getProperty("bench.cacheBytes") != null) {
      b.storageCacheBytes(Long.getLong("bench.cacheBytes"));
    }
    if (System.getProperty("bench.compactAfterLogBytes") != null) {
      // The log's truncation threshold bounds what a crash leaves to replay.
      b.compactAfterLogBytes(Long.getLong("bench.compactAfterLogBytes"));
    }
    return b;
  }

  private static long cacheBytes() {
    return Long.getLong("bench.cacheBytes", EmbeddedOptions.builder().build().storageCacheBytes());
  }

  /**
   * 16 bytes: "key-" and four zero bytes, then a bijective mix of {@code i}, so that consecutive
   * indexes land at random places in the key order and any index below the count is a stored key.
   */
  static byte[] key(long i) {
    return ByteBuffer.allocate(16).putLong(0x6b65792d00000000L).putLong(mix(i)).array();
  }

  private static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
    return z ^ (z >>> 31);
  }

  private static long parseCount(String s) {
    String t = s.trim().toLowerCase();
    long mult = 1;
    if (t.endsWith("m")) {
      mult = 1_000_000;
      t = t.substring(0, t.length() - 1);
    } else if (t.endsWith("k")) {
      mult = 1_000;
      t = t.substring(0, t.length() - 1);
    }
    return Long.parseLong(t.replace("_", "").replace(",", "")) * mult;
  }

  /** Events per second of {@code counter} over {@code bench.seconds} (default 10), after {@code bench.warmup} s. */
  private static double measure(LongAdder counter, String what) throws InterruptedException {
    TimeUnit.SECONDS.sleep(Integer.getInteger("bench.warmup", 5));
    return measureWindow(counter, Integer.getInteger("bench.seconds", 10));
  }

  /** Events per second over {@code seconds} after 2 s of warm-up. */
  private static double measure(LongAdder counter, int seconds) throws InterruptedException {
    TimeUnit.SECONDS.sleep(2);
    return measureWindow(counter, seconds);
  }

  static double measureWindow(LongAdder counter, int seconds) throws InterruptedException {
    long start = System.nanoTime();
    long before = counter.sum();
    TimeUnit.SECONDS.sleep(seconds);
    return (counter.sum() - before) / ((System.nanoTime() - start) / 1e9);
  }

  static void header(String what) {
    MemoryMXBean mem = ManagementFactory.getMemoryMXBean();
    List<String> jvmArgs = ManagementFactory.getRuntimeMXBean().getInputArguments();
    System.out.printf("%s%nJVM: %s %s, %d cores, max heap %,d MiB, heap args %s, collector %s  [%s]%n", what,
        System.getProperty("java.vm.name"), System.getProperty("java.version"),
        Runtime.getRuntime().availableProcessors(), mem.getHeapMemoryUsage().getMax() >> 20,
        jvmArgs.stream().filter(a -> a.startsWith("-Xm") || a.startsWith("-XX")).toList(),
        ManagementFactory.getGarbageCollectorMXBeans().stream().map(b -> b.getName()).toList(), load());
  }

  /** Heap in use after System.gc() (MemoryMXBean), and the process's RSS and peak RSS from /proc/self/status. */
  static void memoryReport(String when) throws Exception {
    MemoryMXBean mem = ManagementFactory.getMemoryMXBean();
    for (int i = 0; i < 3; i++) {
      System.gc();
      Thread.sleep(100);
    }
    long heapUsed = mem.getHeapMemoryUsage().getUsed();
    String rss = "?";
    String hwm = "?";
    for (String line : Files.readAllLines(Paths.get("/proc/self/status"))) {
      if (line.startsWith("VmRSS:")) {
        rss = line.substring(6).trim();
      } else if (line.startsWith("VmHWM:")) {
        hwm = line.substring(6).trim();
      }
    }
    System.out.printf("memory %s: heap in use after System.gc() %,.1f MiB (committed %,d MiB, max %,d MiB);"
        + " RSS %s (peak %s)%n", when, heapUsed / 1048576.0, mem.getHeapMemoryUsage().getCommitted() >> 20,
        mem.getHeapMemoryUsage().getMax() >> 20, rss, hwm);
  }

  /** The load average (1, 5, 15 minutes) from /proc/loadavg. */
  static String load() {
    try {
      String[] f = Files.readString(Paths.get("/proc/loadavg")).trim().split("\\s+");
      return "load " + f[0] + " " + f[1] + " " + f[2];
    } catch (IOException e) {
      return "load ?";
    }
  }

  static Path freshDirectory(String label) throws IOException {
    Files.createDirectories(DATA_ROOT);
    Path dir = Files.createTempDirectory(DATA_ROOT, label + "-");
    System.out.println("data directory: " + dir);
    return dir;
  }

  static void cleanUp(Path dir) throws IOException {
    if (KEEP) {
      System.out.println("kept " + dir + " (bench.keep=true)");
      return;
    }
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> s = Files.walk(dir)) {
      s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  /** The sum of the sizes of the regular files under {@code dir}, recursively. */
  static long dirSize(Path dir) throws IOException {
    long[] total = {0};
    try (Stream<Path> s = Files.walk(dir)) {
      s.forEach(p -> {
        try {
          if (Files.isRegularFile(p)) {
            total[0] += Files.size(p);
          }
        } catch (IOException e) {
          // a file deleted while walking (log segments, compacted SST files) counts as gone
        }
      });
    } catch (java.io.UncheckedIOException e) {
      return dirSize(dir); // a directory vanished while walking: try again
    }
    return total[0];
  }

  static String mib(long bytes) {
    return String.format("%,.1f MiB", bytes / 1048576.0);
  }
}
