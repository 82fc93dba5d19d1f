package io.github.fdbcoord.bench;

import io.github.fdbcoord.testing.ChildJvm;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import org.apache.curator.test.TestingServer;

/**
 * Election fail-over after SIGKILL of the leader's process (issue 37), this project's election on a real FoundationDB
 * ({@code FDB_CLUSTER_FILE}) against Curator 5.9.0's {@code LeaderLatch} on curator-test's {@code TestingServer}, in
 * one run, alternating: two {@link ElectionFailoverChild} JVMs campaign; the leader is killed; the time from the kill
 * to the other's leadership, per round. Both detect the death by time alone (a kill -9 leaves no goodbye): the lease
 * here, the ZooKeeper session timeout there, both {@link #DETECTION}. Argument: rounds (5).
 * Run: {@code bench/with-fdb.sh sh -c 'MVN_OFFLINE=1 bench/run.sh cluster ElectionFailoverBenchmark 5'}.
 */
public final class ElectionFailoverBenchmark {
  /** The lease and the ZooKeeper session timeout. */
  static final Duration DETECTION = Duration.ofSeconds(3);
  private static final Duration WAIT = Duration.ofSeconds(60);

  private ElectionFailoverBenchmark() {}

  public static void main(String[] args) throws Exception {
    String clusterFile = System.getenv("FDB_CLUSTER_FILE");
    if (clusterFile == null || clusterFile.isEmpty()) {
      throw new IllegalStateException("FDB_CLUSTER_FILE must name a FoundationDB cluster (bench/with-fdb.sh starts one)");
    }
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
    List<Double> fdb = new ArrayList<>();
    List<Double> zk = new ArrayList<>();
    try (TestingServer server = new TestingServer(true)) {
      for (int r = 0; r < rounds; r++) {
        for (boolean onFdb : r % 2 == 0 ? new boolean[] {true, false} : new boolean[] {false, true}) {
          double ms = failover(onFdb ? "fdb" : "zk", onFdb ? clusterFile : server.getConnectString());
          (onFdb ? fdb : zk).add(ms);
          System.out.printf(Locale.ROOT, "round %d %s: the other candidate led %.0f ms after SIGKILL of the leader%n",
              r + 1, onFdb ? "fdb" : "curator", ms);
        }
      }
    }
    System.out.printf(Locale.ROOT, "fail-over after SIGKILL, detection %d ms: this project %s ms, Curator %s ms, ratio of medians %.2f%n",
        DETECTION.toMillis(), rounded(fdb), rounded(zk), median(fdb) / median(zk));
    System.exit(0);
  }

  private static double failover(String kind, String where) {
    String run = UUID.randomUUID().toString();
    List<ChildJvm> children = new ArrayList<>();
    try {
      for (String candidate : List.of("a", "b")) {
        ChildJvm child = ChildJvm.start(kind + "-" + candidate, List.of("-Xmx256m", "-XX:TieredStopAtLevel=1"),
            entry -> entry.contains("hazelcast") || entry.matches(".*vertx-core-[^/]*-tests\\.jar"),
            ElectionFailoverChild.class.getName(), List.of(kind, where, run, candidate));
        child.awaitLine(l -> l.equals("READY"), WAIT);
        children.add(child);
      }
      ChildJvm leader = null;
      long end = System.nanoTime() + WAIT.toNanos();
      while (leader == null && System.nanoTime() < end) {
        for (ChildJvm c : children) {
          if (c.hasLine(l -> l.startsWith("LEADER "))) {
            leader = c;
          }
        }
      }
      if (leader == null) {
        throw new IllegalStateException("no leader within " + WAIT);
      }
      ChildJvm other = children.get(0) == leader ? children.get(1) : children.get(0);
      long killed = System.nanoTime();
      leader.kill();
      long led = Long.parseLong(other.awaitLine(l -> l.startsWith("LEADER "), WAIT).text().substring("LEADER ".length()));
      return (led - killed) / 1e6;
    } finally {
      children.forEach(ChildJvm::close);
    }
  }

  private static String rounded(List<Double> values) {
    return values.stream().map(v -> String.format(Locale.ROOT, "%.0f", v)).toList().toString();
  }

  private static double median(List<Double> values) {
    List<Double> sorted = new ArrayList<>(values);
    sorted.sort(null);
    return sorted.get(sorted.size() / 2);
  }
}
