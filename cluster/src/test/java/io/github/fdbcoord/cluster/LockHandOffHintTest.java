package io.github.fdbcoord.cluster;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.cluster.impl.LockHints;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.mutex.MutexService;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.shareddata.Lock;
import io.vertx.core.spi.cluster.RegistrationInfo;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.reflect.Field;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Lock hand-off hints between clustered Vert.x nodes (issue 36): with no watch set on any node,
 * a SharedData lock still passes from node to node, because the releasing node's commit sends the
 * next holder's node a hint over the event bus and that node reads the lock again.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LockHandOffHintTest {
  private final EmbeddedDatabase db = EmbeddedDatabase.inMemory();
  private final List<Vertx> nodes = new ArrayList<>();

  @AfterEach
  void tearDown() throws Exception {
    for (Vertx v : nodes) {
      v.close().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
    db.close();
  }

  private static <T> T await(io.vertx.core.Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  /** Leaves the node's lock service without watches: a waiter there learns of a grant only from a hint. */
  private static void disableWatches(FdbClusterManager m) throws Exception {
    MutexService s = m.locks().mutexes();
    Field f = s.getClass().getDeclaredField("watchesDisabled");
    f.setAccessible(true);
    f.setBoolean(s, true);
  }

  private static List<RegistrationInfo> registrations(FdbClusterManager m, String address) throws Exception {
    Promise<List<RegistrationInfo>> p = Promise.promise();
    m.getRegistrations(address, p);
    return await(p.future());
  }

  @Test
  void aLockPassesBetweenNodesOnHintsAloneWhenNoWatchIsSet() throws Exception {
    FdbClusterManagerOptions options = FdbClusterManagerOptions.builder().database(db).nodeLease(Duration.ofSeconds(45)).logRetention(Duration.ofSeconds(120))
        .heartbeatInterval(Duration.ofSeconds(2)).reaperInterval(Duration.ofSeconds(1)).build();
    List<FdbClusterManager> managers = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      FdbClusterManager m = new FdbClusterManager(options);
      nodes.add(await(Vertx.builder().withClusterManager(m).buildClustered()));
      managers.add(m);
    }
    for (int i = 0; i < 3; i++) {
      disableWatches(managers.get(i));
      // A node listens for hints from its first lock request on.
      await(nodes.get(i).sharedData().getLockWithTimeout("warm-up-" + i, 10_000)).release();
    }
    for (FdbClusterManager from : managers) {
      for (FdbClusterManager to : managers) {
        String address = LockHints.address(to.getNodeId());
        TestNodes.waitUntil(from.getNodeId() + " sees " + to.getNodeId() + "'s hint address",
            () -> {
              try {
                return !registrations(from, address).isEmpty();
              } catch (Exception e) {
                throw new AssertionError(e);
              }
            }, Duration.ofSeconds(20));
      }
    }
    MutexService store = managers.get(0).locks().mutexes();
    Lock held = await(nodes.get(0).sharedData().getLockWithTimeout("ring", 10_000));
    for (int i = 1; i <= 9; i++) {
      int next = i % 3;
      // Within the lease: a grant nobody noticed would otherwise come back only after the lease ran out.
      CompletableFuture<Lock> waiting = nodes.get(next).sharedData().getLockWithTimeout("ring", 30_000)
          .toCompletionStage().toCompletableFuture();
      TestNodes.waitUntil("node " + next + " queued for the lock",
          () -> store.state("ring").join().queue().size() == 1, Duration.ofSeconds(20));
      held.release();
      held = waiting.get(30, TimeUnit.SECONDS);
      String owner = store.state("ring").join().owner().orElseThrow().owner();
      assertTrue(owner.startsWith(managers.get(next).getNodeId() + "/"), "held by node " + next + ": " + owner);
    }
    held.release();
    List<LockEvent> events = store.events("ring", FencingToken.of(new byte[FencingToken.LENGTH]), 100).join();
    assertEquals(List.of(LockEvent.Type.ACQUIRED, LockEvent.Type.HANDED_OFF, LockEvent.Type.HANDED_OFF,
            LockEvent.Type.HANDED_OFF, LockEvent.Type.HANDED_OFF, LockEvent.Type.HANDED_OFF, LockEvent.Type.HANDED_OFF,
            LockEvent.Type.HANDED_OFF, LockEvent.Type.HANDED_OFF, LockEvent.Type.HANDED_OFF),
        events.stream().map(LockEvent::type).limit(10).toList(), "every grant was a hand-off taken up, none expired");
    TestNodes.waitUntil("the lock is free", () -> store.state("ring").join().owner().isEmpty(), Duration.ofSeconds(20));
    assertEquals(0, store.state("ring").join().queue().size());
  }
}
