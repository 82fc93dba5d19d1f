package io.github.fdbcoord.cluster.singleton;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.cluster.TestNodes;
import io.github.fdbcoord.election.LeaderElection;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.mutex.MutexOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VerticleBase;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The cluster singleton: one instance at a time among several nodes (each its own Vert.x and election service on
 * one embedded database), handed on when the leader leaves, dies or is cut off from the store, the old instance
 * always stopped before the new one started; a verticle that fails to deploy hands the singleton on.
 */
@Timeout(120)
class ClusterSingletonTest {
  private static final Duration LEASE = Duration.ofMillis(2000);
  private static final Duration MARGIN = Duration.ofMillis(700);

  private EmbeddedDatabase db;
  private final List<Node> nodes = new ArrayList<>();
  /** Every start and stop of an instance, in order, on every node. */
  private final List<Event> events = new CopyOnWriteArrayList<>();
  private final AtomicInteger running = new AtomicInteger();
  private final AtomicInteger mostRunning = new AtomicInteger();
  private final AtomicInteger failedStarts = new AtomicInteger();

  private record Event(String candidate, boolean started, FencingToken epoch, long atNanos) {}

  /** One node: its Vert.x, its election service (its own heartbeat scheduler), its singleton. */
  private final class Node {
    final String candidate;
    final Vertx vertx = Vertx.vertx();
    final ScheduledExecutorService scheduler = Executors.newScheduledThreadPool(1);
    final LeaderElection elections;
    ClusterSingleton singleton;

    Node(String candidate) {
      this.candidate = candidate;
      elections = LeaderElection.open(db, MutexOptions.builder().directory(List.of("singleton-test")).lease(LEASE)
          .heartbeatInterval(Duration.ofMillis(300)).reaperInterval(Duration.ofMillis(100)).scheduler(scheduler).build()).join();
    }

    void close() throws Exception {
      if (singleton != null) {
        singleton.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
      }
      elections.close();
      scheduler.shutdownNow();
      vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  /** The singleton's verticle: counts the instances running and records every start and stop. */
  private final class Tracked extends VerticleBase {
    private final boolean failToStart;
    private String candidate;
    private FencingToken epoch;

    Tracked(boolean failToStart) {
      this.failToStart = failToStart;
    }

    @Override
    public Future<?> start() {
      if (failToStart) {
        failedStarts.incrementAndGet();
        return Future.failedFuture("this node's instance cannot start");
      }
      candidate = config().getJsonObject("singleton").getString("candidate");
      epoch = FencingToken.parse(config().getJsonObject("singleton").getString("epoch"));
      int now = running.incrementAndGet();
      mostRunning.accumulateAndGet(now, Math::max);
      events.add(new Event(candidate, true, epoch, System.nanoTime()));
      return Future.succeededFuture();
    }

    @Override
    public Future<?> stop() {
      events.add(new Event(candidate, false, epoch, System.nanoTime()));
      running.decrementAndGet();
      return Future.succeededFuture();
    }
  }

  @BeforeEach
  void open() {
    db = EmbeddedDatabase.inMemory();
  }

  @AfterEach
  void close() throws Exception {
    for (Node n : nodes) {
      n.close();
    }
    db.close();
  }

  private Node start(String candidate, boolean failToStart) {
    Node n = new Node(candidate);
    nodes.add(n);
    n.singleton = ClusterSingleton.start(n.vertx, n.elections, "reports", candidate, () -> new Tracked(failToStart),
        null, MARGIN);
    return n;
  }

  private static void waitUntil(String what, BooleanSupplier condition) throws InterruptedException {
    TestNodes.waitUntil(what, condition, Duration.ofSeconds(60));
  }

  /** The node whose instance runs, once its singleton knows it (the instance starts a moment before). */
  private Node runningNode() throws InterruptedException {
    waitUntil("a singleton knows its instance runs", () -> nodes.stream().anyMatch(n -> n.singleton.deploymentId().isPresent()));
    return nodes.stream().filter(n -> n.singleton.deploymentId().isPresent()).findFirst().orElseThrow();
  }

  private List<Event> starts() {
    return events.stream().filter(Event::started).toList();
  }

  /** Every instance stopped before the next one started, and each later one under a newer epoch. */
  private void assertNeverTwoAtOnce() {
    assertEquals(1, mostRunning.get(), "instances at once, at most: " + events);
    Event previous = null;
    for (Event e : events) {
      if (e.started() && previous != null) {
        assertTrue(!previous.started(), "an instance started while another ran: " + events);
        assertTrue(e.epoch().isNewerThan(previous.epoch()), "each instance under a newer epoch: " + events);
      }
      previous = e;
    }
  }

  @Test
  void oneOfThreeNodesRunsItAndALeavingLeaderHandsItOnAfterItsInstanceStopped() throws Exception {
    for (String c : List.of("node-a", "node-b", "node-c")) {
      start(c, false);
    }
    waitUntil("an instance runs", () -> running.get() == 1);
    Node first = runningNode();
    first.singleton.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    waitUntil("the next node's instance runs", () -> starts().size() == 2 && running.get() == 1);
    Node second = runningNode();
    assertTrue(second != first, "another node runs it");
    assertTrue(first.singleton.deploymentId().isEmpty(), "the node that left runs nothing");
    assertEquals(1, first.singleton.deployments());
    assertNeverTwoAtOnce();
  }

  @Test
  void aDeadLeadersInstanceIsReplacedAfterTheLease() throws Exception {
    Node a = start("node-a", false);
    waitUntil("A's instance runs", () -> running.get() == 1);
    start("node-b", false);
    // A dies: its process, its instance and its heartbeats stop at once; nothing is resigned.
    a.scheduler.shutdownNow();
    a.vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    long died = System.nanoTime();
    waitUntil("B's instance runs", () -> starts().size() == 2 && running.get() == 1);
    assertEquals("node-b", starts().get(1).candidate());
    assertTrue(starts().get(1).atNanos() - died >= LEASE.toNanos() - MARGIN.toNanos(),
        "B started only once A's leadership lapsed: " + events);
    assertNeverTwoAtOnce();
  }

  @Test
  void aLeaderCutOffFromTheStoreStopsItsInstanceBeforeItsSuccessorStarts() throws Exception {
    Node a = start("node-a", false);
    waitUntil("A's instance runs", () -> running.get() == 1);
    start("node-b", false);
    // A's heartbeats can no longer run (as when its commits no longer reach the store): its leadership lapses.
    CountDownLatch cutOff = new CountDownLatch(1);
    a.scheduler.execute(() -> {
      try {
        cutOff.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    try {
      waitUntil("B's instance runs", () -> starts().size() == 2 && running.get() == 1);
      List<Event> all = List.copyOf(events);
      assertEquals(List.of(true, false, true), all.stream().map(Event::started).toList(), "A stopped, then B started: " + all);
      assertEquals("node-a", all.get(1).candidate());
      assertTrue(a.singleton.deploymentId().isEmpty(), "A runs nothing");
      assertNeverTwoAtOnce();
    } finally {
      cutOff.countDown();
    }
    // Once A's heartbeats run again it finds it lost, and stays in line without running anything.
    waitUntil("A is back in line", () -> a.singleton.deploymentId().isEmpty() && running.get() == 1);
  }

  @Test
  void aVerticleThatCannotStartHandsTheSingletonToANodeWhereItCan() throws Exception {
    Node broken = start("node-broken", true);
    waitUntil("the broken node tried to start its instance", () -> failedStarts.get() >= 1);
    assertEquals(0, broken.singleton.deployments());
    start("node-ok", false);
    waitUntil("the working node's instance runs", () -> running.get() == 1);
    assertEquals("node-ok", runningNode().candidate);
    assertNeverTwoAtOnce();
  }

  @Test
  void manyNodesLeavingOneAfterAnotherNeverRunTwoInstances() throws Exception {
    for (int i = 0; i < 6; i++) {
      start("node-" + i, false);
    }
    for (int handedOn = 1; handedOn <= 5; handedOn++) {
      int started = handedOn;
      waitUntil("instance " + started + " runs", () -> starts().size() == started && running.get() == 1);
      runningNode().singleton.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
    waitUntil("the last node's instance runs", () -> starts().size() == 6 && running.get() == 1);
    assertEquals(6, starts().stream().map(Event::candidate).distinct().count(), "each node ran it once: " + events);
    assertNeverTwoAtOnce();
  }

  @Test
  void badArgumentsAreRefusedWithWhatWasWrong() {
    Node n = new Node("node-x");
    nodes.add(n);
    IllegalArgumentException noName = assertThrows(IllegalArgumentException.class,
        () -> ClusterSingleton.start(n.vertx, n.elections, "", "node-x", () -> new Tracked(false), null, null));
    assertTrue(noName.getMessage().contains("name"), noName.getMessage());
    IllegalArgumentException noSupplier = assertThrows(IllegalArgumentException.class,
        () -> ClusterSingleton.start(n.vertx, n.elections, "reports", "node-x", null, null, null));
    assertTrue(noSupplier.getMessage().contains("supplier"), noSupplier.getMessage());
    IllegalArgumentException negative = assertThrows(IllegalArgumentException.class,
        () -> ClusterSingleton.start(n.vertx, n.elections, "reports", "node-x", () -> new Tracked(false), null,
            Duration.ofMillis(-1)));
    assertTrue(negative.getMessage().contains("stopMargin"), negative.getMessage());
  }
}
