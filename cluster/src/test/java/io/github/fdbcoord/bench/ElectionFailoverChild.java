package io.github.fdbcoord.bench;

import io.github.fdbcoord.election.LeaderElection;
import io.github.fdbcoord.mutex.MutexOptions;
import io.github.fdbcoord.store.Store;
import io.github.fdbcoord.store.StoreOptions;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.retry.RetryNTimes;

/**
 * One candidate of {@link ElectionFailoverBenchmark} in a JVM of its own: {@code fdb CLUSTER_FILE RUN CANDIDATE} campaigns
 * in this project's election, {@code zk CONNECT_STRING RUN CANDIDATE} in Curator's {@code LeaderLatch}; both with the
 * benchmark's detection time ({@link ElectionFailoverBenchmark#DETECTION}: the lease, the ZooKeeper session timeout).
 * Prints {@code READY} once campaigning and {@code LEADER nanoTime} when it leads (one monotonic clock per host).
 */
public final class ElectionFailoverChild {
  private ElectionFailoverChild() {}

  public static void main(String[] args) throws Exception {
    String kind = args[0];
    String run = args[2];
    String candidate = args[3];
    long detection = ElectionFailoverBenchmark.DETECTION.toMillis();
    if (kind.equals("fdb")) {
      Store store = Store.open(StoreOptions.cluster(Path.of(args[1])));
      LeaderElection elections = LeaderElection.open(store.database(), MutexOptions.builder()
          .directory(List.of("fdb-coord-failover", run)).lease(Duration.ofMillis(detection))
          .heartbeatInterval(Duration.ofMillis(detection / 6)).reaperInterval(Duration.ofMillis(50)).build()).join();
      System.out.println("READY");
      elections.campaign("leader", candidate, null).join();
      System.out.println("LEADER " + System.nanoTime());
    } else {
      CuratorFramework client = CuratorFrameworkFactory.builder().connectString(args[1])
          .sessionTimeoutMs((int) detection).connectionTimeoutMs((int) detection).retryPolicy(new RetryNTimes(3, 100))
          .build();
      client.start();
      client.blockUntilConnected();
      LeaderLatch latch = new LeaderLatch(client, "/failover/" + run, candidate);
      latch.start();
      System.out.println("READY");
      latch.await();
      System.out.println("LEADER " + System.nanoTime());
    }
    Thread.sleep(Long.MAX_VALUE); // leads until killed
  }
}
