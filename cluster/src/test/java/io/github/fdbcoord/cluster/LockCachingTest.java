package io.github.fdbcoord.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.cluster.impl.Locks;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.mutex.MutexHandle;
import io.github.fdbcoord.mutex.MutexService;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.shareddata.Lock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Node-local lock caching (issue 36): a node that holds a lock's store grant passes the lock between
 * its own callers without a store transaction, never to two holders at once (on one node or across
 * nodes), with fencing tokens that only grow; another node's waiter is served after a bounded local
 * run; a node paused past its lease passes nothing on the grant it lost.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class LockCachingTest {
  private EmbeddedDatabase db;
  private Vertx vertx;
  private final List<FdbClusterManager> managers = new ArrayList<>();

  @BeforeEach
  void setUp() {
    db = EmbeddedDatabase.inMemory();
    vertx = Vertx.vertx();
  }

  @AfterEach
  void tearDown() throws Exception {
    for (FdbClusterManager m : managers) {
      Promise<Void> p = Promise.promise();
      m.leave(p);
      p.future().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    db.close();
  }

  private FdbClusterManager join(Duration lease) throws Exception {
    FdbClusterManager m = TestNodes.join(vertx, TestNodes.options(db, lease));
    managers.add(m);
    return m;
  }

  private static FdbLock lock(FdbClusterManager m, String name, long timeoutMillis) throws Exception {
    return (FdbLock) pending(m, name, timeoutMillis).get(60, TimeUnit.SECONDS);
  }

  private static CompletableFuture<Lock> pending(FdbClusterManager m, String name, long timeoutMillis) {
    Promise<Lock> p = Promise.promise();
    m.getLockWithTimeout(name, timeoutMillis, p);
    return p.future().toCompletionStage().toCompletableFuture();
  }

  /** The tokens of the grants the store's log recorded for {@code name} (store-level grants, not local ones). */
  private static Set<FencingToken> storeGrants(MutexService store, String name) {
    Set<FencingToken> tokens = new HashSet<>();
    for (LockEvent e : store.events(name, FencingToken.of(new byte[FencingToken.LENGTH]), 10_000).join()) {
      e.token().ifPresent(tokens::add);
    }
    return tokens;
  }

  @Test
  void manyContendersOnThreeNodesNeverHoldTogetherAndTokensOnlyGrow() throws Exception {
    for (int i = 0; i < 3; i++) {
      join(Duration.ofSeconds(4));
    }
    String[] names = {"cache-a", "cache-b", "cache-c"};
    int perNode = 6;
    int cycles = 40;
    Map<String, AtomicInteger> holders = new ConcurrentHashMap<>();
    Map<String, AtomicReference<FencingToken>> last = new ConcurrentHashMap<>();
    for (String n : names) {
      holders.put(n, new AtomicInteger());
      last.put(n, new AtomicReference<>());
    }
    ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
    Map<String, Set<FencingToken>> granted = new ConcurrentHashMap<>();
    AtomicInteger[] perManager = {new AtomicInteger(), new AtomicInteger(), new AtomicInteger()};
    List<CompletableFuture<Void>> loops = new ArrayList<>();
    for (int node = 0; node < 3; node++) {
      FdbClusterManager m = managers.get(node);
      AtomicInteger count = perManager[node];
      for (int c = 0; c < perNode; c++) {
        int contender = c;
        loops.add(CompletableFuture.runAsync(() -> {
          try {
            for (int i = 0; i < cycles; i++) {
              String name = names[(i + contender) % names.length];
              FdbLock l = lock(m, name, 60_000);
              if (holders.get(name).incrementAndGet() != 1) {
                violations.add("two holders of " + name);
              }
              FencingToken before = last.get(name).getAndSet(l.token());
              if (before != null && !l.token().isNewerThan(before)) {
                violations.add(name + ": token " + l.token() + " after " + before);
              }
              granted.computeIfAbsent(name, k -> ConcurrentHashMap.newKeySet()).add(l.token());
              count.incrementAndGet();
              Thread.onSpinWait();
              holders.get(name).decrementAndGet();
              l.release();
            }
          } catch (Exception e) {
            violations.add("a contender failed: " + e);
          }
        }));
      }
    }
    CompletableFuture.allOf(loops.toArray(new CompletableFuture<?>[0])).get(150, TimeUnit.SECONDS);
    assertEquals(List.of(), List.copyOf(violations));
    for (AtomicInteger count : perManager) {
      assertEquals(perNode * cycles, count.get(), "every contender of every node got its turns");
    }
    MutexService store = managers.get(0).locks().mutexes();
    int local = 0;
    int total = 0;
    for (String n : names) {
      Set<FencingToken> tokens = granted.get(n);
      total += tokens.size();
      Set<FencingToken> fromStore = storeGrants(store, n);
      local += (int) tokens.stream().filter(t -> !fromStore.contains(t)).count();
    }
    assertEquals(3 * perNode * cycles, total, "every grant had a token of its own");
    assertTrue(local > 0, "some grants passed within a node, without a store transaction (" + total + " grants)");
  }

  @Test
  void aWaiterElsewhereIsServedAfterABoundedLocalRun() throws Exception {
    FdbClusterManager a = join(Duration.ofSeconds(4));
    FdbClusterManager b = join(Duration.ofSeconds(4));
    AtomicBoolean stop = new AtomicBoolean();
    AtomicLong grantsOnA = new AtomicLong();
    List<CompletableFuture<Void>> loops = new ArrayList<>();
    for (int c = 0; c < 4; c++) {
      loops.add(CompletableFuture.runAsync(() -> {
        try {
          while (!stop.get()) {
            FdbLock l = lock(a, "hot", 60_000);
            grantsOnA.incrementAndGet();
            l.release();
          }
        } catch (Exception e) {
          throw new AssertionError(e);
        }
      }));
    }
    try {
      TestNodes.waitUntil("node A loops on the lock", () -> grantsOnA.get() > 200, Duration.ofSeconds(60));
      MutexService store = a.locks().mutexes();

      // A waiter that sends no demand hint (a plain mutex client): A's own reads of the queue find it.
      CompletableFuture<MutexHandle> plain = store.acquire("hot", "plain-client", Duration.ofSeconds(60));
      TestNodes.waitUntil("the plain waiter is queued",
          () -> plain.isDone() || !store.state("hot").join().queue().isEmpty(), Duration.ofSeconds(30));
      long queuedAt = grantsOnA.get();
      MutexHandle h = plain.get(60, TimeUnit.SECONDS);
      long run = grantsOnA.get() - queuedAt;
      assertTrue(run <= Locks.LOCAL_RUN_CHECK + 1, "A granted " + run + " times locally while another waiter was queued");
      long heldAt = grantsOnA.get();
      TestNodes.waitUntil("A waits in the store's queue behind the plain client", () -> store.state("hot").join().queue()
          .stream().anyMatch(e -> e.owner().startsWith(a.getNodeId() + "/")), Duration.ofSeconds(30));
      // At most the increment of a grant made before the plain client's, counted late.
      assertTrue(grantsOnA.get() - heldAt <= 1, "A granted nothing while the plain client held the lock");
      h.release().get(30, TimeUnit.SECONDS);

      // A waiter on another node: its demand hint ends A's run.
      TestNodes.waitUntil("node A loops on the lock again", () -> grantsOnA.get() > heldAt + 50, Duration.ofSeconds(60));
      CompletableFuture<Lock> fromB = pending(b, "hot", 60_000);
      TestNodes.waitUntil("B is queued", () -> fromB.isDone() || !store.state("hot").join().queue().isEmpty(),
          Duration.ofSeconds(30));
      long bQueuedAt = grantsOnA.get();
      FdbLock onB = (FdbLock) fromB.get(60, TimeUnit.SECONDS);
      long bRun = grantsOnA.get() - bQueuedAt;
      assertTrue(bRun <= Locks.LOCAL_RUN_CHECK + 1, "A granted " + bRun + " times locally while B was queued");
      assertTrue(store.state("hot").join().owner().orElseThrow().owner().startsWith(b.getNodeId() + "/"));
      onB.release();
    } finally {
      stop.set(true);
      CompletableFuture.allOf(loops.toArray(new CompletableFuture<?>[0])).get(60, TimeUnit.SECONDS);
    }
  }

  @Test
  void oneCallerLoopingOnANodeCommitsFarLessThanOncePerCycle() throws Exception {
    FdbClusterManager a = join(Duration.ofSeconds(4));
    int cycles = 400;
    FencingToken previous = null;
    for (int i = 0; i < cycles; i++) {
      FdbLock l = lock(a, "loop", 10_000);
      if (previous != null) {
        assertTrue(l.token().isNewerThan(previous), "token " + l.token() + " after " + previous);
      }
      previous = l.token();
      l.release();
    }
    int storeGrants = storeGrants(a.locks().mutexes(), "loop").size();
    // Kept between cycles (one store grant per local run), unless a loaded machine let the node's grant go idle.
    assertTrue(storeGrants < cycles / 4, storeGrants + " store grants for " + cycles + " cycles");
  }

  @Test
  void aNodePausedPastItsLeaseGrantsNothingOnTheGrantItLost() throws Exception {
    FdbClusterManager a = join(Duration.ofMillis(1000));
    FdbClusterManager b = join(Duration.ofMillis(1000));
    MutexService store = b.locks().mutexes();
    FdbLock held = lock(a, "paused", 10_000);
    CompletableFuture<Lock> localWaiter = pending(a, "paused", 30_000);
    CompletableFuture<Lock> remoteWaiter = pending(b, "paused", 30_000);
    TestNodes.waitUntil("B is queued in the store", () -> !store.state("paused").join().queue().isEmpty(),
        Duration.ofSeconds(20));

    a.simulatePause(Duration.ofMillis(4000));
    FdbLock onB = (FdbLock) remoteWaiter.get(20, TimeUnit.SECONDS);
    assertTrue(onB.token().isNewerThan(held.token()));
    // Still paused (its heartbeats have not run, so it has not learnt of the loss): the release must not pass
    // the lock to A's own waiter, and the store refuses it.
    CompletableFuture<LockEvent> release = held.releaseAsync();
    assertThrows(Exception.class, () -> release.get(20, TimeUnit.SECONDS), "the lost grant's release is refused");
    assertFalse(localWaiter.isDone(), "A's local waiter got the lock while B holds it");

    onB.release();
    FdbLock onA = (FdbLock) localWaiter.get(30, TimeUnit.SECONDS);
    assertTrue(onA.token().isNewerThan(onB.token()), "A's waiter holds a new store grant, after B's");
    // A's pause outlasted its node lease too, so B evicts A; on a loaded machine that eviction may commit only after
    // A's new store grant, and then takes it: A's holder then learns the loss. Either way the store never names
    // another node while A's holder believes it holds.
    TestNodes.waitUntil("the store names A's node, or A's holder learnt its grant was taken by A's eviction",
        () -> store.state("paused").join().owner().map(o -> o.owner().startsWith(a.getNodeId() + "/")).orElse(false)
            || onA.lost().isDone(), Duration.ofSeconds(20));
    // Not release(): it throws once the holder knows its grant was lost, which the eviction above may have made so.
    onA.releaseAsync().handle((v, e) -> null).get(20, TimeUnit.SECONDS);
  }

  @Test
  void aStoreGrantWaitedForLongerThanTheLeaseIsTakenUp() throws Exception {
    FdbClusterManager a = join(Duration.ofMillis(1000));
    FdbClusterManager b = join(Duration.ofMillis(1000));
    FdbLock onB = lock(b, "long-wait", 10_000);
    CompletableFuture<Lock> onA = pending(a, "long-wait", 30_000);
    // The hold under test: B keeps the lock longer than a lease, which its store grant's heartbeats show.
    long heldSince = System.nanoTime();
    MutexService store = b.locks().mutexes();
    TestNodes.waitUntil("B heartbeat its grant through more than a lease", () -> store.state("long-wait").join().owner()
        .map(o -> o.heartbeats() >= 4).orElse(false) && System.nanoTime() - heldSince > TimeUnit.MILLISECONDS.toNanos(1100),
        Duration.ofSeconds(30));
    onB.release();
    FdbLock held = (FdbLock) onA.get(30, TimeUnit.SECONDS);
    assertTrue(held.token().isNewerThan(onB.token()));
    assertEquals(2, storeGrants(a.locks().mutexes(), "long-wait").size(),
        "A took the grant it waited for, and did not give it back to queue again");
    held.release();
  }

  @Test
  void aReleasedLocalGrantFencesNothingAndItsLocalSuccessorFences() throws Exception {
    FdbClusterManager a = join(Duration.ofSeconds(4));
    FdbLock first = lock(a, "fence-local", 10_000);
    CompletableFuture<Lock> next = pending(a, "fence-local", 10_000);
    first.release();
    FdbLock second = (FdbLock) next.get(30, TimeUnit.SECONDS);
    assertTrue(second.token().isNewerThan(first.token()));
    assertEquals(Set.of(first.token()), storeGrants(a.locks().mutexes(), "fence-local"),
        "the second grant passed within the node");
    byte[] key = "lock-caching-test/fenced".getBytes(java.nio.charset.StandardCharsets.UTF_8);
    Exception refused = assertThrows(Exception.class,
        () -> db.runAsync(tr -> first.fence(tr).thenRun(() -> tr.set(key, new byte[] {1}))).get(30, TimeUnit.SECONDS));
    assertTrue(String.valueOf(refused.getCause()).contains("was released"), "refused: " + refused.getCause());
    db.runAsync(tr -> second.fence(tr).thenRun(() -> tr.set(key, new byte[] {2}))).get(30, TimeUnit.SECONDS);
    assertEquals(2, db.readAsync(tr -> tr.get(key)).get(30, TimeUnit.SECONDS)[0]);
    second.release();
    second.release(); // twice: harmless
  }
}
