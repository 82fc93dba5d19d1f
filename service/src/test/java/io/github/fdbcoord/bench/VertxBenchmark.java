package io.github.fdbcoord.bench;

import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.interner.InternerOptions;
import io.github.fdbcoord.interner.InternerService;
import io.github.fdbcoord.interner.StringInterner;
import io.github.fdbcoord.mutex.MutexOptions;
import io.github.fdbcoord.mutex.MutexService;
import io.github.fdbcoord.client.CoordinationClient;
import io.github.fdbcoord.service.CoordinationVerticle;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Event bus against the direct layer API, in one run on one in-memory engine: sequential round
 * trips of an intern batch of 100 new strings, and of a mutex tryAcquire + release; then HTTP
 * requests per second for intern and lookup from a java.net.http load generator on loopback.
 *
 * <pre>mvn -q -o test-compile exec:java -Dexec.mainClass=io.github.fdbcoord.bench.VertxBenchmark
 *     [-Dbench.rounds=5 -Dbench.iterations=300 -Dbench.httpSeconds=10 -Dbench.httpConcurrency=32]</pre>
 */
public final class VertxBenchmark {
  private static final int ROUNDS = Integer.getInteger("bench.rounds", 5);
  private static final int ITERATIONS = Integer.getInteger("bench.iterations", 300);
  private static final int HTTP_SECONDS = Integer.getInteger("bench.httpSeconds", 10);
  private static final int HTTP_CONCURRENCY = Integer.getInteger("bench.httpConcurrency", 32);

  public static void main(String[] args) throws Exception {
    EmbeddedDatabase db = EmbeddedDatabase.inMemory();
    Vertx vertx = Vertx.vertx();
    List<String> root = List.of("bench", UUID.randomUUID().toString());
    JsonObject config = new JsonObject().put("rootDirectory", new JsonArray(root))
        .put("http", new JsonObject().put("enabled", true).put("port", 0)).put("workerPoolSize", 4);
    CoordinationVerticle service = new CoordinationVerticle(config, db);
    vertx.deployVerticle(service).await(30, TimeUnit.SECONDS);
    CoordinationClient client = service.client();
    // Event-bus calls are made the way a user verticle makes them: from a Vert.x event-loop context.
    Context caller = vertx.getOrCreateContext();

    ExecutorService directPool = Executors.newFixedThreadPool(4);
    List<String> internerRoot = new ArrayList<>(root);
    internerRoot.add("interner");
    InternerService direct = InternerService.create(db, InternerOptions.builder().rootPath(internerRoot)
        .maxBatchSize(1000).executor(directPool).build());
    StringInterner directNs = direct.open("bench").get();
    List<String> mutexDir = new ArrayList<>(root);
    mutexDir.add("mutex");
    MutexService mutexes = MutexService.open(db, MutexOptions.builder().directory(mutexDir)
        .reaperEnabled(false).executor(directPool).build()).get();

    AtomicInteger seq = new AtomicInteger();
    Supplier<List<String>> fresh = () -> {
      int base = seq.getAndAdd(100);
      List<String> s = new ArrayList<>(100);
      for (int i = 0; i < 100; i++) {
        s.add("string-" + (base + i));
      }
      return s;
    };

    System.out.println("machine: " + Runtime.getRuntime().availableProcessors() + " cores, Java "
        + System.getProperty("java.version") + "; rounds=" + ROUNDS + " x iterations=" + ITERATIONS);
    long[][] internDirect = new long[ROUNDS][];
    long[][] internBus = new long[ROUNDS][];
    long[][] mutexDirect = new long[ROUNDS][];
    long[][] mutexBus = new long[ROUNDS][];
    // Warm-up, then alternate direct and event bus in each round so both see the same conditions.
    for (int r = -1; r < ROUNDS; r++) {
      long[] a = time(ITERATIONS, () -> directNs.intern(fresh.get()).get());
      long[] b = timeOnContext(caller, ITERATIONS, () -> client.intern("bench", fresh.get()));
      long[] c = time(ITERATIONS, () -> {
        mutexes.tryAcquire("bench-direct", "o").get();
        mutexes.release("bench-direct", "o").get();
        return null;
      });
      long[] d = timeOnContext(caller, ITERATIONS,
          () -> client.tryAcquire("bench-bus", "o").compose(g -> client.release("bench-bus", "o", null)));
      if (r >= 0) {
        internDirect[r] = a;
        internBus[r] = b;
        mutexDirect[r] = c;
        mutexBus[r] = d;
      }
    }
    report("intern batch of 100 new strings", internDirect, internBus);
    report("mutex tryAcquire + release", mutexDirect, mutexBus);

    http(service.httpPort());

    vertx.close().await(30, TimeUnit.SECONDS);
    mutexes.close();
    directPool.shutdown();
    db.close();
    System.exit(0);
  }

  interface Call {
    Object run() throws Exception;
  }

  /** n sequential calls started on {@code ctx}, each after the previous one's reply. */
  private static long[] timeOnContext(Context ctx, int n, Supplier<Future<?>> call) throws Exception {
    long[] nanos = new long[n];
    CompletableFuture<long[]> done = new CompletableFuture<>();
    ctx.runOnContext(v -> step(0, n, nanos, call, done));
    return done.get(10, TimeUnit.MINUTES);
  }

  private static void step(int i, int n, long[] nanos, Supplier<Future<?>> call, CompletableFuture<long[]> done) {
    if (i == n) {
      done.complete(nanos);
      return;
    }
    long t = System.nanoTime();
    call.get().onComplete(ar -> {
      nanos[i] = System.nanoTime() - t;
      if (ar.failed()) {
        done.completeExceptionally(ar.cause());
      } else {
        step(i + 1, n, nanos, call, done);
      }
    });
  }

  private static long[] time(int n, Call call) throws Exception {
    long[] nanos = new long[n];
    for (int i = 0; i < n; i++) {
      long t = System.nanoTime();
      call.run();
      nanos[i] = System.nanoTime() - t;
    }
    return nanos;
  }

  private static void report(String what, long[][] direct, long[][] bus) {
    long[] d = flatten(direct);
    long[] b = flatten(bus);
    double dm = mean(d);
    double bm = mean(b);
    System.out.printf("%s: direct mean %.3f ms (p50 %.3f, p99 %.3f) | event bus mean %.3f ms (p50 %.3f, p99 %.3f)"
        + " | overhead %+.1f%% of the mean, %+.1f%% of the median%n", what, dm / 1e6, pct(d, 50) / 1e6,
        pct(d, 99) / 1e6, bm / 1e6, pct(b, 50) / 1e6, pct(b, 99) / 1e6, 100 * (bm - dm) / dm,
        100.0 * (pct(b, 50) - pct(d, 50)) / pct(d, 50));
    StringBuilder rounds = new StringBuilder("  per round (direct/bus mean ms):");
    for (int r = 0; r < direct.length; r++) {
      rounds.append(String.format(" %.3f/%.3f", mean(direct[r]) / 1e6, mean(bus[r]) / 1e6));
    }
    System.out.println(rounds);
  }

  private static void http(int port) throws Exception {
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .executor(Executors.newFixedThreadPool(2)).build();
    AtomicInteger seq = new AtomicInteger();
    // Ids to look up: 10 per request, interned beforehand.
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      JsonArray strings = new JsonArray();
      for (int j = 0; j < 10; j++) {
        strings.add("lookup-" + (i * 10 + j));
      }
      HttpResponse<String> r = http.send(post(port, "/interners/http/intern", new JsonObject().put("strings", strings)),
          HttpResponse.BodyHandlers.ofString());
      new JsonObject(r.body()).getJsonArray("ids").forEach(id -> ids.add((String) id));
    }
    load(http, "HTTP intern (10 new strings per request)", () -> {
      JsonArray strings = new JsonArray();
      int base = seq.getAndAdd(10);
      for (int j = 0; j < 10; j++) {
        strings.add("http-" + (base + j));
      }
      return post(port, "/interners/http/intern", new JsonObject().put("strings", strings));
    });
    AtomicInteger next = new AtomicInteger();
    load(http, "HTTP lookup (10 ids per request)", () -> {
      JsonArray batch = new JsonArray();
      int base = (next.getAndIncrement() * 10) % (ids.size() - 10);
      for (int j = 0; j < 10; j++) {
        batch.add(ids.get(base + j));
      }
      return post(port, "/interners/http/lookup", new JsonObject().put("ids", batch));
    });
  }

  private static HttpRequest post(int port, String path, JsonObject body) {
    return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(30)).header("content-type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body.encode())).build();
  }

  private static void load(HttpClient http, String what, Supplier<HttpRequest> request) throws Exception {
    Semaphore inFlight = new Semaphore(HTTP_CONCURRENCY);
    List<Long> latencies = java.util.Collections.synchronizedList(new ArrayList<>());
    AtomicInteger errors = new AtomicInteger();
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(HTTP_SECONDS);
    long start = System.nanoTime();
    int sent = 0;
    int maxRequests = 2_000_000;
    while (System.nanoTime() < end && sent < maxRequests) {
      inFlight.acquire();
      long t = System.nanoTime();
      sent++;
      http.sendAsync(request.get(), HttpResponse.BodyHandlers.ofString()).whenComplete((r, e) -> {
        if (e != null || r.statusCode() != 200) {
          errors.incrementAndGet();
        } else {
          latencies.add(System.nanoTime() - t);
        }
        inFlight.release();
      });
    }
    inFlight.acquire(HTTP_CONCURRENCY);
    double seconds = (System.nanoTime() - start) / 1e9;
    long[] l = latencies.stream().mapToLong(Long::longValue).toArray();
    System.out.printf("%s: %d requests in %.1f s = %.0f req/s, %d errors, concurrency %d, latency p50 %.2f ms,"
        + " p99 %.2f ms%n", what, sent, seconds, sent / seconds, errors.get(), HTTP_CONCURRENCY,
        pct(l, 50) / 1e6, pct(l, 99) / 1e6);
  }

  private static long[] flatten(long[][] rounds) {
    return Arrays.stream(rounds).flatMapToLong(Arrays::stream).toArray();
  }

  private static double mean(long[] v) {
    return Arrays.stream(v).average().orElse(0);
  }

  private static double pct(long[] v, int p) {
    long[] s = v.clone();
    Arrays.sort(s);
    return s.length == 0 ? 0 : s[Math.min(s.length - 1, (int) Math.ceil(p / 100.0 * s.length) - 1)];
  }
}
