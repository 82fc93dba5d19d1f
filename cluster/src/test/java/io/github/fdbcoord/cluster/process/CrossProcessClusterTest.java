package io.github.fdbcoord.cluster.process;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.testing.ChildJvm;
import io.github.fdbcoord.testing.SharedFdb;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Three cluster nodes in JVMs of their own, each started with Vert.x's launcher and {@code -cluster}
 * on one real FoundationDB ({@link SharedFdb}), form one cluster; then the failures of real
 * processes: a lock holder killed with SIGKILL, a lock holder paused with SIGSTOP past its lease
 * and resumed. Prints the measured times (docs/real-foundationdb.md). Skipped, saying why, where
 * there is no real FoundationDB: the embedded engine cannot be shared between processes.
 *
 * <p>The tests run in order on the same three nodes: the pause test leaves node A behind a lost
 * lock, the crash test kills node B.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Tag("slow")
class CrossProcessClusterTest {
  static final Duration LEASE = Duration.ofMillis(3000);
  static final Duration HEARTBEAT = Duration.ofMillis(500);
  private static final Duration ANSWER = Duration.ofSeconds(30);

  private static Path options;
  private static NodeProcess a;
  private static NodeProcess b;
  private static NodeProcess c;

  @BeforeAll
  static void startNodes() throws Exception {
    Path clusterFile = SharedFdb.clusterFileOrAbort();
    String run = "cross-process-" + UUID.randomUUID();
    options = Files.createTempFile("fdb-cluster-", ".json");
    Files.writeString(options, new JsonObject()
        .put("store", new JsonObject().put("engine", "cluster").put("clusterFile", clusterFile.toString()))
        .put("directory", new JsonArray().add("fdb-coord-test").add(run))
        .put("lockDirectory", new JsonArray().add("fdb-coord-test").add(run + "-locks"))
        .put("nodeLeaseMs", LEASE.toMillis())
        .put("heartbeatIntervalMs", HEARTBEAT.toMillis())
        .put("reaperIntervalMs", 250)
        .encode());
    a = NodeProcess.start("node-a", options);
    b = NodeProcess.start("node-b", options);
    c = NodeProcess.start("node-c", options);
    long started = System.nanoTime();
    for (NodeProcess node : List.of(a, b, c)) {
      node.awaitReady();
    }
    System.out.printf("three launcher nodes ready in %d ms%n", millisSince(started));
  }

  @AfterAll
  static void stopNodes() throws Exception {
    for (NodeProcess node : Stream.of(a, b, c).filter(n -> n != null).toList()) {
      node.close();
    }
    if (options != null) {
      Files.deleteIfExists(options);
    }
  }

  @Test
  @Order(1)
  void threeLauncherNodesFormOneCluster() throws Exception {
    String all = String.join(",", new TreeSet<>(List.of(a.nodeId(), b.nodeId(), c.nodeId())));
    for (NodeProcess node : List.of(a, b, c)) {
      assertEquals(all, awaitNodes(node, all, Duration.ofSeconds(30)), "the nodes " + node.jvm() + " sees");
    }
  }

  @Test
  @Order(2)
  void anEventBusRequestReachesAConsumerInAnotherProcess() {
    List<NodeProcess> nodes = List.of(a, b, c);
    for (int i = 0; i < nodes.size(); i++) {
      NodeProcess from = nodes.get(i);
      NodeProcess to = nodes.get((i + 1) % nodes.size());
      long sent = System.nanoTime();
      assertEquals(to.nodeId() + ":ping-" + i, from.call("request node." + to.nodeId() + " ping-" + i, ANSWER));
      System.out.printf("event-bus request %s -> %s answered in %d ms%n", from.jvm(), to.jvm(), millisSince(sent));
    }
  }

  @Test
  @Order(3)
  void aPausedHolderKeepsItsLockForTheLeaseAndLearnsOnResumeThatItLostIt() {
    FencingToken first = FencingToken.parse(a.call("lock pause-lock 10000", ANSWER));
    int waiting = b.send("lock pause-lock 60000");
    sleep(Duration.ofMillis(300));
    long paused = System.nanoTime();
    a.jvm().pause();
    ChildJvm.Line granted = b.answer(waiting, Duration.ofSeconds(60));
    long evictedAfter = millisBetween(paused, granted.nanoTime());
    a.jvm().resume();
    long resumed = System.nanoTime();
    ChildJvm.Line lost = a.jvm().awaitLine(l -> l.startsWith("E lost pause-lock " + first), ANSWER);
    long learnedAfter = millisBetween(resumed, lost.nanoTime());
    System.out.printf("SIGSTOP of the holder: the waiter got the lock %d ms after the pause (lease %d ms);"
        + " the holder learned it lost it %d ms after SIGCONT%n", evictedAfter, LEASE.toMillis(), learnedAfter);
    // The lease runs from the holder's last heartbeat, at most one interval before the pause.
    assertTrue(evictedAfter >= LEASE.minus(HEARTBEAT).toMillis(),
        "the lock was handed over " + evictedAfter + " ms after the pause, before the lease ran out");
    assertTrue(FencingToken.parse(granted.text()).isNewerThan(first), "the new grant's token is newer");
    assertEquals("released", b.call("release pause-lock", ANSWER));
  }

  @Test
  @Order(4)
  void aKilledHoldersLockGoesToTheNextWaiterBeforeTheLeaseRunsOut() throws Exception {
    FencingToken first = FencingToken.parse(b.call("lock crash-lock 10000", ANSWER));
    int waiting = c.send("lock crash-lock 60000");
    sleep(Duration.ofMillis(300));
    long killed = System.nanoTime();
    b.jvm().kill();
    ChildJvm.Line granted = c.answer(waiting, Duration.ofSeconds(60));
    long grantedAfter = millisBetween(killed, granted.nanoTime());
    String survivors = String.join(",", new TreeSet<>(List.of(a.nodeId(), c.nodeId())));
    String seen = awaitNodes(c, survivors, Duration.ofSeconds(30));
    long leftAfter = millisSince(killed);
    System.out.printf("kill -9 of the holder: the next waiter got the lock %d ms after the kill (lease %d ms);"
        + " the survivors' member list without it within %d ms%n", grantedAfter, LEASE.toMillis(), leftAfter);
    // A killed process's sockets close: its peers suspect and evict it without waiting for the lease
    // (failure detection, on by default), whereas a paused one (above) keeps its lease.
    assertTrue(grantedAfter < LEASE.toMillis(),
        "the lock was handed over " + grantedAfter + " ms after the kill: the crash was not detected before the lease ran out");
    assertTrue(FencingToken.parse(granted.text()).isNewerThan(first), "the new grant's token is newer");
    assertEquals(survivors, seen);
    assertFalse(b.jvm().isAlive());
    assertEquals("released", c.call("release crash-lock", ANSWER));
  }

  /** The node's sorted member list once it equals {@code expected}, or the last one seen after {@code timeout}. */
  private static String awaitNodes(NodeProcess node, String expected, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    String seen;
    do {
      seen = node.call("nodes", ANSWER);
      if (seen.equals(expected)) {
        return seen;
      }
      sleep(Duration.ofMillis(200));
    } while (System.nanoTime() < deadline);
    return seen;
  }

  private static long millisSince(long start) {
    return millisBetween(start, System.nanoTime());
  }

  private static long millisBetween(long start, long end) {
    return TimeUnit.NANOSECONDS.toMillis(end - start);
  }

  private static void sleep(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
