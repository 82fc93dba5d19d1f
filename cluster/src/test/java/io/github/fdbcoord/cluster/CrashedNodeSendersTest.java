package io.github.fdbcoord.cluster;

import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Senders on a crashed node's address (clustered Vert.x nodes on one embedded database): once the
 * node is evicted (within the suspicion window of its crash), every request fails at once with
 * NO_HANDLERS instead of waiting out the send timeout; only requests already on their way to the
 * dead node, or sent in the short window before its eviction, can time out.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
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
    Vertx nodeB = node(new FdbClusterManager(options));
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
    long crashed = System.nanoTime();
    FaultInjection.crash(a);
    nodes.remove(nodeA);
    Thread.sleep(2000 + SEND_TIMEOUT_MILLIS);
    nodeB.cancelTimer(periodic);
    Thread.sleep(500);
    nodeA.close(); // what is left of the crashed node's Vert.x (its manager removes nothing)

    long firstFastNoHandlers = outcomes.stream().filter(o -> o.sentNanos() > crashed && o.result().equals("NO_HANDLERS"))
        .mapToLong(o -> TimeUnit.NANOSECONDS.toMillis(o.sentNanos() - crashed)).min().orElse(-1);
    long timedOut = outcomes.stream().filter(o -> o.result().equals("TIMEOUT")).count();
    List<Outcome> afterEviction = outcomes.stream()
        .filter(o -> firstFastNoHandlers >= 0 && TimeUnit.NANOSECONDS.toMillis(o.sentNanos() - crashed) > firstFastNoHandlers)
        .toList();
    long slowAfterEviction = afterEviction.stream().filter(o -> o.tookMillis() > 1000).count();
    long maxAfterEviction = afterEviction.stream().mapToLong(Outcome::tookMillis).max().orElse(-1);
    String summary = outcomes.size() + " requests; NO_HANDLERS from " + firstFastNoHandlers + " ms after the crash; "
        + timedOut + " timed out (sent before the eviction); after the eviction " + afterEviction.size()
        + " requests, the slowest answered in " + maxAfterEviction + " ms";
    System.out.println("senders: " + summary);
    // Target 1 s; the bound leaves room for a loaded machine and is still far below the 10 s lease.
    assertTrue(firstFastNoHandlers >= 0 && firstFastNoHandlers < 3000, "requests fail fast soon after the crash: " + summary);
    assertTrue(!afterEviction.isEmpty() && slowAfterEviction == 0,
        "no request sent after the eviction waited (let alone waited out the send timeout): " + summary);
    assertTrue(afterEviction.stream().allMatch(o -> o.result().equals("NO_HANDLERS")), summary);
  }
}
