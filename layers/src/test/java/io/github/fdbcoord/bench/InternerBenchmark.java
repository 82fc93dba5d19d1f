package io.github.fdbcoord.bench;

import com.apple.foundationdb.Database;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.embedded.EmbeddedOptions;
import io.github.fdbcoord.interner.InternerOptions;
import io.github.fdbcoord.interner.InternerService;
import io.github.fdbcoord.interner.StringInterner;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Interner throughput: new strings per second (64 concurrent clients interning batches of 100 new
 * unique strings), cached lookups per second (string -> id and id -> string served by the cache,
 * several threads), uncached lookups per second (64 concurrent clients, cache disabled), each in
 * memory and with 1 ms of injected read/commit latency.
 *
 * <p>Run: {@code mvn -q -o test-compile exec:java -Dexec.mainClass=io.github.fdbcoord.bench.InternerBenchmark}
 * System properties: {@code bench.seconds} (measured seconds per figure, default 10),
 * {@code bench.warmup} (default 3), {@code bench.clients} (default 64), {@code bench.batch} (default 100),
 * {@code bench.latencyMs} (default 1), {@code bench.modes} ("memory,latency"), {@code bench.internOnly}
 * (skip the lookup figures, for profiling); mode {@code cluster} runs the same figures (not the
 * raw-engine baseline) on the FoundationDB cluster named by {@code -Dbench.clusterFile} ({@link BenchTargets}), {@code bench.baseline} (default true; false skips the raw
 * engine figure).
 *
 * <p>Mode {@code sustained} ({@code -Dbench.modes=sustained}, run with {@code -Xmx2g}): a durable engine
 * in a fresh directory under {@code bench.dataRoot} (default /work/bench-data, deleted afterwards unless
 * {@code bench.keep=true}), {@code bench.clients} clients interning batches of new strings for
 * {@code bench.duration} seconds (default 600), with no warm-up: prints the new-strings rate every
 * 10 s and every minute, then the average over the whole run, the last minute's rate and the store
 * size reached (strings, data directory bytes). {@code bench.cacheMb} sets the interner's cache
 * (default: the interner's default).
 *
 * <p>The new-strings figure gives the CPU time per string of this process (the client) and, with
 * {@code -Dbench.serverPids=PID[,PID...]} (fdbserver processes on this machine), of those processes,
 * both over the measured window. {@code -Dbench.inFlight=N} sets the interner's
 * {@code maxTransactionsInFlight}. {@code -Dbench.servicePerClient=true} gives each client an
 * interner service of its own (nothing coalesced across clients), for comparison.
 * {@code -Dbench.verify=true} keeps every id the clients were told and checks afterwards, through a
 * service without cache, that no id was told for two strings and that every string resolves to its
 * id and its id looks up to it (the interner's invariants, on whatever store the run measures).
 * {@code -Dbench.overlap=true} has clients 2k and 2k+1 intern the same strings at about the same
 * time, so that their transactions conflict and retry (the rate then counts each string twice).
 */
public final class InternerBenchmark {
  private static final int SECONDS = Integer.getInteger("bench.seconds", 10);
  private static final int WARMUP = Integer.getInteger("bench.warmup", 3);
  private static final int CLIENTS = Integer.getInteger("bench.clients", 64);
  private static final int BATCH = Integer.getInteger("bench.batch", 100);
  private static final int LATENCY_MS = Integer.getInteger("bench.latencyMs", 1);
  private static final int CACHED_THREADS = Integer.getInteger("bench.cachedThreads", 4);

  private static java.util.concurrent.Executor executor;

  private InternerBenchmark() {}

  public static void main(String[] args) throws Exception {
    String modes = System.getProperty("bench.modes", "memory,latency");
    System.out.printf("InternerBenchmark: %d clients, batches of %d, %d s measured after %d s warm-up, %d cores, JDK %s%n",
        CLIENTS, BATCH, SECONDS, WARMUP, Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"));
    System.out.println("| engine | figure | per second | per CPU-second of this process | notes");
    System.out.println("|---|---|---|---|---|");
    for (String mode : modes.split(",")) {
      if (mode.equals("sustained")) {
        sustained();
        continue;
      }
      if (mode.equals("cluster")) {
        BenchTargets.Target target = BenchTargets.cluster();
        if (target == null) {
          throw new IllegalArgumentException("mode cluster needs -D" + BenchTargets.CLUSTER_FILE_PROPERTY + "=<cluster file>");
        }
        try (BenchTargets.Opened opened = target.open()) {
          runAll(opened.database(), target.label());
          if (Boolean.parseBoolean(System.getProperty("bench.baseline", "true"))) {
            // The server's capacity for this very work (issue 36's "share of the server's key-write capacity"):
            // the same reads and writes without the layer, right after it, on the same server.
            executor = opened.database().getExecutor();
            Result raw = rawEngineBaseline(opened.database());
            print(target.label(), "baseline: raw transactions doing the same reads and writes, strings/s", raw,
                String.format(" mean batch latency %.1f ms; %,.0f key writes/s [%s] |", raw.meanLatencyMs(),
                    2 * raw.count / (raw.nanos / 1e9), DurableStorageBenchmark.load()));
          }
        }
        continue;
      }
      EmbeddedOptions options = mode.equals("latency")
          ? EmbeddedOptions.builder().latency(Duration.ofMillis(LATENCY_MS)).build()
          : EmbeddedOptions.inMemory();
      String label = mode.equals("latency") ? "in memory, " + LATENCY_MS + " ms latency" : "in memory";
      // Each on a fresh database: the engine's cost per commit grows with the number of keys it holds.
      // The layer's figures come first, so the JIT and the heap are not shaped by the baseline's code.
      try (Database db = EmbeddedDatabase.open(options)) {
        runAll(db, label);
      }
      // The closed database's millions of keys are old-generation garbage: collect them now, or the
      // next figure pays for the previous one's clean-up.
      System.gc();
      if (Boolean.parseBoolean(System.getProperty("bench.baseline", "true"))) {
        try (Database db = EmbeddedDatabase.open(options)) {
          executor = db.getExecutor();
          Result raw = rawEngineBaseline(db);
          print(label, "baseline: raw engine transactions doing the same reads and writes, strings/s", raw,
              String.format(" mean batch latency %.1f ms |", raw.meanLatencyMs()));
        }
        System.gc();
      }
    }
    System.exit(0);
  }

  /** A durable store growing for {@code bench.duration} seconds under 64 clients interning new strings. */
  private static void sustained() throws Exception {
    int duration = Integer.getInteger("bench.duration", 600);
    java.nio.file.Path root = java.nio.file.Paths.get(System.getProperty("bench.dataRoot", "/work/bench-data"));
    java.nio.file.Files.createDirectories(root);
    java.nio.file.Path dir = java.nio.file.Files.createTempDirectory(root, "interner-sustained-");
    long cacheBytes = Long.getLong("bench.cacheMb", InternerOptions.DEFAULT_CACHE_MAX_BYTES >> 20) << 20;
    java.lang.management.MemoryMXBean mem = java.lang.management.ManagementFactory.getMemoryMXBean();
    System.out.printf("sustained, durable: data directory %s, %d s, %d clients, batches of %d, interner cache %d MiB,"
        + " JVM %s, max heap %,d MiB, heap args %s  [%s]%n", dir, duration, CLIENTS, BATCH, cacheBytes >> 20,
        System.getProperty("java.vm.name"), mem.getHeapMemoryUsage().getMax() >> 20,
        java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
            .filter(a -> a.startsWith("-Xm") || a.startsWith("-XX")).toList(), DurableStorageBenchmark.load());
    try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.durable(dir))) {
      executor = db.getExecutor();
      InternerService service = InternerService.create(db, InternerOptions.builder()
          .rootPath(List.of("bench", UUID.randomUUID().toString())).cacheMaxBytes(cacheBytes).build());
      StringInterner interner = service.open("bench").get();
      AtomicLong[] next = new AtomicLong[CLIENTS];
      for (int c = 0; c < CLIENTS; c++) {
        next[c] = new AtomicLong();
      }
      AtomicBoolean stop = new AtomicBoolean();
      LongAdder strings = new LongAdder();
      LongAdder failures = new LongAdder();
      LongAdder latency = new LongAdder();
      List<CompletableFuture<Void>> done = new ArrayList<>();
      long start = System.nanoTime();
      for (int c = 0; c < CLIENTS; c++) {
        CompletableFuture<Void> finished = new CompletableFuture<>();
        done.add(finished);
        final int client = c;
        loop(c, k -> {
          List<String> batch = new ArrayList<>(BATCH);
          for (int i = 0; i < BATCH; i++) {
            batch.add(name(client, next[client].getAndIncrement()));
          }
          // A failed batch (a timeout when the engine stalls) is counted and the client goes on.
          return interner.intern(batch).handle((ids, e) -> {
            if (e != null) {
              failures.increment();
              if (failures.sum() <= 3) {
                System.out.println("  intern batch failed: " + e);
              }
            } else {
              strings.add(BATCH);
            }
            return null;
          });
        }, new AtomicBoolean(true), stop, new LongAdder(), latency, finished);
      }
      long lastTen = start;
      long countTen = 0;
      long lastMinute = start;
      long countMinute = 0;
      // (time, strings) at every 10 s tick, so the last minute is the run's last 60 s whatever its length.
      List<long[]> ticks = new ArrayList<>();
      ticks.add(new long[] {start, 0});
      long cpu0 = cpuNanos();
      for (int tick = 1; tick * 10L <= duration; tick++) {
        long target = start + tick * 10_000_000_000L;
        long wait = target - System.nanoTime();
        if (wait > 0) {
          TimeUnit.NANOSECONDS.sleep(wait);
        }
        long now = System.nanoTime();
        long n = strings.sum();
        System.out.printf("  %4d s: %,9.0f new strings/s over the last 10 s; %,d strings stored; heap used %,d MiB"
            + "; failed batches %d  [%s]%n", tick * 10, (n - countTen) / ((now - lastTen) / 1e9), n,
            mem.getHeapMemoryUsage().getUsed() >> 20, failures.sum(), DurableStorageBenchmark.load());
        lastTen = now;
        countTen = n;
        ticks.add(new long[] {now, n});
        if (tick % 6 == 0) {
          System.out.printf("  minute %d: %,.0f new strings/s; %,d strings stored; data directory %s%n", tick / 6,
              (n - countMinute) / ((now - lastMinute) / 1e9), n,
              DurableStorageBenchmark.mib(DurableStorageBenchmark.dirSize(dir)));
          lastMinute = now;
          countMinute = n;
        }
      }
      long[] last = ticks.get(ticks.size() - 1);
      long[] minuteBefore = ticks.get(Math.max(0, ticks.size() - 7));
      double lastMinuteRate = (last[1] - minuteBefore[1]) / ((last[0] - minuteBefore[0]) / 1e9);
      long end = System.nanoTime();
      long total = strings.sum();
      long cpu = cpuNanos() - cpu0;
      stop.set(true);
      CompletableFuture.allOf(done.toArray(new CompletableFuture<?>[0])).get(120, TimeUnit.SECONDS);
      double seconds = (end - start) / 1e9;
      System.out.printf("sustained, durable, %d clients: %,.0f new strings/s averaged over %.0f s (%,.0f per"
          + " CPU-second); last minute %,.0f /s; store reached %,d strings, data directory %s; failed batches %d"
          + "  [%s]%n", CLIENTS, total / seconds, seconds, total * 1e9 / cpu, lastMinuteRate, total,
          DurableStorageBenchmark.mib(DurableStorageBenchmark.dirSize(dir)), failures.sum(),
          DurableStorageBenchmark.load());
      DurableStorageBenchmark.memoryReport("at the end of the run");
    } finally {
      if (Boolean.getBoolean("bench.keep")) {
        System.out.println("kept " + dir);
      } else {
        try (java.util.stream.Stream<java.nio.file.Path> s = java.nio.file.Files.walk(dir)) {
          s.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
      }
    }
  }

  private static void runAll(Database db, String label) throws Exception {
    executor = db.getExecutor();
    List<String> root = List.of("bench", UUID.randomUUID().toString());
    // No clean-up: the caller closes this fresh database, and clearing millions of keys first would
    // only leave the collector more to do.
    InternerOptions.Builder options = InternerOptions.builder().rootPath(root).cacheMaxBytes(512L << 20);
    if (Integer.getInteger("bench.inFlight") != null) {
      options.maxTransactionsInFlight(Integer.getInteger("bench.inFlight"));
    }
    InternerService service = InternerService.create(db, options.build());
    StringInterner interner = service.open("bench").get();

    Result interned;
    if (Boolean.getBoolean("bench.servicePerClient")) {
      StringInterner[] own = new StringInterner[CLIENTS];
      for (int c = 0; c < CLIENTS; c++) {
        own[c] = InternerService.create(db, InternerOptions.builder().rootPath(root).cacheMaxBytes(8L << 20).build())
            .open("bench").get();
      }
      interned = newStrings(c -> own[c]);
    } else {
      interned = newStrings(c -> interner);
    }
    if (VERIFY) {
      verify(db, root);
    }
    print(label, "new strings/s (" + CLIENTS + " clients, batches of " + BATCH
        + (Boolean.getBoolean("bench.servicePerClient") ? ", a service per client" : "") + ")", interned,
        String.format(" %d strings, mean batch latency %.1f ms; CPU per string: client %.1f µs%s [%s] |",
            interned.count, interned.meanLatencyMs(), interned.cpuNanos / 1e3 / interned.count,
            SERVER_PIDS.length == 0 ? "" : String.format(", fdbserver %.1f µs%s", interned.serverCpuNanos / 1e3 / interned.count,
                perServer(interned.count)),
            DurableStorageBenchmark.load()));
    System.out.println("  client CPU per string by thread: " + THREAD_GROUPS_WINDOW.entrySet().stream()
        .sorted(java.util.Map.Entry.<String, Long>comparingByValue().reversed()).limit(6)
        .map(e -> String.format("%s %.1f µs", e.getKey(), e.getValue() / 1e3 / interned.count))
        .collect(java.util.stream.Collectors.joining(", "))
        + String.format("; the busiest thread (%s) %.1f µs, i.e. %.0f %% of a core", BUSIEST_THREAD,
            BUSIEST_THREAD_NANOS / 1e3 / interned.count, BUSIEST_THREAD_NANOS * 100.0 / interned.nanos));

    if (Boolean.getBoolean("bench.internOnly")) {
      return;
    }
    // Ids to look up: a sample of what was interned. The cache is read-through, so reading the
    // sample in both directions (intern reads string -> id, lookup id -> string) fills it.
    List<String> sample = new ArrayList<>();
    for (int i = 0; i < 100_000 && i < interned.count; i++) {
      sample.add(name(i % CLIENTS, i / CLIENTS));
    }
    List<Long> ids = new ArrayList<>();
    for (int from = 0; from < sample.size(); from += 1000) {
      List<Long> chunk = interner.intern(sample.subList(from, Math.min(sample.size(), from + 1000))).get();
      interner.lookup(chunk).get();
      ids.addAll(chunk);
    }
    long[] idArray = ids.stream().mapToLong(Long::longValue).toArray();
    String[] strArray = sample.toArray(new String[0]);

    print(label, "cached lookups/s, id -> string (" + CACHED_THREADS + " threads)",
        cached(() -> interner.lookup(idArray[ThreadLocalRandom.current().nextInt(idArray.length)]).join()), " |");
    print(label, "cached lookups/s, string -> id (" + CACHED_THREADS + " threads)",
        cached(() -> interner.resolve(strArray[ThreadLocalRandom.current().nextInt(strArray.length)]).join()), " |");

    InternerService uncachedService = InternerService.create(db, InternerOptions.builder().rootPath(root)
        .cacheMaxBytes(0).build());
    StringInterner uncached = uncachedService.open("bench").get();
    Result single = concurrent(() -> uncached.lookup(idArray[ThreadLocalRandom.current().nextInt(idArray.length)]), 1);
    print(label, "uncached lookups/s, id -> string, 1 id per call (" + CLIENTS + " clients)", single,
        String.format(" mean latency %.2f ms |", single.meanLatencyMs()));
    Result singleResolve = concurrent(() -> uncached.resolve(strArray[ThreadLocalRandom.current().nextInt(strArray.length)]), 1);
    print(label, "uncached lookups/s, string -> id, 1 string per call (" + CLIENTS + " clients)", singleResolve,
        String.format(" mean latency %.2f ms |", singleResolve.meanLatencyMs()));
    Result batched = concurrent(() -> uncached.lookup(randomIds(idArray, BATCH)), BATCH);
    print(label, "uncached lookups/s, id -> string, " + BATCH + " ids per call (" + CLIENTS + " clients)",
        batched, String.format(" mean call latency %.2f ms |", batched.meanLatencyMs()));
  }

  private static final boolean VERIFY = Boolean.getBoolean("bench.verify");
  private static final boolean OVERLAP = Boolean.getBoolean("bench.overlap");
  /** With {@code bench.verify}: every string interned by {@link #newStrings} and the id its client was told. */
  private static final java.util.concurrent.ConcurrentHashMap<String, Long> TOLD = new java.util.concurrent.ConcurrentHashMap<>();

  private static void verify(Database db, List<String> root) throws Exception {
    StringInterner fresh = InternerService.create(db, InternerOptions.builder().rootPath(root).cacheMaxBytes(0).build())
        .open("bench").get();
    java.util.Map<Long, String> owners = new java.util.HashMap<>();
    TOLD.forEach((s, id) -> {
      String prior = owners.put(id, s);
      if (prior != null) {
        throw new AssertionError("id " + id + " told for both " + prior + " and " + s);
      }
    });
    List<String> strings = new ArrayList<>(TOLD.keySet());
    for (int from = 0; from < strings.size(); from += 1000) {
      List<String> chunk = strings.subList(from, Math.min(strings.size(), from + 1000));
      List<java.util.OptionalLong> ids = fresh.resolve(chunk).get();
      List<Long> told = chunk.stream().map(TOLD::get).toList();
      List<java.util.Optional<String>> back = fresh.lookup(told).get();
      for (int i = 0; i < chunk.size(); i++) {
        if (ids.get(i).isEmpty() || ids.get(i).getAsLong() != told.get(i)) {
          throw new AssertionError(chunk.get(i) + " resolves to " + ids.get(i) + ", its client was told " + told.get(i));
        }
        if (!back.get(i).equals(java.util.Optional.of(chunk.get(i)))) {
          throw new AssertionError("id " + told.get(i) + " looks up to " + back.get(i) + ", not " + chunk.get(i));
        }
      }
    }
    System.out.printf("verified: %,d strings, each id told once, each string resolves to its id and back%n", TOLD.size());
  }

  private static List<Long> randomIds(long[] ids, int n) {
    List<Long> out = new ArrayList<>(n);
    ThreadLocalRandom r = ThreadLocalRandom.current();
    for (int i = 0; i < n; i++) {
      out.add(ids[r.nextInt(ids.length)]);
    }
    return out;
  }

  /** Strings look like AT-protocol record URIs, the seed's use case: unique per client and counter. */
  private static String name(int client, long n) {
    return "at://did:plc:client" + client + "/app.bsky.feed.post/" + n;
  }

  private record Result(long count, long calls, long nanos, long latencyNanos, long cpuNanos, long serverCpuNanos) {
    Result(long count, long calls, long nanos, long latencyNanos, long cpuNanos) {
      this(count, calls, nanos, latencyNanos, cpuNanos, 0);
    }

    double perSecond() {
      return count * 1e9 / nanos;
    }

    /** Throughput per second of this process's CPU time: what one dedicated core would do. */
    double perCpuSecond() {
      return cpuNanos == 0 ? 0 : count * 1e9 / cpuNanos;
    }

    double meanLatencyMs() {
      return calls == 0 ? 0 : latencyNanos / 1e6 / calls;
    }
  }

  /** 64 clients each interning batches of new strings back to back; counts during the measured window. */
  private static Result newStrings(java.util.function.IntFunction<StringInterner> interner) throws Exception {
    AtomicLong[] next = new AtomicLong[CLIENTS];
    for (int c = 0; c < CLIENTS; c++) {
      next[c] = new AtomicLong();
    }
    return concurrentClients(c -> {
      List<String> batch = new ArrayList<>(BATCH);
      for (int i = 0; i < BATCH; i++) {
        batch.add(name(OVERLAP ? c / 2 : c, next[c].getAndIncrement()));
      }
      CompletableFuture<List<Long>> ids = interner.apply(c).intern(batch);
      return VERIFY ? ids.thenAccept(told -> {
        for (int i = 0; i < batch.size(); i++) {
          Long prior = TOLD.putIfAbsent(batch.get(i), told.get(i));
          if (prior != null && !prior.equals(told.get(i))) {
            throw new AssertionError(batch.get(i) + " was told " + prior + " and " + told.get(i));
          }
        }
      }) : ids;
    }, BATCH);
  }

  /**
   * What the engine alone costs for one intern batch, with no layer code: one transaction reading 100
   * absent keys, a metadata key and a counter, then writing 100 forward records, 100 reverse records and
   * the counter. The gap between this and {@link #newStrings} is the layer's own overhead.
   */
  private static Result rawEngineBaseline(Database db) throws Exception {
    com.apple.foundationdb.subspace.Subspace space = new com.apple.foundationdb.subspace.Subspace(
        com.apple.foundationdb.tuple.Tuple.from("bench-raw", UUID.randomUUID().toString()));
    AtomicLong[] next = new AtomicLong[CLIENTS];
    for (int c = 0; c < CLIENTS; c++) {
      next[c] = new AtomicLong();
    }
    return concurrentClients(c -> db.runAsync(tr -> {
      long first = next[c].getAndAdd(BATCH);
      List<CompletableFuture<byte[]>> reads = new ArrayList<>(BATCH + 2);
      List<byte[]> keys = new ArrayList<>(BATCH);
      for (int i = 0; i < BATCH; i++) {
        byte[] key = space.pack(com.apple.foundationdb.tuple.Tuple.from(1L, name(c, first + i)));
        keys.add(key);
        reads.add(tr.get(key));
      }
      byte[] counterKey = space.pack(com.apple.foundationdb.tuple.Tuple.from(3L, (long) c));
      reads.add(tr.get(space.pack(com.apple.foundationdb.tuple.Tuple.from(0L))));
      reads.add(tr.get(counterKey));
      return CompletableFuture.allOf(reads.toArray(new CompletableFuture<?>[0])).thenApply(v -> {
        for (int i = 0; i < BATCH; i++) {
          long id = ((long) c << 48) | (first + i);
          tr.set(keys.get(i), java.nio.ByteBuffer.allocate(8).putLong(id).array());
          tr.set(space.pack(com.apple.foundationdb.tuple.Tuple.from(2L, id)),
              name(c, first + i).getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        tr.set(counterKey, java.nio.ByteBuffer.allocate(8).putLong(first + BATCH).array());
        return null;
      });
    }, executor), BATCH);
  }

  private static Result concurrent(java.util.function.Supplier<CompletableFuture<?>> call, int perCall) throws Exception {
    return concurrentClients(c -> call.get(), perCall);
  }

  /** {@link #CLIENTS} asynchronous clients, each issuing its next call when the previous completes. */
  private static Result concurrentClients(java.util.function.IntFunction<CompletableFuture<?>> call, int perCall)
      throws Exception {
    AtomicBoolean measuring = new AtomicBoolean(false);
    AtomicBoolean stop = new AtomicBoolean(false);
    LongAdder calls = new LongAdder();
    LongAdder latency = new LongAdder();
    List<CompletableFuture<Void>> done = new ArrayList<>();
    for (int c = 0; c < CLIENTS; c++) {
      CompletableFuture<Void> finished = new CompletableFuture<>();
      done.add(finished);
      loop(c, call, measuring, stop, calls, latency, finished);
    }
    TimeUnit.SECONDS.sleep(WARMUP);
    long cpu0 = cpuNanos();
    java.util.Map<Long, Long> threads0 = threadCpu();
    long serverCpu0 = serverCpuNanos();
    long[] perServer0 = new long[SERVER_PIDS.length];
    for (int i = 0; i < SERVER_PIDS.length; i++) {
      perServer0[i] = serverCpuNanos(SERVER_PIDS[i]);
    }
    measuring.set(true);
    long start = System.nanoTime();
    TimeUnit.SECONDS.sleep(SECONDS);
    measuring.set(false);
    long nanos = System.nanoTime() - start;
    long cpu = cpuNanos() - cpu0;
    THREAD_GROUPS_WINDOW = threadGroups(threads0, threadCpu());
    long serverCpu = serverCpuNanos() - serverCpu0;
    for (int i = 0; i < SERVER_PIDS.length; i++) {
      SERVER_WINDOW_NANOS[i] = serverCpuNanos(SERVER_PIDS[i]) - perServer0[i];
    }
    long n = calls.sum();
    long lat = latency.sum();
    stop.set(true);
    CompletableFuture.allOf(done.toArray(new CompletableFuture<?>[0])).get(60, TimeUnit.SECONDS);
    return new Result(n * perCall, n, nanos, lat, cpu, serverCpu);
  }

  private static void loop(int client, java.util.function.IntFunction<CompletableFuture<?>> call, AtomicBoolean measuring,
      AtomicBoolean stop, LongAdder calls, LongAdder latency, CompletableFuture<Void> finished) {
    if (stop.get()) {
      finished.complete(null);
      return;
    }
    long t0 = System.nanoTime();
    call.apply(client).whenCompleteAsync((r, e) -> {
      if (e != null) {
        finished.completeExceptionally(e);
        return;
      }
      if (measuring.get()) {
        calls.increment();
        latency.add(System.nanoTime() - t0);
      }
      loop(client, call, measuring, stop, calls, latency, finished);
    }, executor); // a hop per call, so a chain of already-completed futures cannot grow the stack
  }

  /** Calls served by the cache, from several plain threads, for the measured window. */
  private static Result cached(Runnable call) throws Exception {
    AtomicBoolean measuring = new AtomicBoolean(false);
    AtomicBoolean stop = new AtomicBoolean(false);
    LongAdder ops = new LongAdder();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < CACHED_THREADS; t++) {
      Thread thread = new Thread(() -> {
        long local = 0;
        boolean counted = false;
        while (!stop.get()) {
          for (int i = 0; i < 1000; i++) {
            call.run();
          }
          if (measuring.get()) {
            local += 1000;
            counted = true;
          } else if (counted) {
            break;
          }
        }
        ops.add(local);
      });
      thread.start();
      threads.add(thread);
    }
    TimeUnit.SECONDS.sleep(WARMUP);
    long cpu0 = cpuNanos();
    measuring.set(true);
    long start = System.nanoTime();
    TimeUnit.SECONDS.sleep(SECONDS);
    measuring.set(false);
    long nanos = System.nanoTime() - start;
    long cpu = cpuNanos() - cpu0;
    stop.set(true);
    for (Thread thread : threads) {
      thread.join();
    }
    return new Result(ops.sum(), ops.sum(), nanos, 0, cpu);
  }

  private static void print(String engine, String figure, Result r, String extra) {
    System.out.printf("| %s | %s | %,.0f | %,.0f |%s%n", engine, figure, r.perSecond(), r.perCpuSecond(), extra);
  }

  private static final String[] SERVER_PIDS = System.getProperty("bench.serverPids", "").isBlank()
      ? new String[0] : System.getProperty("bench.serverPids").split(",");

  /** Per server process, its CPU time over the last measured window (set by {@link #concurrentClients}). */
  private static final long[] SERVER_WINDOW_NANOS = new long[SERVER_PIDS.length];

  /** " (pid 12: 3.1 µs, pid 13: ...)" for several server processes, per string; "" for one. */
  private static String perServer(long strings) {
    if (SERVER_PIDS.length < 2) {
      return "";
    }
    List<String> parts = new ArrayList<>();
    for (int i = 0; i < SERVER_PIDS.length; i++) {
      parts.add(String.format("pid %s: %.1f µs", SERVER_PIDS[i].trim(), SERVER_WINDOW_NANOS[i] / 1e3 / strings));
    }
    return " (" + String.join(", ", parts) + ")";
  }

  /** User and system CPU time of the {@code bench.serverPids} processes, from /proc (Linux only). */
  private static long serverCpuNanos() {
    long total = 0;
    for (int i = 0; i < SERVER_PIDS.length; i++) {
      total += serverCpuNanos(SERVER_PIDS[i]);
    }
    return total;
  }

  private static long serverCpuNanos(String pid) {
    try {
      String stat = java.nio.file.Files.readString(java.nio.file.Path.of("/proc", pid.trim(), "stat"));
      // Fields after the command name, which is in parentheses and may hold spaces: utime is the 12th, stime the 13th.
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * (1_000_000_000L / CLOCK_TICKS_PER_SECOND);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException("bench.serverPids: cannot read /proc/" + pid + "/stat", e);
    }
  }

  /** CPU time of the client's threads over the last measured window, by thread name with its digits left out. */
  private static java.util.Map<String, Long> THREAD_GROUPS_WINDOW = java.util.Map.of();
  /** The one thread that used the most CPU over the window: the network thread, when one thread limits the client. */
  private static String BUSIEST_THREAD = "";
  private static long BUSIEST_THREAD_NANOS;

  private static java.util.Map<Long, Long> threadCpu() {
    java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
    java.util.Map<Long, Long> cpu = new java.util.HashMap<>();
    for (long id : mx.getAllThreadIds()) {
      long t = mx.getThreadCpuTime(id);
      if (t >= 0) {
        cpu.put(id, t);
      }
    }
    return cpu;
  }

  private static java.util.Map<String, Long> threadGroups(java.util.Map<Long, Long> before, java.util.Map<Long, Long> after) {
    java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
    java.util.Map<String, Long> groups = new java.util.HashMap<>();
    BUSIEST_THREAD_NANOS = 0;
    after.forEach((id, t) -> {
      java.lang.management.ThreadInfo info = mx.getThreadInfo(id);
      if (t - before.getOrDefault(id, 0L) > BUSIEST_THREAD_NANOS) {
        BUSIEST_THREAD_NANOS = t - before.getOrDefault(id, 0L);
        BUSIEST_THREAD = info == null ? "ended" : info.getThreadName();
      }
      String name = info == null ? "ended" : info.getThreadName().replaceAll("[0-9]+", "N");
      groups.merge(name, t - before.getOrDefault(id, 0L), Long::sum);
    });
    return groups;
  }

  /** USER_HZ: 100 on every Linux this runs on; /proc gives CPU time in these ticks. */
  private static final long CLOCK_TICKS_PER_SECOND = 100;

  private static long cpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }
}
