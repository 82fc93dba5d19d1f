package io.github.fdbcoord.cluster;

import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Senders on a crashed node's address (clustered Vert.x nodes on one embedded database): requests
 * sent to it between its crash and its eviction fail at once with NO_HANDLERS (Vert.x reconnects,
 * and the manager answers the reconnect's node-info lookup with NO_HANDLERS once the dead node's
 * port refuses), and after the eviction no request reaches it at all; only a request already
 * written to the dead node's socket before the sender noticed can wait out the send timeout.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Tag("slow")
class CrashedNodeSendersTest {
  private static final long SEND_TIMEOUT_MILLIS = 5000;

  private final EmbeddedDatabase db = EmbeddedDatabase.inMemory();
  private final List<Vertx> nodes = new ArrayList<>();

  @AfterEach
  void tearDown() throws Exception {
    for (Vertx v : nodes) {
      v.close().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
    db.close();
  }

  private record Outcome(long sentNanos, long tookMillis, String result) {}

  private static long millisSince(long nanos) {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - nanos);
  }

  private Vertx node(FdbClusterManager manager) throws Exception {
    Vertx v = Vertx.builder().withClusterManager(manager).buildClustered().toCompletionStage().toCompletableFuture()
        .get(20, TimeUnit.SECONDS);
    nodes.add(v);
    return v;
  }

  @Test
  void afterTheEvictionRequestsToTheDeadConsumerFailFastWithNoHandlers() throws Exception {
    FdbClusterManagerOptions options = FdbClusterManagerOptions.builder().database(db).nodeLease(Duration.ofSeconds(10))
        .heartbeatInterval(Duration.ofSeconds(2)).reaperInterval(Duration.ofSeconds(1)).build();
    FdbClusterManager a = new FdbClusterManager(options);
    Vertx nodeA = node(a);
    FdbClusterManager b = new FdbClusterManager(options);
    Vertx nodeB = node(b);
    nodeA.eventBus().consumer("svc", m -> m.reply("pong")).completion().toCompletionStage().toCompletableFuture()
        .get(10, TimeUnit.SECONDS);
    // B sees the registration
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (true) {
      try {
        nodeB.eventBus().request("svc", "ping").toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS);
        break;
      } catch (Exception e) {
        if (System.nanoTime() > until) {
          throw e;
        }
        Thread.sleep(50);
      }
    }

    List<Outcome> outcomes = new CopyOnWriteArrayList<>();
    long periodic = nodeB.setPeriodic(50, t -> {
      long sent = System.nanoTime();
      nodeB.eventBus().request("svc", "ping", new DeliveryOptions().setSendTimeout(SEND_TIMEOUT_MILLIS)).onComplete(ar -> {
        String result = ar.succeeded() ? "ok" : ar.cause() instanceof ReplyException re ? re.failureType().name() : ar.cause().toString();
        outcomes.add(new Outcome(sent, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent), result));
      });
    });
    Thread.sleep(300);
    String deadId = a.getNodeId();
    long crashed = System.nanoTime();
    FaultInjection.crash(a);
    // The simulation closes the node's sockets in a few milliseconds (a dead process's go at once):
    // requests sent meanwhile were written to them, as requests in flight at a real crash are.
    long socketsClosed = System.nanoTime();
    nodes.remove(nodeA);
    while (b.getNodes().contains(deadId) && millisSince(crashed) < 10_000) {
      Thread.sleep(2);
    }
    long evicted = System.nanoTime();
    Thread.sleep(2000 + SEND_TIMEOUT_MILLIS);
    nodeB.cancelTimer(periodic);
    Thread.sleep(500);
    nodeA.close(); // what is left of the crashed node's Vert.x (its manager removes nothing)

    List<Outcome> beforeEviction = outcomes.stream().filter(o -> o.sentNanos() > crashed && o.sentNanos() <= evicted).toList();
    List<Outcome> afterEviction = outcomes.stream().filter(o -> o.sentNanos() > evicted).toList();
    long firstFastFailure = beforeEviction.stream().filter(o -> o.result().equals("NO_HANDLERS"))
        .mapToLong(Outcome::sentNanos).min().orElse(Long.MAX_VALUE);
    List<Outcome> timedOut = outcomes.stream().filter(o -> o.result().equals("TIMEOUT")).toList();
    String summary = outcomes.size() + " requests; sockets closed " + TimeUnit.NANOSECONDS.toMillis(socketsClosed - crashed)
        + " ms and evicted " + TimeUnit.NANOSECONDS.toMillis(evicted - crashed) + " ms after the crash began; between crash and eviction " + beforeEviction.size() + " sent, "
        + beforeEviction.stream().filter(o -> o.result().equals("NO_HANDLERS")).count() + " failed fast with NO_HANDLERS (waits "
        + beforeEviction.stream().map(o -> o.tookMillis() + "").toList() + " ms); " + timedOut.size()
        + " timed out, sent at " + timedOut.stream().map(o -> TimeUnit.NANOSECONDS.toMillis(o.sentNanos() - crashed) + "").toList()
        + " ms from the crash; after the eviction " + afterEviction.size() + " requests, the slowest answered in "
        + afterEviction.stream().mapToLong(Outcome::tookMillis).max().orElse(-1) + " ms";
    System.out.println("senders: " + summary);
    // Target 1 s; the bound leaves room for a loaded machine and is still far below the 10 s lease.
    assertTrue(millisSince(crashed) > 0 && evicted - crashed < TimeUnit.SECONDS.toNanos(3), "evicted soon after the crash: " + summary);
    assertTrue(beforeEviction.stream().anyMatch(o -> o.result().equals("NO_HANDLERS")),
        "requests sent to the dead node before its eviction fail fast: " + summary);
    // Only a request written to the node's connection before the sender knew it was dead may wait
    // (Vert.x fails no request in flight when a connection closes): one sent before the simulated crash
    // had closed the node's sockets, or before the first request failed fast. How many that is depends
    // on how late a loaded machine runs the 50 ms timer (2-3 at load 16-23, 15 when it ran late and
    // fired the ones it owed at once), so they are not counted. After that, one straggler was seen (sent
    // at 351 ms, after the first fast failure, evicted at 511 ms; the suite beside a CPU hog,
    // 2026-11-27): the bound is one request that waits out its send timeout once the sender could know;
    // every other one fails fast.
    long settled = Math.max(socketsClosed, firstFastFailure);
    assertTrue(timedOut.stream().allMatch(o -> o.sentNanos() < evicted)
        && timedOut.stream().filter(o -> o.sentNanos() > settled).count() <= 1, summary);
    assertTrue(beforeEviction.stream().filter(o -> o.sentNanos() > settled && !timedOut.contains(o))
        .allMatch(o -> o.tookMillis() < 1000), summary);
    assertTrue(!afterEviction.isEmpty() && afterEviction.stream().allMatch(o -> o.result().equals("NO_HANDLERS") && o.tookMillis() < 1000),
        "no request sent after the eviction waited: " + summary);
  }
}
