package io.github.fdbcoord.bench;

import io.github.fdbcoord.client.CoordinationClient;
import io.github.fdbcoord.client.wire.InternerWire;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.embedded.EmbeddedOptions;
import io.github.fdbcoord.interner.InternerOptions;
import io.github.fdbcoord.interner.InternerService;
import io.github.fdbcoord.interner.StringInterner;
import io.github.fdbcoord.mutex.MutexHandle;
import io.github.fdbcoord.mutex.MutexOptions;
import io.github.fdbcoord.mutex.MutexService;
import io.github.fdbcoord.service.CoordinationVerticle;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VerticleBase;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The regression guard of the service path: the same operations called directly on the layers,
 * over the event bus and over HTTP, alternating in rounds within one run on one store, with each
 * path's rate, p50 and p99 and its ratio to the direct call. A change that slows the service (an
 * extra hop, a retry, a copy) shows up as a ratio, whatever the machine's load. The "HTTP floor"
 * rows are a plain Vert.x server answering a small JSON body over the same loopback: what HTTP
 * costs on this machine before the service does anything; the "event-bus floor" row, likewise, a
 * plain consumer answering a local request/reply with the interner's bodies.
 *
 * <pre>bench/run.sh service ServicePathBenchmark [memory|durable]
 *     [-Dbench.seconds=3 -Dbench.rounds=3 -Dbench.concurrency=32 -Dbench.only=TEXT -Dbench.paths=HTTP,direct
 *     -Dbench.settleMillis=1000]</pre>
 */
public final class ServicePathBenchmark {
  private static final int SECONDS = Integer.getInteger("bench.seconds", 3);
  private static final int ROUNDS = Integer.getInteger("bench.rounds", 3);
  private static final int CONCURRENCY = Integer.getInteger("bench.concurrency", 32);
  private static final String NS = "bench";
  private static final String BUS_FLOOR = "bench.event-bus-floor";
  /** Runs only the operations whose name contains this text (all when empty). */
  private static final String ONLY = System.getProperty("bench.only", "");
  /**
   * Pause before each path's measurement: the engine merges its index and the collector marks on
   * threads of their own, after the writes that caused them; without the pause the path measured
   * next (always the event bus after the direct call, in the order below) is charged for them.
   */
  private static final long SETTLE_MILLIS = Long.getLong("bench.settleMillis", 1000);
  /** Runs only the paths (direct, event bus, event-bus floor, HTTP, HTTP floor) named in this comma-separated list (all when empty). */
  private static final List<String> PATHS = System.getProperty("bench.paths", "").isEmpty() ? List.of()
      : List.of(System.getProperty("bench.paths").split(","));

  private final Map<String, Samples> results = new LinkedHashMap<>();
  private final AtomicLong seq = new AtomicLong();

  public static void main(String[] args) throws Exception {
    boolean durable = args.length > 0 && args[0].equals("durable");
    Path dir = durable ? Files.createTempDirectory("service-path-bench") : null;
    EmbeddedDatabase db = durable ? EmbeddedDatabase.open(EmbeddedOptions.durable(dir)) : EmbeddedDatabase.inMemory();
    Vertx vertx = Vertx.vertx();
    // The load generator's HTTP client on an event loop of its own, as a separate process would be.
    Vertx loader = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1));
    List<String> root = List.of("bench", UUID.randomUUID().toString());
    JsonObject config = new JsonObject().put("rootDirectory", new JsonArray(root))
        .put("http", new JsonObject().put("enabled", true).put("port", 0)).put("workerPoolSize", 4);
    CoordinationVerticle service = new CoordinationVerticle(config, db);
    vertx.deployVerticle(service).await(60, TimeUnit.SECONDS);
    ExecutorService directPool = Executors.newFixedThreadPool(4);
    try {
      new ServicePathBenchmark().run(durable ? "durable" : "in memory", db, root, service, vertx, loader, directPool);
    } finally {
      vertx.close().await(30, TimeUnit.SECONDS);
      loader.close().await(30, TimeUnit.SECONDS);
      directPool.shutdown();
      db.close();
    }
    System.exit(0);
  }

  private void run(String store, EmbeddedDatabase db, List<String> root, CoordinationVerticle service, Vertx vertx,
      Vertx loader, ExecutorService directPool) throws Exception {
    CoordinationClient bus = service.client();
    Context caller = vertx.getOrCreateContext();
    List<String> internerRoot = new ArrayList<>(root);
    internerRoot.add("interner");
    InternerService direct = InternerService.create(db, InternerOptions.builder().rootPath(internerRoot)
        .maxBatchSize(1000).executor(directPool).build());
    StringInterner ns = direct.open(NS).get();
    List<String> mutexDir = new ArrayList<>(root);
    mutexDir.add("mutex");
    MutexService mutexes = MutexService.open(db, MutexOptions.builder().directory(mutexDir)
        .reaperEnabled(false).executor(directPool).build()).get();
    HttpClient http = loader.createHttpClient(new HttpClientOptions().setDefaultPort(service.httpPort())
        .setDefaultHost("127.0.0.1").setKeepAlive(true), new PoolOptions().setHttp1MaxSize(CONCURRENCY));
    Context httpCaller = loader.getOrCreateContext();
    // The floor: a plain Vert.x server answering a small JSON body, on the same event loops and loopback.
    int floorPort = vertx.createHttpServer().requestHandler(req -> req.body().onSuccess(b -> req.response()
        .putHeader("content-type", "application/json").end("{\"ids\":[]}"))).listen(0)
        .toCompletionStage().toCompletableFuture().get().actualPort();
    HttpClient floor = loader.createHttpClient(new HttpClientOptions().setDefaultPort(floorPort)
        .setDefaultHost("127.0.0.1").setKeepAlive(true), new PoolOptions().setHttp1MaxSize(CONCURRENCY));
    // The event bus's floor: a plain consumer on a verticle of its own answering a reply of the
    // interner's shape (100 ids) to a request of its shape: what one local request/reply with these
    // bodies costs (two hops between event loops, a copy each way) before the service does anything.
    List<Long> hundredIds = new ArrayList<>();
    for (long i = 0; i < 100; i++) {
      hundredIds.add(Long.MIN_VALUE + i);
    }
    JsonObject floorReply = InternerWire.interned(NS, hundredIds);
    vertx.deployVerticle(new VerticleBase() {
      @Override
      public Future<?> start() {
        return this.vertx.eventBus().consumer(BUS_FLOOR, m -> m.reply(floorReply)).completion();
      }
    }).await(60, TimeUnit.SECONDS);

    List<String> cached = strings(10);
    ns.intern(cached).get();
    ns.intern(cached).get(); // the second read proves the ids: cached from now on (see InternerCache)
    List<Long> ids = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      ids.addAll(ns.intern(strings(10)).get());
    }
    JsonArray cachedJson = new JsonArray(new ArrayList<>(cached));
    AtomicInteger next = new AtomicInteger();
    Supplier<List<Long>> tenIds = () -> {
      int base = (next.getAndIncrement() * 10) % (ids.size() - 10);
      return ids.subList(base, base + 10);
    };

    System.out.printf("service path vs direct, %s store; %d cores, Java %s; %d rounds x %d s per path;"
        + " load average %s%n", store, Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"),
        ROUNDS, SECONDS, loadAverage());
    for (int r = -1; r < ROUNDS; r++) {
      boolean warm = r < 0;
      sequential(warm, "intern 100 new, sequential", "direct", directPool, () -> ns.intern(strings(100)));
      sequential(warm, "intern 100 new, sequential", "event bus", caller, () -> bus.intern(NS, strings(100)));
      sequential(warm, "intern 100 new, sequential", "event-bus floor", caller,
          () -> vertx.eventBus().<JsonObject>request(BUS_FLOOR, new JsonObject().put("namespace", NS)
              .put("strings", new JsonArray(strings(100))), new DeliveryOptions().addHeader("action", "intern"))
              .map(m -> InternerWire.interned(m.body())));
      sequential(warm, "mutex tryAcquire+release, sequential", "direct", directPool,
          () -> mutexes.tryAcquire("m-direct", "o").thenCompose(g -> mutexes.release("m-direct", "o")));
      sequential(warm, "mutex tryAcquire+release, sequential", "event bus", caller,
          () -> bus.tryAcquire("m-bus", "o").compose(g -> bus.release("m-bus", "o", null)));
      sequential(warm, "mutex tryAcquire+release, sequential", "HTTP", httpCaller,
          () -> post(http, "/mutexes/m-http/acquire", new JsonObject().put("owner", "o").put("wait", false))
              .compose(x -> post(http, "/mutexes/m-http/release", new JsonObject().put("owner", "o"))));
      // Waits: each call is a new owner that queues behind the others and is handed the mutex.
      drive(warm, "mutex acquire+release, 8 waiting", "direct", directPool, 8,
          () -> mutexes.acquire("m-wait-direct", "o" + seq.incrementAndGet(), Duration.ofSeconds(30))
              .thenCompose(MutexHandle::release));
      drive(warm, "mutex acquire+release, 8 waiting", "event bus", caller, 8, () -> {
        String owner = "o" + seq.incrementAndGet();
        return bus.acquire("m-wait-bus", owner, Duration.ofSeconds(30))
            .compose(g -> bus.release("m-wait-bus", owner, g.token().orElseThrow()));
      });
      sequential(warm, "intern 10 cached, sequential", "direct", directPool, () -> ns.intern(cached));
      sequential(warm, "intern 10 cached, sequential", "event bus", caller, () -> bus.intern(NS, cached));
      sequential(warm, "intern 10 cached, sequential", "HTTP", httpCaller,
          () -> post(http, "/interners/" + NS + "/intern", new JsonObject().put("strings", cachedJson)));
      sequential(warm, "intern 10 cached, sequential", "HTTP floor", httpCaller,
          () -> post(floor, "/", new JsonObject().put("strings", cachedJson)));
      concurrent(warm, "intern 10 new, " + CONCURRENCY + " concurrent", "direct", directPool,
          () -> ns.intern(strings(10)));
      concurrent(warm, "intern 10 new, " + CONCURRENCY + " concurrent", "event bus", caller,
          () -> bus.intern(NS, strings(10)));
      concurrent(warm, "intern 10 new, " + CONCURRENCY + " concurrent", "HTTP", httpCaller,
          () -> post(http, "/interners/" + NS + "/intern", new JsonObject().put("strings", new JsonArray(strings(10)))));
      concurrent(warm, "intern 10 new, " + CONCURRENCY + " concurrent", "HTTP floor", httpCaller,
          () -> post(floor, "/", new JsonObject().put("strings", new JsonArray(strings(10)))));
      concurrent(warm, "lookup 10 ids, " + CONCURRENCY + " concurrent", "direct", directPool,
          () -> ns.lookup(tenIds.get()));
      concurrent(warm, "lookup 10 ids, " + CONCURRENCY + " concurrent", "HTTP", httpCaller,
          () -> post(http, "/interners/" + NS + "/lookup", new JsonObject().put("ids",
              new JsonArray(tenIds.get().stream().map(Long::toUnsignedString).toList()))));
    }
    report();
    mutexes.close();
  }

  private List<String> strings(int n) {
    long base = seq.getAndAdd(n);
    List<String> s = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      s.add("s-" + (base + i));
    }
    return s;
  }

  private static Future<Buffer> post(HttpClient http, String uri, JsonObject body) {
    return http.request(HttpMethod.POST, uri)
        .compose(req -> req.putHeader("content-type", "application/json").send(body.toBuffer()))
        .compose(resp -> resp.body().compose(b -> resp.statusCode() == 200 ? Future.succeededFuture(b)
            : Future.failedFuture("HTTP " + resp.statusCode() + ": " + b)));
  }

  // ---- closed-loop drivers ---------------------------------------------------------------------

  private void sequential(boolean warm, String op, String path, Object where, Supplier<Object> call) throws Exception {
    drive(warm, op, path, where, 1, call);
  }

  private void concurrent(boolean warm, String op, String path, Object where, Supplier<Object> call) throws Exception {
    drive(warm, op, path, where, CONCURRENCY, call);
  }

  /**
   * {@code concurrency} chains of calls for {@link #SECONDS}, each starting its next call when the
   * last completes: on {@code where} (a Vert.x context, as a verticle calls, or an executor, as a
   * plain Java caller does).
   */
  private void drive(boolean warm, String op, String path, Object where, int concurrency, Supplier<Object> call)
      throws Exception {
    if (!op.contains(ONLY) || !(PATHS.isEmpty() || PATHS.contains(path))) {
      return;
    }
    Samples samples = warm ? new Samples() : results.computeIfAbsent(op + " | " + path, k -> new Samples());
    Thread.sleep(SETTLE_MILLIS);
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(warm ? 1 : SECONDS);
    CountDownLatch done = new CountDownLatch(concurrency);
    long start = System.nanoTime();
    long cpuStart = processCpuNanos();
    for (int i = 0; i < concurrency; i++) {
      Runnable chain = new Chain(call, samples, end, done)::next;
      if (where instanceof Context ctx) {
        ctx.runOnContext(v -> chain.run());
      } else {
        ((ExecutorService) where).execute(chain);
      }
    }
    if (!done.await(SECONDS + 60, TimeUnit.SECONDS)) {
      throw new IllegalStateException(op + " over " + path + " did not finish");
    }
    samples.seconds += (System.nanoTime() - start) / 1e9;
    samples.cpuNanos += processCpuNanos() - cpuStart;
  }

  /**
   * CPU time of the whole process (service, load generator and direct callers alike): CPU per call
   * depends far less on the machine's load than calls/s does, so it shows a slower path on a busy
   * machine too; the floor's row gives what the HTTP exchange and the load generator cost alone.
   */
  private static long processCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
        .getOperatingSystemMXBean()).getProcessCpuTime();
  }

  private static final class Chain {
    private final Supplier<Object> call;
    private final Samples samples;
    private final long end;
    private final CountDownLatch done;

    Chain(Supplier<Object> call, Samples samples, long end, CountDownLatch done) {
      this.call = call;
      this.samples = samples;
      this.end = end;
      this.done = done;
    }

    /** Calls until the deadline; loops while calls complete at once, so that no stack grows. */
    void next() {
      while (System.nanoTime() < end) {
        long t = System.nanoTime();
        CompletableFuture<?> f;
        try {
          Object r = call.get();
          f = r instanceof Future<?> vf ? vf.toCompletionStage().toCompletableFuture()
              : ((CompletionStage<?>) r).toCompletableFuture();
        } catch (RuntimeException e) {
          f = CompletableFuture.failedFuture(e);
        }
        if (!f.isDone()) {
          f.whenComplete((v, e) -> {
            samples.add(System.nanoTime() - t, e);
            next();
          });
          return;
        }
        samples.add(System.nanoTime() - t, f.isCompletedExceptionally() ? new RuntimeException() : null);
      }
      done.countDown();
    }
  }

  private static final class Samples {
    private long[] nanos = new long[1 << 16];
    private int n;
    private int errors;
    private Throwable firstError;
    double seconds;
    long cpuNanos;

    synchronized void add(long ns, Throwable error) {
      if (error != null) {
        errors++;
        firstError = firstError == null ? error : firstError;
        return;
      }
      if (n == nanos.length) {
        nanos = Arrays.copyOf(nanos, n * 2);
      }
      nanos[n++] = ns;
    }

    synchronized double pct(int p) {
      long[] s = Arrays.copyOf(nanos, n);
      Arrays.sort(s);
      return s.length == 0 ? 0 : s[Math.min(s.length - 1, (int) Math.ceil(p / 100.0 * s.length) - 1)] / 1e6;
    }

    double rate() {
      return n / seconds;
    }

    synchronized double cpuMicrosPerCall() {
      return n + errors == 0 ? 0 : cpuNanos / 1e3 / (n + errors);
    }
  }

  private void report() {
    System.out.println("load average after the run: " + loadAverage());
    System.out.printf("%-48s %-16s %12s %10s %10s %12s %-22s %8s%n", "operation", "path", "calls/s", "p50 ms",
        "p99 ms", "CPU us/call", "vs direct", "errors");
    Map<String, Samples> directs = new LinkedHashMap<>();
    results.forEach((key, s) -> {
      String[] parts = key.split(" \\| ");
      if (parts[1].equals("direct")) {
        directs.put(parts[0], s);
      }
      Samples d = directs.get(parts[0]);
      String ratio = d == null || parts[1].equals("direct") ? "" : String.format("%.2fx p50, %.0f%% rate",
          s.pct(50) / d.pct(50), 100 * s.rate() / d.rate());
      System.out.printf("%-48s %-16s %,12.0f %10.3f %10.3f %12.1f %-22s %8d%s%n", parts[0], parts[1], s.rate(),
          s.pct(50), s.pct(99), s.cpuMicrosPerCall(), ratio, s.errors,
          s.firstError == null ? "" : " (" + s.firstError.getMessage() + ")");
    });
  }

  private static String loadAverage() {
    try {
      String[] f = Files.readString(Path.of("/proc/loadavg")).split(" ");
      return f[0] + " " + f[1] + " " + f[2];
    } catch (Exception e) {
      return "unknown";
    }
  }
}
