package io.github.fdbcoord.bench;

import com.apple.foundationdb.Database;
import com.hazelcast.config.Config;
import io.github.fdbcoord.cluster.FaultInjection;
import io.github.fdbcoord.cluster.FdbClusterManager;
import io.github.fdbcoord.cluster.FdbClusterManagerOptions;
import io.github.fdbcoord.cluster.FdbLock;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.embedded.EmbeddedOptions;
import io.github.fdbcoord.store.Store;
import io.github.fdbcoord.store.StoreOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.shareddata.AsyncMap;
import io.vertx.core.shareddata.Counter;
import io.vertx.core.shareddata.Lock;
import io.vertx.core.spi.cluster.ClusterManager;
import io.vertx.core.spi.cluster.RegistrationInfo;
import io.vertx.spi.cluster.hazelcast.ConfigUtil;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * FdbClusterManager against vertx-hazelcast, side by side in one run: three clustered Vert.x nodes
 * per manager in this JVM (each its own Vertx with its own manager, event bus on 127.0.0.1; the FDB
 * nodes share one database), the managers alternating.
 *
 * <p>Measures: join time of 3 nodes; event-bus request/reply across two nodes (p50/p99); SharedData
 * lock acquire+release cycles/s and hand-off release → next waiter on another node (p50/p99);
 * counter increments/s and async-map put/get per second (16 in flight); holder's node crashed → next
 * waiter holds the lock, and → the dead node's registrations are gone on every node; holder paused
 * (its timer and event loops blocked) → next waiter holds the lock, and what the resumed holder sees.
 *
 * <p>Store of the FDB nodes: the embedded engine in memory and durable (a temporary data
 * directory); with {@code FDB_CLUSTER_FILE} set, a real FoundationDB cluster instead of the durable
 * engine (every node of the run opens it through {@code Store}, as nodes in separate JVMs would).
 *
 * <pre>
 * mvn -B -ntp -q -o -pl cluster -am test-compile exec:java \
 *   -Dexec.mainClass=io.github.fdbcoord.bench.ClusterManagerBenchmark [-Dexec.args="ROUNDS PAUSE_SECONDS"]
 * </pre>
 * (run from the cluster module's directory, or with {@code java -cp} as BENCHMARKS.md shows; ROUNDS 0
 * runs only the crash and pause experiments).
 */
public final class ClusterManagerBenchmark {
  private static final int WINDOW = 16;
  private static final Duration PHASE = Duration.ofSeconds(3);

  private ClusterManagerBenchmark() {}

  /** One kind of cluster: how its nodes get their managers, and how a node crashes. */
  private interface Kind extends AutoCloseable {
    String name();

    ClusterManager newManager();

    /** Stops the node at once without leaving (heartbeats and event-bus server). */
    void crash(Vertx node, ClusterManager manager);

    @Override
    default void close() {}
  }

  private static final class FdbKind implements Kind {
    private final String name;
    private final Database db;
    private final AutoCloseable owner;
    private final FdbClusterManagerOptions options;

    FdbKind(String name, Database db, AutoCloseable owner, FdbClusterManagerOptions options) {
      this.name = name;
      this.db = db;
      this.owner = owner;
      this.options = options.toBuilder().database(db)
          .directory(List.of("fdb-coord-bench", UUID.randomUUID().toString())).build();
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public ClusterManager newManager() {
      return new FdbClusterManager(options);
    }

    @Override
    public void crash(Vertx node, ClusterManager manager) {
      FaultInjection.crash((FdbClusterManager) manager);
      node.close(); // stops the event-bus server; a crashed manager removes nothing on leave
    }

    @Override
    public void close() {
      try {
        owner.close();
      } catch (Exception e) {
        throw new RuntimeException(e);
      }
    }
  }

  private static final class HazelcastKind implements Kind {
    private final String clusterName = "bench-" + UUID.randomUUID();

    @Override
    public String name() {
      return "hazelcast";
    }

    @Override
    public ClusterManager newManager() {
      Config config = ConfigUtil.loadConfig();
      config.setClusterName(clusterName);
      config.setProperty("hazelcast.phone.home.enabled", "false");
      config.setProperty("hazelcast.logging.type", "none");
      config.getNetworkConfig().getJoin().getMulticastConfig().setEnabled(false);
      config.getNetworkConfig().getJoin().getTcpIpConfig().setEnabled(true).addMember("127.0.0.1");
      config.getNetworkConfig().getInterfaces().setEnabled(true).addInterface("127.0.0.1");
      return new HazelcastClusterManager(config);
    }

    @Override
    public void crash(Vertx node, ClusterManager manager) {
      ((HazelcastClusterManager) manager).getHazelcastInstance().getLifecycleService().terminate();
      node.close();
    }
  }

  private record Nodes(List<Vertx> vertx, List<ClusterManager> managers, double joinMillis) {}

  private record Figures(String kind, double joinMs, double rrP50, double rrP99, double lockCycles, double handP50,
      double handP99, double counterOps, double putOps, double getOps) {}

  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("senders")) {
      senders(args.length > 1 ? Integer.parseInt(args[1]) : 2);
      System.exit(0);
    }
    if (args.length > 0 && args[0].equals("pingpong")) {
      pingPongRounds(args.length > 1 ? Integer.parseInt(args[1]) : 2);
      return;
    }
    if (args.length > 0 && args[0].equals("counter")) {
      counterRounds(args.length > 1 ? Integer.parseInt(args[1]) : 3);
      System.exit(0);
    }
    if (args.length > 0 && args[0].equals("detect")) {
      detect(args.length > 1 ? Integer.parseInt(args[1]) : 2);
      System.exit(0);
    }
    if (args.length > 0 && args[0].equals("locks")) {
      lockRounds(args.length > 1 ? Integer.parseInt(args[1]) : 3);
      System.exit(0);
    }
    if (args.length > 0 && args[0].equals("fdb")) {
      fdbRounds(args.length > 1 ? Integer.parseInt(args[1]) : 2);
      System.exit(0);
    }
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 2;
    Duration pause = Duration.ofSeconds(args.length > 1 ? Long.parseLong(args[1]) : 20);
    System.out.printf("ClusterManagerBenchmark: %d round(s), %d cores, %s%n", rounds,
        Runtime.getRuntime().availableProcessors(), System.getProperty("java.vm.version"));

    List<Figures> figures = new ArrayList<>();
    for (int round = 0; round < rounds; round++) {
      for (Supplier<Kind> kind : List.<Supplier<Kind>>of(ClusterManagerBenchmark::fdbMemory,
          HazelcastKind::new, ClusterManagerBenchmark::fdbDurableOrCluster)) {
        try (Kind k = kind.get()) {
          Figures f = measure(k);
          figures.add(f);
          print(f);
        }
      }
    }
    System.out.println();
    System.out.println("| manager | join 3 nodes ms | req/reply p50 ms | p99 ms | lock cycles/s | hand-off p50 ms | p99 ms | counter incr/s | map put/s | map get/s |");
    System.out.println("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for (Figures f : figures) {
      System.out.printf(Locale.ROOT, "| %s | %.0f | %.2f | %.2f | %.0f | %.2f | %.2f | %.0f | %.0f | %.0f |%n", f.kind(), f.joinMs(),
          f.rrP50(), f.rrP99(), f.lockCycles(), f.handP50(), f.handP99(), f.counterOps(), f.putOps(), f.getOps());
    }

    System.out.println();
    for (Supplier<Kind> kind : List.<Supplier<Kind>>of(ClusterManagerBenchmark::fdbMemoryDefaultLease,
        ClusterManagerBenchmark::fdbMemoryShortLease, HazelcastKind::new)) {
      try (Kind k = kind.get()) {
        crash(k);
      }
    }
    try (Kind k = fdbMemoryDefaultLease()) {
      pause(k, pause);
    }
    System.exit(0); // Hazelcast leaves non-daemon threads behind
  }

  /**
   * Counter increments only, on FoundationDB ({@code FDB_CLUSTER_FILE}; the durable engine without it)
   * and Hazelcast alternating, {@code rounds} times: 1 in flight on one node, 16 in flight on one
   * node, 16 in flight spread over the three nodes (as {@link #measure}); for FoundationDB also the
   * committed transactions and the attempts (conflicts included) per increment.
   */
  private static void counterRounds(int rounds) throws Exception {
    System.out.printf(Locale.ROOT, "ClusterManagerBenchmark counter: %d round(s), %d cores, load average %.2f%n", rounds,
        Runtime.getRuntime().availableProcessors(), loadAverage());
    for (int round = 0; round < rounds; round++) {
      for (Supplier<Kind> kind : List.<Supplier<Kind>>of(ClusterManagerBenchmark::fdbDurableOrCluster, HazelcastKind::new)) {
        try (Kind k = kind.get()) {
          Nodes nodes = start(k);
          try {
            List<Counter> counters = new ArrayList<>();
            for (Vertx v : nodes.vertx()) {
              counters.add(await(v.sharedData().getCounter("bench.counter")));
            }
            windowed(1, i -> counters.get(0).incrementAndGet()); // warm-up
            StringBuilder line = new StringBuilder(k.name()).append(':');
            for (int[] shape : new int[][] {{1, 1}, {16, 1}, {16, 3}}) {
              long[] before = counterTransactions(nodes);
              long incrementsBefore = await(counters.get(0).get());
              double rate = windowed(shape[0], i -> counters.get(i % shape[1]).incrementAndGet());
              long increments = await(counters.get(0).get()) - incrementsBefore;
              long[] after = counterTransactions(nodes);
              line.append(String.format(Locale.ROOT, " %d in flight on %d node(s) %.0f incr/s", shape[0], shape[1], rate));
              if (after[1] > 0) {
                line.append(String.format(Locale.ROOT, " (%.3f commits, %.3f attempts per increment)",
                    (after[0] - before[0]) / (double) increments, (after[1] - before[1]) / (double) increments));
              }
              line.append(';');
            }
            System.out.println(line);
          } finally {
            stop(nodes);
          }
        }
      }
      System.out.printf(Locale.ROOT, "load average %.2f%n", loadAverage());
    }
  }

  /** Counter transactions committed and attempted by the FDB nodes of {@code nodes} (zeros for Hazelcast). */
  private static long[] counterTransactions(Nodes nodes) {
    long[] sum = new long[2];
    for (ClusterManager m : nodes.managers()) {
      if (m instanceof FdbClusterManager fdb) {
        long[] c = io.github.fdbcoord.cluster.CounterProbe.commitsAndAttempts(fdb);
        sum[0] += c[0];
        sum[1] += c[1];
      }
    }
    return sum;
  }

  private static double loadAverage() {
    return java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
  }

  /**
   * Crash detection and lock ping-pong, this manager (default options: lease 10 s, failure
   * detection with a 500 ms suspicion window) and Hazelcast alternating, {@code rounds} times.
   */
  private static void detect(int rounds) throws Exception {
    System.out.printf("ClusterManagerBenchmark detect: %d round(s), %d cores, load average %.2f%n", rounds,
        Runtime.getRuntime().availableProcessors(), java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    for (int round = 0; round < rounds; round++) {
      for (Supplier<Kind> kind : List.<Supplier<Kind>>of(ClusterManagerBenchmark::fdbMemoryDefaultLease, HazelcastKind::new)) {
        try (Kind k = kind.get()) {
          pingPong(k);
        }
        try (Kind k = kind.get()) {
          crash(k);
        }
      }
      System.out.printf("load average %.2f%n", java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    }
  }

  /**
   * The figures of this manager alone on its durable store, or on {@code FDB_CLUSTER_FILE}'s cluster,
   * {@code rounds} times: what to compare across builds (issue 36's hand-off before and after the hints).
   */
  private static void fdbRounds(int rounds) throws Exception {
    for (int round = 0; round < rounds; round++) {
      try (Kind k = fdbDurableOrCluster()) {
        print(measure(k));
      }
      System.out.printf(Locale.ROOT, "load average %.2f%n", java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    }
  }

  /** Lock ping-pong only, this manager (default options) and Hazelcast alternating, {@code rounds} times. */
  private static void pingPongRounds(int rounds) throws Exception {
    System.out.printf(Locale.ROOT, "ClusterManagerBenchmark pingpong: %d round(s), %d cores, load average %.2f%n", rounds,
        Runtime.getRuntime().availableProcessors(), java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    for (int round = 0; round < rounds; round++) {
      for (Supplier<Kind> kind : List.<Supplier<Kind>>of(ClusterManagerBenchmark::fdbMemoryDefaultLease, HazelcastKind::new)) {
        try (Kind k = kind.get()) {
          pingPong(k);
        }
        System.out.printf(Locale.ROOT, "load average %.2f%n", java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
      }
    }
    System.exit(0); // Hazelcast leaves non-daemon threads behind
  }

  /**
   * Nodes B and C each acquire and release one lock in a loop at the same time, so the lock
   * alternates between them: cycles per second (both together), the time from asking to holding,
   * and the hand-off: from one node's call to release to the other node holding the lock.
   */
  private static void pingPong(Kind kind) throws Exception {
    Nodes nodes = start(kind);
    try {
      Vertx b = nodes.vertx().get(1);
      Vertx c = nodes.vertx().get(2);
      for (int i = 0; i < 50; i++) {
        await(b.sharedData().getLockWithTimeout("bench.pingpong", 10_000)).release();
        await(c.sharedData().getLockWithTimeout("bench.pingpong", 10_000)).release();
      }
      java.util.concurrent.ConcurrentLinkedQueue<Double> waits = new java.util.concurrent.ConcurrentLinkedQueue<>();
      java.util.concurrent.ConcurrentLinkedQueue<Double> handOffs = new java.util.concurrent.ConcurrentLinkedQueue<>();
      // Who released last and when (nanoTime), written by the holder just before it releases.
      java.util.concurrent.atomic.AtomicReference<Object[]> lastRelease = new java.util.concurrent.atomic.AtomicReference<>();
      AtomicLong cycles = new AtomicLong();
      long end = System.nanoTime() + PHASE.toNanos();
      long t0 = System.nanoTime();
      List<CompletableFuture<Void>> loops = new ArrayList<>();
      for (Vertx v : List.of(b, c)) {
        loops.add(CompletableFuture.runAsync(() -> {
          try {
            while (System.nanoTime() < end) {
              long asked = System.nanoTime();
              Lock l = await(v.sharedData().getLockWithTimeout("bench.pingpong", 10_000));
              long held = System.nanoTime();
              waits.add((held - asked) / 1e6);
              Object[] previous = lastRelease.get();
              if (previous != null && previous[0] != v) {
                handOffs.add((held - (long) previous[1]) / 1e6);
              }
              lastRelease.set(new Object[] {v, System.nanoTime()});
              l.release();
              cycles.incrementAndGet();
            }
          } catch (Exception e) {
            throw new RuntimeException(e);
          }
        }));
      }
      CompletableFuture.allOf(loops.toArray(new CompletableFuture<?>[0])).get(120, TimeUnit.SECONDS);
      double seconds = (System.nanoTime() - t0) / 1e9;
      double[] w = waits.stream().mapToDouble(Double::doubleValue).toArray();
      double[] h = handOffs.stream().mapToDouble(Double::doubleValue).toArray();
      System.out.printf(Locale.ROOT, "lock ping-pong B/C, %s: %.0f cycles/s, ask-to-hold p50 %.2f ms p99 %.2f ms (%d acquisitions),"
              + " hand-off B→C p50 %.2f ms p99 %.2f ms (%d hand-offs)%n",
          kind.name(), cycles.get() / seconds, pct(w, 50), pct(w, 99), w.length,
          h.length == 0 ? Double.NaN : pct(h, 50), h.length == 0 ? Double.NaN : pct(h, 99), h.length);
    } finally {
      stop(nodes);
    }
  }

  private static FdbClusterManagerOptions benchOptions() {
    return FdbClusterManagerOptions.defaults();
  }

  private static Kind fdbMemory() {
    EmbeddedDatabase db = EmbeddedDatabase.inMemory();
    return new FdbKind("fdb (in memory)", db, db, benchOptions());
  }

  private static Kind fdbMemoryDefaultLease() {
    EmbeddedDatabase db = EmbeddedDatabase.inMemory();
    return new FdbKind("fdb (in memory, lease 10 s, heartbeat 2 s, reaper 1 s)", db, db, benchOptions());
  }

  private static Kind fdbMemoryShortLease() {
    EmbeddedDatabase db = EmbeddedDatabase.inMemory();
    return new FdbKind("fdb (in memory, lease 2 s, heartbeat 0.5 s, reaper 0.25 s)", db, db, FdbClusterManagerOptions.builder()
        .nodeLease(Duration.ofSeconds(2)).heartbeatInterval(Duration.ofMillis(500))
        .reaperInterval(Duration.ofMillis(250)).logRetention(Duration.ofSeconds(10)).build());
  }

  private static Kind fdbDurableOrCluster() {
    String clusterFile = System.getenv("FDB_CLUSTER_FILE");
    if (clusterFile != null && !clusterFile.isEmpty()) {
      Store store = Store.open(StoreOptions.cluster(Path.of(clusterFile)));
      return new FdbKind("fdb (FoundationDB cluster)", store.database(), store, benchOptions());
    }
    try {
      Path dir = Files.createTempDirectory("fdb-cluster-bench");
      EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.durable(dir));
      return new FdbKind("fdb (durable, fsync)", db, () -> {
        db.close();
        try (var files = Files.walk(dir)) {
          files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
      }, benchOptions());
    } catch (java.io.IOException e) {
      throw new RuntimeException(e);
    }
  }

  // ------------------------------------------------------------------ cluster set-up

  private static Nodes start(Kind kind) throws Exception {
    long t0 = System.nanoTime();
    List<ClusterManager> managers = new ArrayList<>();
    List<Future<Vertx>> starting = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      ClusterManager m = kind.newManager();
      managers.add(m);
      starting.add(Vertx.builder()
          .with(new VertxOptions().setEventBusOptions(new EventBusOptions().setHost("127.0.0.1").setClusterPublicHost("127.0.0.1")))
          .withClusterManager(m)
          .buildClustered());
    }
    List<Vertx> nodes = new ArrayList<>();
    for (Future<Vertx> f : starting) {
      nodes.add(await(f));
    }
    while (managers.stream().anyMatch(m -> m.getNodes().size() < 3)) {
      Thread.sleep(1);
    }
    return new Nodes(nodes, managers, (System.nanoTime() - t0) / 1e6);
  }

  private static void stop(Nodes nodes) {
    for (Vertx v : nodes.vertx()) {
      try {
        v.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
      } catch (Exception e) {
        // a crashed node may fail to close cleanly
      }
    }
  }

  // ------------------------------------------------------------------ the figures

  private static Figures measure(Kind kind) throws Exception {
    Nodes nodes = start(kind);
    try {
      Vertx a = nodes.vertx().get(0);
      Vertx b = nodes.vertx().get(1);
      Vertx c = nodes.vertx().get(2);

      // Request/reply from node 0 to a consumer on node 1.
      await(b.eventBus().consumer("bench.echo", m -> m.reply(m.body())).completion());
      for (int i = 0; i < 500; i++) {
        try {
          await(a.eventBus().request("bench.echo", "ping"));
        } catch (Exception e) {
          Thread.sleep(5); // the registration may not have reached node 0 yet
        }
      }
      double[] rr = new double[3000];
      for (int i = 0; i < rr.length; i++) {
        long t = System.nanoTime();
        await(a.eventBus().request("bench.echo", "ping"));
        rr[i] = (System.nanoTime() - t) / 1e6;
      }

      // Uncontended acquire + release on node 1.
      for (int i = 0; i < 200; i++) {
        await(b.sharedData().getLockWithTimeout("bench.cycle", 10_000)).release();
      }
      long cycles = 0;
      long end = System.nanoTime() + PHASE.toNanos();
      long t0 = System.nanoTime();
      while (System.nanoTime() < end) {
        await(b.sharedData().getLockWithTimeout("bench.cycle", 10_000)).release();
        cycles++;
      }
      double lockCycles = cycles / ((System.nanoTime() - t0) / 1e9);

      double[] hand = handOffs(b, c).fromCall();

      // Counter and async map, 16 operations in flight spread over the three nodes.
      List<Counter> counters = new ArrayList<>();
      List<AsyncMap<String, String>> maps = new ArrayList<>();
      for (Vertx v : nodes.vertx()) {
        counters.add(await(v.sharedData().getCounter("bench.counter")));
        maps.add(await(v.sharedData().<String, String>getAsyncMap("bench.map")));
      }
      double counterOps = windowed(i -> counters.get(i % 3).incrementAndGet());
      double putOps = windowed(i -> maps.get(i % 3).put("k" + (i % 1000), "value-" + i));
      double getOps = windowed(i -> maps.get(i % 3).get("k" + (i % 1000)));

      return new Figures(kind.name(), nodes.joinMillis(), pct(rr, 50), pct(rr, 99), lockCycles, pct(hand, 50), pct(hand, 99),
          counterOps, putOps, getOps);
    } finally {
      stop(nodes);
    }
  }

  /**
   * Hand-off latencies, ms: from the call to release to the waiter on the other node holding the lock, and (this
   * manager's {@link FdbLock} only, null for Hazelcast, whose release reports no commit) from the release's store
   * commit completing to the waiter holding; 0 when the waiter held it first (its hint can arrive before the
   * releasing node's own future completes).
   */
  private record HandOffs(double[] fromCall, double[] fromCommit) {}

  /** Hand-off: the holder releases while the other node waits (queued 20 ms earlier). */
  private static HandOffs handOffs(Vertx b, Vertx c) throws Exception {
    double[] hand = new double[150];
    double[] fromCommit = new double[hand.length];
    boolean committedKnown = true;
    Vertx holderNode = b;
    Vertx waiterNode = c;
    Lock held = await(holderNode.sharedData().getLockWithTimeout("bench.handoff", 10_000));
    for (int i = 0; i < hand.length; i++) {
      CompletableFuture<Lock> waiting = waiterNode.sharedData().getLockWithTimeout("bench.handoff", 10_000)
          .toCompletionStage().toCompletableFuture();
      AtomicLong acquiredAt = new AtomicLong();
      waiting.thenRun(() -> acquiredAt.set(System.nanoTime()));
      Thread.sleep(20); // let the waiter queue up
      long released = System.nanoTime();
      CompletableFuture<Long> committedAt;
      if (held instanceof FdbLock f) {
        committedAt = f.releaseAsync().thenApply(ev -> System.nanoTime());
      } else {
        held.release();
        committedAt = CompletableFuture.completedFuture(0L);
        committedKnown = false;
      }
      held = waiting.get(30, TimeUnit.SECONDS);
      long committed = committedAt.get(30, TimeUnit.SECONDS);
      while (acquiredAt.get() == 0) {
        Thread.onSpinWait();
      }
      hand[i] = (acquiredAt.get() - released) / 1e6;
      fromCommit[i] = Math.max(0, (acquiredAt.get() - committed) / 1e6);
      Vertx swap = holderNode;
      holderNode = waiterNode;
      waiterNode = swap;
    }
    held.release();
    return new HandOffs(hand, committedKnown ? fromCommit : null);
  }

  /**
   * SharedData locks only, on FoundationDB ({@code FDB_CLUSTER_FILE}; the durable engine without it) and
   * Hazelcast alternating, {@code rounds} times: acquire + release cycles/s on one node with 1 and with 16
   * callers (one lock), the hand-off to a waiter on another node (as {@link #measure}), and the ping-pong of one
   * lock between two nodes (as {@link #pingPong}).
   */
  private static void lockRounds(int rounds) throws Exception {
    System.out.printf(Locale.ROOT, "ClusterManagerBenchmark locks: %d round(s), %d cores, load average %.2f%n", rounds,
        Runtime.getRuntime().availableProcessors(), loadAverage());
    for (int round = 0; round < rounds; round++) {
      for (Supplier<Kind> kind : List.<Supplier<Kind>>of(ClusterManagerBenchmark::fdbDurableOrCluster, HazelcastKind::new)) {
        try (Kind k = kind.get()) {
          Nodes nodes = start(k);
          try {
            Vertx b = nodes.vertx().get(1);
            Op cycle = i -> b.sharedData().getLockWithTimeout("bench.cycle", 10_000).map(l -> {
              l.release();
              return null;
            });
            windowed(1, cycle); // warm-up
            double one = windowed(1, cycle);
            double sixteen = windowed(16, cycle);
            HandOffs hand = handOffs(b, nodes.vertx().get(2));
            System.out.printf(Locale.ROOT, "%s: lock cycles/s on one node, 1 caller %.0f, 16 callers %.0f;"
                + " hand-off to another node, release called → held, p50 %.2f ms p99 %.2f ms%s%n", k.name(), one, sixteen,
                pct(hand.fromCall(), 50), pct(hand.fromCall(), 99), hand.fromCommit() == null ? ""
                    : String.format(Locale.ROOT, "; release committed → held, p50 %.2f ms p99 %.2f ms",
                        pct(hand.fromCommit(), 50), pct(hand.fromCommit(), 99)));
          } finally {
            stop(nodes);
          }
        }
        try (Kind k = kind.get()) {
          pingPong(k);
        }
      }
      System.out.printf(Locale.ROOT, "load average %.2f%n", loadAverage());
    }
  }

  private interface Op {
    Future<?> start(int i);
  }

  /** Operations per second over {@link #PHASE} with {@link #WINDOW} in flight. */
  private static double windowed(Op op) throws Exception {
    return windowed(WINDOW, op);
  }

  /** Operations per second over {@link #PHASE} with {@code window} in flight. */
  private static double windowed(int window, Op op) throws Exception {
    java.util.concurrent.Semaphore inFlight = new java.util.concurrent.Semaphore(window);
    AtomicLong done = new AtomicLong();
    AtomicLong failed = new AtomicLong();
    java.util.concurrent.atomic.AtomicReference<Throwable> firstFailure = new java.util.concurrent.atomic.AtomicReference<>();
    long t0 = System.nanoTime();
    long end = t0 + PHASE.toNanos();
    int i = 0;
    while (System.nanoTime() < end) {
      inFlight.acquire();
      op.start(i++).onComplete(ar -> {
        if (ar.succeeded()) {
          done.incrementAndGet();
        } else {
          failed.incrementAndGet();
          firstFailure.compareAndSet(null, ar.cause());
        }
        inFlight.release();
      });
    }
    inFlight.acquire(window);
    if (failed.get() > 0) {
      throw new IllegalStateException(failed.get() + " operations failed", firstFailure.get());
    }
    return done.get() / ((System.nanoTime() - t0) / 1e9);
  }

  // ------------------------------------------------------------------ failures

  private static void crash(Kind kind) throws Exception {
    Nodes nodes = start(kind);
    try {
      Vertx dead = nodes.vertx().get(0);
      ClusterManager deadManager = nodes.managers().get(0);
      String deadId = deadManager.getNodeId();
      await(dead.eventBus().consumer("bench.crash", m -> m.reply("x")).completion());
      Lock held = await(dead.sharedData().getLockWithTimeout("bench.crash-lock", 10_000));
      CompletableFuture<Lock> waiting = nodes.vertx().get(1).sharedData().getLockWithTimeout("bench.crash-lock", 300_000)
          .toCompletionStage().toCompletableFuture();
      Thread.sleep(500);
      long t0 = System.nanoTime();
      kind.crash(dead, deadManager);
      AtomicLong lockAt = new AtomicLong();
      waiting.thenRun(() -> lockAt.set(System.nanoTime()));
      long registrationsGoneAt = 0;
      while (registrationsGoneAt == 0 || lockAt.get() == 0) {
        if (registrationsGoneAt == 0 && noRegistrationOf(deadId, "bench.crash", nodes.managers().subList(1, 3))) {
          registrationsGoneAt = System.nanoTime();
        }
        if ((System.nanoTime() - t0) > TimeUnit.SECONDS.toNanos(180)) {
          throw new IllegalStateException("nothing happened within 180 s of the crash");
        }
        Thread.sleep(5);
      }
      System.out.printf(Locale.ROOT, "crash of the holder's node, %s: next waiter holds the lock after %.2f s; the dead node's"
          + " registrations are gone on every live node after %.2f s%n", kind.name(),
          (lockAt.get() - t0) / 1e9, (registrationsGoneAt - t0) / 1e9);
      waiting.get().release();
      held.hashCode();
    } finally {
      stop(nodes);
    }
  }

  /**
   * A sender (node 1) requests node 0's consumer every 50 ms (send timeout 5 s); node 0 crashes.
   * For the requests sent between the crash and the moment the dead node's registration is gone on
   * the sender ("eviction"), and for those sent after it: how many failed fast, how many waited
   * out the send timeout, and how long the fast failures took. This manager (default options) and
   * Hazelcast alternating, {@code rounds} times.
   */
  private static void senders(int rounds) throws Exception {
    System.out.printf("ClusterManagerBenchmark senders: %d round(s), %d cores, load average %.2f%n", rounds,
        Runtime.getRuntime().availableProcessors(), java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    for (int round = 0; round < rounds; round++) {
      for (Supplier<Kind> kind : List.<Supplier<Kind>>of(ClusterManagerBenchmark::fdbMemoryDefaultLease, HazelcastKind::new)) {
        try (Kind k = kind.get()) {
          crashUnderRequests(k);
        }
      }
      System.out.printf("load average %.2f%n", java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    }
  }

  private record Sent(long atNanos, long tookMillis, String result) {}

  private static void crashUnderRequests(Kind kind) throws Exception {
    long sendTimeout = 5000;
    Nodes nodes = start(kind);
    try {
      Vertx dead = nodes.vertx().get(0);
      Vertx sender = nodes.vertx().get(1);
      ClusterManager deadManager = nodes.managers().get(0);
      String deadId = deadManager.getNodeId();
      await(dead.eventBus().consumer("bench.senders", m -> m.reply("x")).completion());
      while (true) {
        try {
          await(sender.eventBus().request("bench.senders", "ping"));
          break;
        } catch (Exception e) {
          Thread.sleep(20);
        }
      }
      java.util.Queue<Sent> sent = new java.util.concurrent.ConcurrentLinkedQueue<>();
      long periodic = sender.setPeriodic(50, t -> {
        long at = System.nanoTime();
        sender.eventBus().request("bench.senders", "ping", new io.vertx.core.eventbus.DeliveryOptions().setSendTimeout(sendTimeout))
            .onComplete(ar -> sent.add(new Sent(at, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - at), ar.succeeded() ? "ok"
                : ar.cause() instanceof io.vertx.core.eventbus.ReplyException re ? re.failureType().name() : "error")));
      });
      Thread.sleep(500);
      long t0 = System.nanoTime();
      kind.crash(dead, deadManager);
      long evicted = 0;
      while (evicted == 0) {
        if (noRegistrationOf(deadId, "bench.senders", List.of(nodes.managers().get(1)))) {
          evicted = System.nanoTime();
        }
        if ((System.nanoTime() - t0) > TimeUnit.SECONDS.toNanos(120)) {
          throw new IllegalStateException("no eviction within 120 s of the crash");
        }
        Thread.sleep(5);
      }
      Thread.sleep(2000);
      sender.cancelTimer(periodic);
      Thread.sleep(sendTimeout + 1000);
      long evictedAt = evicted;
      List<Sent> before = sent.stream().filter(x -> x.atNanos() > t0 && x.atNanos() <= evictedAt).toList();
      List<Sent> after = sent.stream().filter(x -> x.atNanos() > evictedAt).toList();
      double[] fastWaits = before.stream().filter(x -> !x.result().equals("TIMEOUT") && !x.result().equals("ok"))
          .mapToDouble(Sent::tookMillis).toArray();
      System.out.printf(Locale.ROOT, "requests to a crashed consumer, %s: eviction after %.2f s; sent between crash and eviction %d:"
          + " %d failed fast (%s; wait p50 %s ms, max %s ms), %d timed out (after %d ms), %d answered; sent after the eviction %d:"
          + " %d timed out, slowest %d ms%n", kind.name(), (evictedAt - t0) / 1e9, before.size(), fastWaits.length,
          before.stream().map(Sent::result).filter(r -> !r.equals("TIMEOUT") && !r.equals("ok")).distinct().toList(),
          fastWaits.length == 0 ? "-" : String.format(Locale.ROOT, "%.0f", pct(fastWaits, 50)),
          fastWaits.length == 0 ? "-" : String.format(Locale.ROOT, "%.0f", pct(fastWaits, 100)),
          before.stream().filter(x -> x.result().equals("TIMEOUT")).count(), sendTimeout,
          before.stream().filter(x -> x.result().equals("ok")).count(), after.size(),
          after.stream().filter(x -> x.result().equals("TIMEOUT")).count(), after.stream().mapToLong(Sent::tookMillis).max().orElse(-1));
    } finally {
      stop(nodes);
    }
  }

  private static boolean noRegistrationOf(String nodeId, String address, List<ClusterManager> managers) throws Exception {
    for (ClusterManager m : managers) {
      Promise<List<RegistrationInfo>> p = Promise.promise();
      m.getRegistrations(address, p);
      List<RegistrationInfo> regs = p.future().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
      if (regs != null && regs.stream().anyMatch(r -> r.nodeId().equals(nodeId))) {
        return false;
      }
    }
    return true;
  }

  private static void pause(Kind kind, Duration pause) throws Exception {
    Nodes nodes = start(kind);
    try {
      Vertx paused = nodes.vertx().get(0);
      FdbClusterManager pausedManager = (FdbClusterManager) nodes.managers().get(0);
      FdbLock held = (FdbLock) await(paused.sharedData().getLockWithTimeout("bench.pause-lock", 10_000));
      CompletableFuture<Lock> waiting = nodes.vertx().get(1).sharedData().getLockWithTimeout("bench.pause-lock", 300_000)
          .toCompletionStage().toCompletableFuture();
      Thread.sleep(500);
      long t0 = System.nanoTime();
      // The node's timer (its heartbeats and its locks' heartbeats) and every event loop stop.
      FaultInjection.pause(pausedManager, pause);
      for (var loop : ((VertxInternal) paused).nettyEventLoopGroup()) {
        loop.execute(() -> sleep(pause));
      }
      FdbLock next = (FdbLock) waiting.get(300, TimeUnit.SECONDS);
      long nextAt = System.nanoTime();
      long resumeAt = t0 + pause.toNanos();
      held.lost().get(300, TimeUnit.SECONDS);
      long lostAt = System.nanoTime();
      String release;
      try {
        held.releaseAsync().get(30, TimeUnit.SECONDS);
        release = "accepted (!)";
      } catch (Exception e) {
        release = "refused: " + rootMessage(e);
      }
      while (!nodes.managers().get(1).getNodes().contains(pausedManager.getNodeId())) {
        Thread.sleep(5);
      }
      long rejoinedAt = System.nanoTime();
      System.out.printf(Locale.ROOT, "pause of the holder's node for %d s, %s: next waiter holds the lock after %.2f s;"
          + " the resumed holder learns it lost the lock %.2f s after resuming (lost() completes), its release is %s;"
          + " its fencing token %s < the new holder's %s: %s; it is back in the cluster %.2f s after resuming%n",
          pause.toSeconds(), kind.name(), (nextAt - t0) / 1e9, Math.max(0, lostAt - resumeAt) / 1e9, release,
          held.token(), next.token(), held.token().compareTo(next.token()) < 0, Math.max(0, rejoinedAt - resumeAt) / 1e9);
      next.release();
    } finally {
      stop(nodes);
    }
  }

  private static String rootMessage(Throwable t) {
    Throwable c = t;
    while (c.getCause() != null) {
      c = c.getCause();
    }
    return c.getClass().getSimpleName() + " " + c.getMessage();
  }

  private static void sleep(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  // ------------------------------------------------------------------ helpers

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
  }

  private static double pct(double[] samples, int p) {
    double[] s = samples.clone();
    Arrays.sort(s);
    return s[Math.min(s.length - 1, (int) Math.ceil(p / 100.0 * s.length) - 1)];
  }

  private static void print(Figures f) {
    System.out.printf(Locale.ROOT, "%s: join %.0f ms, request/reply p50 %.2f ms p99 %.2f ms, lock %.0f cycles/s, hand-off p50 %.2f ms"
        + " p99 %.2f ms, counter %.0f incr/s, map %.0f put/s %.0f get/s%n", f.kind(), f.joinMs(), f.rrP50(), f.rrP99(),
        f.lockCycles(), f.handP50(), f.handP99(), f.counterOps(), f.putOps(), f.getOps());
  }
}
