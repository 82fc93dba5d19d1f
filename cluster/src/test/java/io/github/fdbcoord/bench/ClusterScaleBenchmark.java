package io.github.fdbcoord.bench;

import com.apple.foundationdb.Database;
import com.hazelcast.config.Config;
import io.github.fdbcoord.cluster.FdbClusterManager;
import io.github.fdbcoord.cluster.FdbClusterManagerOptions;
import io.github.fdbcoord.store.Store;
import io.github.fdbcoord.store.StoreOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonObject;
import io.vertx.core.spi.cluster.ClusterManager;
import io.vertx.spi.cluster.hazelcast.ConfigUtil;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * How the cluster manager's cost grows with the number of nodes (issue 36): N clustered Vert.x nodes in this JVM
 * (each its own Vert.x, with one event loop, and its own manager), on the real FoundationDB {@code FDB_CLUSTER_FILE}
 * names, for N = 3, 10 and 30, and vertx-hazelcast at 3 and 10 in the same run. Per N:
 * <ul>
 *   <li>join: from the first node's start until every node lists N members;</li>
 *   <li>a new registration seen everywhere: a consumer registered on one node, then every other node sends to its
 *       address until one request is answered (NO_HANDLERS fails at once); p50/p99 over the nodes and 5
 *       registrations;</li>
 *   <li>idle store transactions: FoundationDB's own count of started and committed transactions per second
 *       ({@code \xff\xff/status/json}, its workload rates) while the N nodes do nothing for 15 s, per node;</li>
 *   <li>after a node leaves: every other node sends to an address only the leaving node served, from its leave's
 *       start until the request fails with NO_HANDLERS (not a timeout); p50/p99.</li>
 * </ul>
 * Run: {@code bench/with-fdb.sh sh -c 'MVN_OFFLINE=1 bench/run.sh cluster ClusterScaleBenchmark [SIZES...]'}.
 */
public final class ClusterScaleBenchmark {
  private static final long SEND_TIMEOUT_MS = 5000;

  private ClusterScaleBenchmark() {}

  private record Figures(String kind, int nodes, double joinMs, double seenP50, double seenP99, double idleStarted,
      double idleCommitted, double leftP50, double leftP99) {}

  public static void main(String[] args) throws Exception {
    String clusterFile = System.getenv("FDB_CLUSTER_FILE");
    if (clusterFile == null || clusterFile.isEmpty()) {
      throw new IllegalStateException("FDB_CLUSTER_FILE must name a FoundationDB cluster (bench/with-fdb.sh starts one)");
    }
    int[] sizes = args.length == 0 ? new int[] {3, 10, 30} : Arrays.stream(args).mapToInt(Integer::parseInt).toArray();
    List<Figures> all = new ArrayList<>();
    try (Store store = Store.open(StoreOptions.cluster(Path.of(clusterFile)))) {
      Database db = store.database();
      for (int n : sizes) {
        FdbClusterManagerOptions options = FdbClusterManagerOptions.builder().database(db)
            .directory(List.of("fdb-coord-scale", UUID.randomUUID().toString())).build(); // one cluster per size
        all.add(measure("fdb", n, () -> new FdbClusterManager(options), db));
        print(all.get(all.size() - 1));
        if (n <= 10) {
          String cluster = "scale-" + UUID.randomUUID();
          all.add(measure("hazelcast", n, () -> hazelcast(cluster), null));
          print(all.get(all.size() - 1));
        }
      }
    }
    System.out.println();
    System.out.println("| manager | nodes | join ms | registration seen everywhere p50 / p99 ms | idle store txn/s per node (started / committed) | a left node's address fails fast p50 / p99 ms |");
    System.out.println("| --- | --- | --- | --- | --- | --- |");
    for (Figures f : all) {
      System.out.println(String.format(Locale.ROOT, "| %s | %d | %.0f | %.1f / %.1f | %s | %.1f / %.1f |", f.kind(), f.nodes(),
          f.joinMs(), f.seenP50(), f.seenP99(), f.idleStarted() < 0 ? "–" : String.format(Locale.ROOT, "%.2f / %.2f",
              f.idleStarted(), f.idleCommitted()), f.leftP50(), f.leftP99()));
    }
    System.exit(0); // Hazelcast leaves non-daemon threads behind
  }

  private static ClusterManager hazelcast(String clusterName) {
    Config config = ConfigUtil.loadConfig();
    config.setClusterName(clusterName);
    config.setProperty("hazelcast.phone.home.enabled", "false");
    config.setProperty("hazelcast.logging.type", "none");
    config.getNetworkConfig().getJoin().getMulticastConfig().setEnabled(false);
    config.getNetworkConfig().getJoin().getTcpIpConfig().setEnabled(true).addMember("127.0.0.1");
    config.getNetworkConfig().getInterfaces().setEnabled(true).addInterface("127.0.0.1");
    return new HazelcastClusterManager(config);
  }

  private static Figures measure(String kind, int n, Supplier<ClusterManager> managers, Database db) throws Exception {
    long t0 = System.nanoTime();
    List<ClusterManager> ms = new ArrayList<>();
    List<Future<Vertx>> starting = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      ClusterManager m = managers.get();
      ms.add(m);
      starting.add(Vertx.builder()
          .with(new VertxOptions().setEventLoopPoolSize(1)
              .setEventBusOptions(new EventBusOptions().setHost("127.0.0.1").setClusterPublicHost("127.0.0.1")))
          .withClusterManager(m).buildClustered());
    }
    List<Vertx> nodes = new ArrayList<>();
    for (Future<Vertx> f : starting) {
      nodes.add(await(f));
    }
    while (ms.stream().anyMatch(m -> m.getNodes().size() < n)) {
      Thread.sleep(1);
    }
    double joinMs = (System.nanoTime() - t0) / 1e6;
    try {
      List<Long> seen = new ArrayList<>();
      for (int r = 0; r < 5; r++) {
        String address = "scale-" + r;
        Vertx owner = nodes.get(r % n);
        long registered = System.nanoTime();
        await(owner.eventBus().consumer(address, m -> m.reply("pong")).completion());
        List<Vertx> others = nodes.stream().filter(v -> v != owner).toList();
        for (long at : inParallel(others, other -> untilAnswered(other, address))) {
          seen.add(at - registered);
        }
      }
      double idleStarted = -1;
      double idleCommitted = -1;
      if (db != null) {
        Thread.sleep(5000); // the rates are smoothed: let the join's and the registrations' traffic fade
        double[] before = workload(db);
        Thread.sleep(15_000);
        double[] after = workload(db);
        idleStarted = (after[0] + before[0]) / 2 / n;
        idleCommitted = (after[1] + before[1]) / 2 / n;
      }
      // The last node serves an address alone, then leaves; every other node sends until it fails fast.
      Vertx leaving = nodes.get(n - 1);
      MessageConsumer<Object> only = leaving.eventBus().consumer("scale-leaving", m -> m.reply("pong"));
      await(only.completion());
      for (Vertx other : nodes.subList(0, n - 1)) {
        untilAnswered(other, "scale-leaving");
      }
      long leftAt = System.nanoTime();
      Future<Void> left = leaving.close();
      List<Long> failFast = new ArrayList<>();
      for (long at : inParallel(nodes.subList(0, n - 1), other -> untilNoHandlers(other, "scale-leaving"))) {
        failFast.add(at - leftAt);
      }
      await(left);
      nodes.remove(leaving);
      return new Figures(kind, n, joinMs, pct(seen, 50), pct(seen, 99), idleStarted, idleCommitted, pct(failFast, 50),
          pct(failFast, 99));
    } finally {
      for (Vertx v : nodes) {
        try {
          v.close().toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
        } catch (Exception e) {
          // the next size starts anyway
        }
      }
    }
  }

  private interface Probe {
    long at(Vertx node) throws Exception;
  }

  /** {@code probe} on every node at once (one thread each): probed one after another, a late node waited for the others. */
  private static List<Long> inParallel(List<Vertx> nodes, Probe probe) throws Exception {
    List<java.util.concurrent.CompletableFuture<Long>> all = new ArrayList<>();
    for (Vertx node : nodes) {
      java.util.concurrent.CompletableFuture<Long> f = new java.util.concurrent.CompletableFuture<>();
      Thread t = new Thread(() -> {
        try {
          f.complete(probe.at(node));
        } catch (Throwable e) {
          f.completeExceptionally(e);
        }
      });
      t.setDaemon(true);
      t.start();
      all.add(f);
    }
    List<Long> out = new ArrayList<>();
    for (java.util.concurrent.CompletableFuture<Long> f : all) {
      out.add(f.get(120, TimeUnit.SECONDS));
    }
    return out;
  }

  /** When {@code node}'s first answered request to {@code address} was sent (nanoTime). */
  private static long untilAnswered(Vertx node, String address) throws Exception {
    while (true) {
      long sent = System.nanoTime();
      try {
        await(node.eventBus().request(address, "ping", new io.vertx.core.eventbus.DeliveryOptions().setSendTimeout(SEND_TIMEOUT_MS)));
        return sent;
      } catch (Exception notYet) {
        Thread.sleep(1);
      }
    }
  }

  /**
   * When {@code node}'s first request to {@code address} that failed with NO_HANDLERS was answered (nanoTime). The
   * probes time out after 200 ms: one delivered to the leaving node's consumer while it unregistered is never
   * answered, and waiting out a longer send timeout would be all this measured.
   */
  private static long untilNoHandlers(Vertx node, String address) throws Exception {
    while (true) {
      try {
        await(node.eventBus().request(address, "ping", new io.vertx.core.eventbus.DeliveryOptions().setSendTimeout(200)));
      } catch (Exception e) {
        Throwable cause = e.getCause() == null ? e : e.getCause();
        if (cause instanceof io.vertx.core.eventbus.ReplyException re
            && re.failureType() == io.vertx.core.eventbus.ReplyFailure.NO_HANDLERS) {
          return System.nanoTime();
        }
      }
      Thread.sleep(1);
    }
  }

  /** FoundationDB's own rates of started and committed transactions per second (status json). */
  private static double[] workload(Database db) {
    byte[] raw = db.read(tr -> tr.get("\u00ff\u00ff/status/json".getBytes(StandardCharsets.ISO_8859_1)).join());
    JsonObject tx = new JsonObject(new String(raw, StandardCharsets.UTF_8)).getJsonObject("cluster")
        .getJsonObject("workload").getJsonObject("transactions");
    return new double[] {tx.getJsonObject("started").getDouble("hz"), tx.getJsonObject("committed").getDouble("hz")};
  }

  private static double pct(List<Long> nanos, int p) {
    long[] sorted = nanos.stream().mapToLong(Long::longValue).sorted().toArray();
    int i = Math.min(sorted.length - 1, (int) Math.ceil(p / 100.0 * sorted.length) - 1);
    return sorted[Math.max(0, i)] / 1e6;
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(120, TimeUnit.SECONDS);
  }

  private static void print(Figures f) {
    System.out.println(String.format(Locale.ROOT, "%s, %d nodes: join %.0f ms; registration seen everywhere p50 %.1f / p99 %.1f ms;"
        + " idle store txn/s per node started %.2f committed %.2f; left node's address fails fast p50 %.1f / p99 %.1f ms",
        f.kind(), f.nodes(), f.joinMs(), f.seenP50(), f.seenP99(), f.idleStarted(), f.idleCommitted(), f.leftP50(), f.leftP99()));
  }
}
