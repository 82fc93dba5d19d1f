package io.github.fdbcoord.cluster;

import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.shareddata.Lock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static io.github.fdbcoord.cluster.TestNodes.waitUntil;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A rolling restart under request load (clustered Vert.x nodes on one embedded database): three
 * nodes with a consumer on one address are closed ({@code vertx.close()}) and started again on the
 * same event-bus port one after the other, while a fourth node sends a request every few
 * milliseconds. No request fails or times out (each closing node withdraws its registrations and
 * answers what was already on its way before Vert.x closes its event bus), each closing node's lock
 * goes to the waiter, and the node that comes back is a new incarnation (a new node id; the old one
 * is gone from the membership).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Tag("slow")
class RollingRestartTest {
  private static final int NODES = 3;
  private static final long SEND_TIMEOUT_MILLIS = 5000;

  private final EmbeddedDatabase db = EmbeddedDatabase.inMemory();
  private final List<Vertx> started = new CopyOnWriteArrayList<>();

  @AfterEach
  void tearDown() throws Exception {
    for (Vertx v : started) {
      v.close().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
    db.close();
  }

  private record Node(Vertx vertx, FdbClusterManager manager) {}

  private Node start(int eventBusPort) throws Exception {
    FdbClusterManager manager = new FdbClusterManager(TestNodes.options(db, Duration.ofSeconds(2)).build());
    VertxOptions options = new VertxOptions().setEventBusOptions(new EventBusOptions().setPort(eventBusPort));
    Vertx v = Vertx.builder().with(options).withClusterManager(manager).buildClustered()
        .toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
    started.add(v);
    return new Node(v, manager);
  }

  private static Node consumer(Node node) throws Exception {
    String id = node.manager().getNodeId();
    node.vertx().eventBus().<String>consumer("svc", m -> m.reply(id)).completion()
        .toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    return node;
  }

  private static int freePort() throws Exception {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }


  @Test
  void restartingEveryNodeInTurnUnderLoadCostsNoRequestAndHandsEachLockOn() throws Exception {
    int[] ports = new int[NODES];
    Node[] nodes = new Node[NODES];
    for (int i = 0; i < NODES; i++) {
      ports[i] = freePort();
      nodes[i] = consumer(start(ports[i]));
    }
    Node sender = start(0);
    Set<String> answeredBy = ConcurrentHashMap.newKeySet();
    waitUntil("the sender reaches every consumer", () -> {
      sender.vertx().eventBus().<String>request("svc", "ping").onSuccess(m -> answeredBy.add(m.body()));
      return answeredBy.size() == NODES;
    }, Duration.ofSeconds(20));

    List<Future<Lock>> waiters = new ArrayList<>();
    for (int i = 0; i < NODES; i++) {
      nodes[i].vertx().sharedData().getLockWithTimeout("restart-lock-" + i, 5000).toCompletionStage().toCompletableFuture()
          .get(10, TimeUnit.SECONDS);
      waiters.add(sender.vertx().sharedData().getLockWithTimeout("restart-lock-" + i, 50_000));
    }

    Map<String, AtomicInteger> outcomes = new ConcurrentHashMap<>();
    AtomicInteger sent = new AtomicInteger();
    AtomicInteger done = new AtomicInteger();
    long load = sender.vertx().setPeriodic(5, t -> {
      sent.incrementAndGet();
      sender.vertx().eventBus().<String>request("svc", "ping", new DeliveryOptions().setSendTimeout(SEND_TIMEOUT_MILLIS))
          .onComplete(ar -> {
            String result = ar.succeeded() ? "ok" : ar.cause() instanceof ReplyException re ? re.failureType().name() : ar.cause().toString();
            outcomes.computeIfAbsent(result, r -> new AtomicInteger()).incrementAndGet();
            done.incrementAndGet();
          });
    });
    Thread.sleep(300);

    List<String> handOffs = new ArrayList<>();
    for (int i = 0; i < NODES; i++) {
      String oldId = nodes[i].manager().getNodeId();
      long closing = System.nanoTime();
      nodes[i].vertx().close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
      started.remove(nodes[i].vertx());
      long closedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - closing);
      waiters.get(i).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS).release();
      handOffs.add("node " + i + " closed in " + closedMillis + " ms, its lock handed on after "
          + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - closing) + " ms");

      nodes[i] = consumer(start(ports[i]));
      String newId = nodes[i].manager().getNodeId();
      assertNotEquals(oldId, newId, "the node that came back on the same port is a new incarnation");
      waitUntil("the sender sees the new incarnation and not the old one",
          () -> sender.manager().getNodes().contains(newId) && !sender.manager().getNodes().contains(oldId), Duration.ofSeconds(10));
      waitUntil("the new incarnation answers", () -> {
        sender.vertx().eventBus().<String>request("svc", "ping").onSuccess(m -> answeredBy.add(m.body()));
        return answeredBy.contains(newId);
      }, Duration.ofSeconds(20));
    }
    sender.vertx().cancelTimer(load);
    waitUntil("every request answered", () -> done.get() == sent.get(), Duration.ofSeconds(SEND_TIMEOUT_MILLIS / 1000 + 5));

    String summary = sent.get() + " requests: " + outcomes + "; " + handOffs;
    System.out.println("rolling restart: " + summary);
    assertFalse(outcomes.containsKey("TIMEOUT"), "no request timed out: " + summary);
    assertEquals(Set.of("ok"), outcomes.keySet(), "every request was answered: " + summary);
    assertTrue(sent.get() > 100, summary);
  }
}
