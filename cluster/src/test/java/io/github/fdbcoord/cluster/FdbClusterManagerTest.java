package io.github.fdbcoord.cluster;

import io.github.fdbcoord.cluster.impl.StoreProbe;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.mutex.MutexOptions;
import io.github.fdbcoord.mutex.MutexService;
import io.github.fdbcoord.mutex.MutexSubscription;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.AsyncMap;
import io.vertx.core.shareddata.Counter;
import io.vertx.core.shareddata.Lock;
import io.vertx.core.spi.cluster.NodeInfo;
import io.vertx.core.spi.cluster.NodeListener;
import io.vertx.core.spi.cluster.RegistrationInfo;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import static io.github.fdbcoord.cluster.TestNodes.waitUntil;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The behaviours vertx-core's suites do not reach: eviction of a crashed or paused node (on the
 * evicting node's clock), re-join after eviction, the order and uniqueness of membership events on
 * every node, TTL before any sweep, lock events in the mutex log, exact counters, options.
 * Managers here are used directly (each initialised with a plain Vert.x instance), all on one
 * embedded database.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FdbClusterManagerTest {
  private static final Duration LEASE = Duration.ofMillis(1000);

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
      leave(m);
    }
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    db.close();
  }

  private FdbClusterManagerOptions.Builder options() {
    return TestNodes.options(db, LEASE);
  }

  private FdbClusterManager join(FdbClusterManagerOptions.Builder options) throws Exception {
    FdbClusterManager m = TestNodes.join(vertx, options);
    managers.add(m);
    return m;
  }

  private static void leave(FdbClusterManager m) throws Exception {
    Promise<Void> p = Promise.promise();
    m.leave(p);
    p.future().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private static <T> T await(Consumer<Promise<T>> op) throws Exception {
    Promise<T> p = Promise.promise();
    op.accept(p);
    return p.future().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  private static <T> T await(io.vertx.core.Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }


  /** A dashboard tells a member that left from one the cluster evicted, and says since when. */
  @Test
  void aNodeSeesWhetherAMemberLeftOrWasEvictedAndWhen() throws Exception {
    FdbClusterManager observer = join(options());
    FdbClusterManager leaving = join(options());
    FdbClusterManager crashing = join(options());
    waitUntil("the observer lists both", () -> observer.getNodes().size() == 3, Duration.ofSeconds(10));
    assertTrue(observer.departureCause(leaving.getNodeId()).isEmpty(), "a live member has not gone");

    java.time.Instant beforeLeave = java.time.Instant.now();
    leave(leaving);
    waitUntil("the observer sees the leave", () -> observer.departureCause(leaving.getNodeId()).isPresent(),
        Duration.ofSeconds(10));
    assertEquals("left", observer.departureCause(leaving.getNodeId()).get());
    assertFalse(observer.departedAt(leaving.getNodeId()).get().isBefore(beforeLeave));

    FaultInjection.crash(crashing);
    waitUntil("the observer sees the eviction", () -> observer.departureCause(crashing.getNodeId()).isPresent(),
        Duration.ofSeconds(20));
    assertEquals("evicted", observer.departureCause(crashing.getNodeId()).get());
    assertEquals(List.of(observer.getNodeId()), observer.getNodes());
  }

  private static NodeListener recorder(List<String> events) {
    return new NodeListener() {
      @Override
      public void nodeAdded(String nodeID) {
        events.add("added " + nodeID);
      }

      @Override
      public void nodeLeft(String nodeID) {
        events.add("left " + nodeID);
      }
    };
  }

  @Test
  void membershipEventsFireOncePerChangeInTheSameOrderOnEveryNode() throws Exception {
    List<List<String>> seen = new ArrayList<>();
    List<FdbClusterManager> observers = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      FdbClusterManager o = join(options());
      List<String> events = new CopyOnWriteArrayList<>();
      o.nodeListener(recorder(events));
      observers.add(o);
      seen.add(events);
    }
    // The view changes before the listener runs, so wait for the events themselves: observer i has
    // heard of every observer that joined after it. Clearing earlier would let a late event leak in.
    for (int i = 0; i < observers.size(); i++) {
      List<String> events = seen.get(i);
      List<String> expected = new ArrayList<>();
      for (FdbClusterManager later : observers.subList(i + 1, observers.size())) {
        expected.add("added " + later.getNodeId());
      }
      waitUntil("observer " + i + " heard of the observers after it", () -> events.equals(expected),
          Duration.ofSeconds(5));
    }
    seen.forEach(List::clear); // from here on every observer must see exactly the same story

    // Six nodes join and leave concurrently, in overlapping waves.
    List<CompletableFuture<String>> churn = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      churn.add(CompletableFuture.supplyAsync(() -> {
        try {
          FdbClusterManager m = join(options());
          String id = m.getNodeId();
          managers.remove(m);
          leave(m);
          return id;
        } catch (Exception e) {
          throw new RuntimeException(e);
        }
      }));
    }
    Set<String> churned = new HashSet<>();
    for (CompletableFuture<String> f : churn) {
      churned.add(f.get(30, TimeUnit.SECONDS));
    }
    for (List<String> events : seen) {
      waitUntil("12 events on every observer", () -> events.size() >= 12, Duration.ofSeconds(10));
    }
    Thread.sleep(300); // a duplicate would arrive in this time
    for (List<String> events : seen) {
      assertEquals(12, events.size(), "each change exactly once: " + events);
      for (String id : churned) {
        int added = events.indexOf("added " + id);
        int left = events.indexOf("left " + id);
        assertTrue(added >= 0 && left > added, "added before left for " + id + ": " + events);
      }
      assertEquals(seen.get(0), events, "the same order on every node");
    }
    for (FdbClusterManager o : observers) {
      assertEquals(observers.get(0).getNodes(), o.getNodes(), "the same node list, in the same order, everywhere");
    }
  }

  @Test
  void crashedNodeIsEvictedWithItsRegistrationsAndItsLockGoesToTheNextWaiter() throws Exception {
    // The lease path (a dead host, a partition: no connection closes); FailureDetectionTest has the fast one.
    FdbClusterManager a = join(options().failureDetection(false));
    FdbClusterManager b = join(options().failureDetection(false));
    List<String> bEvents = new CopyOnWriteArrayList<>();
    b.nodeListener(recorder(bEvents));
    await((Promise<Void> p) -> a.addRegistration("orders", new RegistrationInfo(a.getNodeId(), 1, false), p));
    assertEquals(1, await((Promise<List<RegistrationInfo>> p) -> b.getRegistrations("orders", p)).size());

    Lock held = await((Promise<Lock> p) -> a.getLockWithTimeout("crash-lock", 1000, p));
    assertNotNull(held);
    Promise<Lock> waiting = Promise.promise();
    b.getLockWithTimeout("crash-lock", 20_000, waiting);

    long crashed = System.nanoTime();
    FaultInjection.crash(a);
    Lock next = waiting.future().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
    long handOffMillis = (System.nanoTime() - crashed) / 1_000_000;
    waitUntil("B sees A leave", () -> bEvents.contains("left " + a.getNodeId()), Duration.ofSeconds(10));
    assertEquals(List.of(b.getNodeId()), b.getNodes());
    assertEquals(List.of(), await((Promise<List<RegistrationInfo>> p) -> b.getRegistrations("orders", p)),
        "the dead node's registrations went with its record");
    // Not before a lease has run since the last heartbeat (at most one heartbeat interval, 200 ms,
    // before the crash); within lease + two reaper passes + the hand-off's latency, with room for a
    // loaded machine.
    assertTrue(handOffMillis >= LEASE.toMillis() - 250 && handOffMillis < LEASE.toMillis() + 3000,
        "next waiter held the lock after " + handOffMillis + " ms");
    next.release();
  }

  @Test
  void evictedNodeRejoinsAndRepublishesItsRegistrationsAndNodeInfo() throws Exception {
    FdbClusterManager a = join(options().heartbeatInterval(Duration.ofMillis(300)));
    FdbClusterManager b = join(options());
    List<String> bEvents = new CopyOnWriteArrayList<>();
    b.nodeListener(recorder(bEvents));
    // A loopback host: peers' failure detectors connect to a node's host (never to another network's).
    NodeInfo info = new NodeInfo("127.0.0.1", 4711, new JsonObject().put("zone", "a"));
    await((Promise<Void> p) -> a.setNodeInfo(info, p));
    RegistrationInfo reg = new RegistrationInfo(a.getNodeId(), 7, false);
    await((Promise<Void> p) -> a.addRegistration("payments", reg, p));

    // Watch the store for the state the schema forbids: a node record gone while its registrations remain.
    AtomicBoolean stop = new AtomicBoolean();
    AtomicInteger recordAbsentSeen = new AtomicInteger();
    AtomicInteger violations = new AtomicInteger();
    CompletableFuture<Void> checker = CompletableFuture.runAsync(() -> {
      while (!stop.get()) {
        boolean[] state = StoreProbe.recordMissingAndRegistered(b.store(), a.getNodeId(), "payments");
        if (state[0]) {
          recordAbsentSeen.incrementAndGet();
          if (state[1]) {
            violations.incrementAndGet();
          }
        }
      }
    });

    // Hold A's membership thread in its listener (on a third node's arrival), so that A cannot
    // re-join before the evicted state has been looked at.
    java.util.concurrent.CountDownLatch hold = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch held = new java.util.concurrent.CountDownLatch(1);
    a.nodeListener(new NodeListener() {
      @Override
      public void nodeAdded(String nodeID) {
        held.countDown();
        try {
          hold.await(20, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }

      @Override
      public void nodeLeft(String nodeID) {}
    });
    FdbClusterManager c = join(options());
    assertTrue(held.await(10, TimeUnit.SECONDS));
    bEvents.clear();

    // B evicts A as its reaper would after a pause of A (A itself keeps running).
    assertTrue(StoreProbe.evict(b.store(), a.getNodeId()).get(10, TimeUnit.SECONDS));
    waitUntil("B sees A leave", () -> bEvents.contains("left " + a.getNodeId()), Duration.ofSeconds(10));
    assertEquals(List.of(), await((Promise<List<RegistrationInfo>> p) -> b.getRegistrations("payments", p)),
        "A's registrations went with its record");
    assertThrows(Exception.class, () -> await((Promise<NodeInfo> p) -> b.getNodeInfo(a.getNodeId(), p)));
    Thread.sleep(600); // A's heartbeats find the record gone meanwhile; the re-join waits for the held thread
    assertTrue(recordAbsentSeenSoFar(recordAbsentSeen), "the checker saw the evicted state");
    hold.countDown();
    waitUntil("B sees A leave and come back", () -> bEvents.stream().filter(e -> e.endsWith(a.getNodeId())).toList()
        .equals(List.of("left " + a.getNodeId(), "added " + a.getNodeId())), Duration.ofSeconds(10));
    waitUntil("A's registration is back", () -> {
      try {
        return await((Promise<List<RegistrationInfo>> p) -> b.getRegistrations("payments", p)).equals(List.of(reg));
      } catch (Exception e) {
        return false;
      }
    }, Duration.ofSeconds(10));
    assertEquals(info, await((Promise<NodeInfo> p) -> b.getNodeInfo(a.getNodeId(), p)));
    stop.set(true);
    checker.get(10, TimeUnit.SECONDS);
    assertEquals(0, violations.get(), "registrations never outlived their node's record");
    waitUntil("A and C list the same nodes as B", () -> b.getNodes().equals(a.getNodes()) && b.getNodes().equals(c.getNodes()),
        Duration.ofSeconds(10));
    assertTrue(a.isActive());
  }

  private static boolean recordAbsentSeenSoFar(AtomicInteger seen) throws InterruptedException {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (seen.get() == 0 && System.nanoTime() < end) {
      Thread.sleep(10);
    }
    return seen.get() > 0;
  }

  @Test
  void pausedHolderLosesItsLockToTheNextWaiterAndLearnsItWhenItResumes() throws Exception {
    FdbClusterManager a = join(options());
    FdbClusterManager b = join(options());
    FdbLock held = (FdbLock) await((Promise<Lock> p) -> a.getLockWithTimeout("pause-lock", 1000, p));
    Promise<Lock> waiting = Promise.promise();
    b.getLockWithTimeout("pause-lock", 20_000, waiting);

    long paused = System.nanoTime();
    a.simulatePause(Duration.ofMillis(3000));
    FdbLock next = (FdbLock) waiting.future().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
    long handOffMillis = (System.nanoTime() - paused) / 1_000_000;
    assertTrue(handOffMillis < 3000, "the next waiter did not wait for the pause to end: " + handOffMillis + " ms");
    assertTrue(next.token().compareTo(held.token()) > 0, "the new grant's fencing token is higher");

    held.lost().get(10, TimeUnit.SECONDS); // the resumed holder learns it lost the lock
    CompletableFuture<LockEvent> refused = held.releaseAsync();
    assertThrows(Exception.class, () -> refused.get(10, TimeUnit.SECONDS), "its late release is refused");
    waitUntil("A re-joins", () -> b.getNodes().contains(a.getNodeId()) && a.getNodes().contains(b.getNodeId()),
        Duration.ofSeconds(10));
    next.release();
  }

  @Test
  void asyncMapEntryPastItsTtlIsNeverReturnedEvenBeforeTheSweeperRuns() throws Exception {
    // A reaper (and so a sweeper) that never runs during the test.
    FdbClusterManager a = join(options().reaperInterval(Duration.ofHours(1)).nodeLease(Duration.ofHours(2))
        .logRetention(Duration.ofHours(5)));
    AsyncMap<String, String> map = await((Promise<AsyncMap<String, String>> p) -> a.getAsyncMap("ttl-map", p));
    // A TTL no loaded machine's two calls outlast (at 200 ms the read before expiry found nothing 3
    // times in 16 at load 25-40); the expiry is then waited for, not slept.
    await(map.put("k", "v", 5000));
    await(map.put("forever", "w"));
    assertEquals("v", await(map.get("k")));
    waitUntil("the entry expired", () -> map.get("k").toCompletionStage().toCompletableFuture().join() == null,
        Duration.ofSeconds(30));
    assertEquals(1, await(map.size()));
    assertEquals(Set.of("forever"), await(map.keys()));
    assertEquals(List.of("w"), await(map.values()));
    assertNull(await(map.replace("k", "x")), "an expired entry is not replaced");
    assertFalse(await(map.removeIfPresent("k", "v")));
    byte[] raw = StoreProbe.rawAsyncMapValue(a.store(), "ttl-map", "k");
    assertNotNull(raw, "the expired entry is still stored: nothing swept it");
    assertNull(await(map.putIfAbsent("k", "fresh")), "an expired entry counts as absent");
    assertEquals("fresh", await(map.get("k")));
  }

  @Test
  void sweeperRemovesExpiredEntriesFromTheStore() throws Exception {
    FdbClusterManager a = join(options());
    AsyncMap<String, String> map = await((Promise<AsyncMap<String, String>> p) -> a.getAsyncMap("swept", p));
    await(map.put("k", "v", 100));
    await(map.put("kept", "v"));
    waitUntil("the sweeper removed the expired entry", () ->
        StoreProbe.rawAsyncMapValue(a.store(), "swept", "k") == null, Duration.ofSeconds(5));
    assertEquals("v", await(map.get("kept")));
  }

  @Test
  void sharedDataLockTransitionsAppearInTheMutexEventLog() throws Exception {
    FdbClusterManager a = join(options());
    FdbClusterManager b = join(options());
    MutexService service = MutexService.open(db, MutexOptions.builder()
        .directory(FdbClusterManagerOptions.DEFAULT_LOCK_DIRECTORY).reaperEnabled(false).build()).get(10, TimeUnit.SECONDS);
    List<LockEvent> events = new CopyOnWriteArrayList<>();
    MutexSubscription sub = service.subscribe("audited", events::add).get(10, TimeUnit.SECONDS);
    try {
      Lock first = await((Promise<Lock> p) -> a.getLockWithTimeout("audited", 1000, p));
      Promise<Lock> second = Promise.promise();
      b.getLockWithTimeout("audited", 10_000, second);
      waitUntil("B queued", () -> service.state("audited").join().queue().size() == 1, Duration.ofSeconds(5));
      first.release();
      Lock got = second.future().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
      got.release();
      waitUntil("three transitions", () -> events.size() == 3, Duration.ofSeconds(5));
      assertEquals(List.of(LockEvent.Type.ACQUIRED, LockEvent.Type.HANDED_OFF, LockEvent.Type.RELEASED),
          events.stream().map(LockEvent::type).toList());
      assertTrue(events.get(0).owner().orElse("").startsWith(a.getNodeId() + "/"), "owner names the node: " + events.get(0));
      assertTrue(events.get(1).owner().orElse("").startsWith(b.getNodeId() + "/"), "hand-off to B's waiter: " + events.get(1));
    } finally {
      sub.close();
      service.close();
    }
  }

  @Test
  void countersAreExactUnderConcurrentIncrementsFromSeveralNodes() throws Exception {
    List<Counter> counters = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      FdbClusterManager m = join(options());
      counters.add(await((Promise<Counter> p) -> m.getCounter("hits", p)));
    }
    List<CompletableFuture<Long>> results = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      results.add(counters.get(i % 3).incrementAndGet().toCompletionStage().toCompletableFuture());
    }
    Set<Long> values = Collections.synchronizedSet(new HashSet<>());
    for (CompletableFuture<Long> r : results) {
      values.add(r.get(30, TimeUnit.SECONDS));
    }
    assertEquals(300, values.size(), "every increment returned a distinct value");
    assertEquals(1L, Collections.min(values));
    assertEquals(300L, Collections.max(values));
    assertEquals(300L, await(counters.get(1).get()));
    assertTrue(await(counters.get(2).compareAndSet(300, 5)));
    assertFalse(await(counters.get(0).compareAndSet(300, 6)));
    assertEquals(4L, await(counters.get(0).decrementAndGet()));
  }

  @Test
  void operationsFailWithTheStoresTimeoutInsteadOfHangingWhenTheStoreIsTooSlow() throws Exception {
    try (EmbeddedDatabase slow = EmbeddedDatabase.open(io.github.fdbcoord.embedded.EmbeddedOptions.builder()
        .latency(Duration.ofMillis(150)).build())) {
      FdbClusterManager m = new FdbClusterManager(options().database(slow).operationTimeout(Duration.ofMillis(100)).build());
      m.init(vertx);
      Promise<Void> p = Promise.promise();
      m.join(p);
      java.util.concurrent.ExecutionException e = assertThrows(java.util.concurrent.ExecutionException.class,
          () -> p.future().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS));
      assertEquals(io.github.fdbcoord.fdb.FdbErrors.TRANSACTION_TIMED_OUT, io.github.fdbcoord.fdb.FdbErrors.codeOf(e.getCause()),
          "join fails with transaction_timed_out: " + e.getCause());
      assertFalse(m.isActive());
    }
  }

  /**
   * A database that records the threads calling it: every SPI and SharedData operation is issued
   * from an event loop, and none of them may reach the store on it.
   */
  @Test
  void noStoreCallIsMadeOnAnEventLoop() throws Exception {
    List<String> eventLoopCalls = new CopyOnWriteArrayList<>();
    AtomicInteger calls = new AtomicInteger();
    com.apple.foundationdb.Database watched = (com.apple.foundationdb.Database) java.lang.reflect.Proxy.newProxyInstance(
        getClass().getClassLoader(), new Class<?>[] {com.apple.foundationdb.Database.class}, (proxy, method, args) -> {
          calls.incrementAndGet();
          if (io.vertx.core.Context.isOnEventLoopThread()) {
            eventLoopCalls.add(method.getName() + " on " + Thread.currentThread().getName());
          }
          try {
            return method.invoke(db, args);
          } catch (java.lang.reflect.InvocationTargetException e) {
            throw e.getCause();
          }
        });
    FdbClusterManager a = join(options().database(watched));
    FdbClusterManager b = join(options().database(watched));
    CompletableFuture<Void> done = new CompletableFuture<>();
    vertx.runOnContext(v -> {
      Promise<AsyncMap<String, String>> mapPromise = Promise.promise();
      a.getAsyncMap("loop-map", mapPromise);
      Promise<Counter> counterPromise = Promise.promise();
      a.getCounter("loop-counter", counterPromise);
      Promise<Lock> lockPromise = Promise.promise();
      a.getLockWithTimeout("loop-lock", 1000, lockPromise);
      Promise<Void> reg = Promise.promise();
      a.addRegistration("loop-address", new RegistrationInfo(a.getNodeId(), 1, false), reg);
      Promise<List<RegistrationInfo>> regs = Promise.promise();
      Promise<NodeInfo> info = Promise.promise();
      Promise<Void> setInfo = Promise.promise();
      a.setNodeInfo(new NodeInfo("127.0.0.1", 1, null), setInfo);
      mapPromise.future()
          .compose(map -> map.put("k", "v", 10_000).compose(x -> map.get("k")).compose(x -> map.entries()))
          .compose(x -> counterPromise.future()).compose(c -> c.incrementAndGet())
          .compose(x -> lockPromise.future()).map(lock -> {
            lock.release();
            return null;
          })
          .compose(x -> reg.future()).compose(x -> setInfo.future())
          .compose(x -> {
            b.getRegistrations("loop-address", regs);
            b.getNodeInfo(a.getNodeId(), info);
            return regs.future().compose(r -> info.future());
          })
          .onComplete(ar -> {
            if (ar.succeeded()) {
              done.complete(null);
            } else {
              done.completeExceptionally(ar.cause());
            }
          });
    });
    done.get(30, TimeUnit.SECONDS);
    assertTrue(calls.get() > 0);
    assertEquals(List.of(), eventLoopCalls);
  }
}
