package io.github.fdbcoord.service;

import io.github.fdbcoord.client.CoordinationClient;
import io.github.fdbcoord.api.MutexState;
import io.github.fdbcoord.api.QueueEntry;
import io.github.fdbcoord.client.ClientLock;
import io.github.fdbcoord.client.LockOptions;
import io.github.fdbcoord.client.wire.MutexWire;
import com.apple.foundationdb.directory.DirectoryLayer;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.mutex.MutexOptions;
import io.github.fdbcoord.mutex.MutexService;
import io.github.fdbcoord.service.eventbus.FailureCodes;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetSocket;
import io.vertx.ext.web.client.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static io.github.fdbcoord.service.ServiceFixture.await;
import static io.github.fdbcoord.service.WaiterLivenessTest.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The multi-lock through the service: {@code acquireAll} / {@code releaseAll} on {@code <prefix>.mutex} and
 * {@code POST /mutexes/acquire-all} / {@code release-all}, all or none, with an acquire's requester liveness,
 * abandon, timeout and bad-input answers.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MultiLockServiceTest {
  // One service for the class (a start takes long on a loaded machine); each test's mutexes have names of its own.
  private static Vertx vertx;
  private static ServiceFixture shared;
  private static NetClient net;
  private ServiceFixture f;
  private String mutex;
  /** This test's prefix of mutex names. */
  private String prefix;

  @BeforeAll
  static void startService() {
    vertx = Vertx.vertx();
    net = vertx.createNetClient();
    // A lease far longer than a loaded machine's pauses: a holder here heartbeats only in the round trip test.
    JsonObject config = ServiceFixture.baseConfig();
    config.getJsonObject("mutex").put("leaseMs", 30_000);
    shared = ServiceFixture.start(vertx, config, null);
  }

  @AfterAll
  static void stopService() {
    try {
      if (shared != null) {
        shared.close();
      }
    } finally {
      await(net.close());
      await(vertx.close());
    }
  }

  @BeforeEach
  void useSharedService(TestInfo test) {
    f = shared;
    mutex = f.client.mutexAddress();
    prefix = test.getTestMethod().orElseThrow().getName() + "/";
  }

  /** The mutex {@code name} of this test. */
  private String n(String name) {
    return prefix + name;
  }

  private Future<JsonObject> acquireAll(List<String> names, String owner, long timeoutMs) {
    return f.client.request(mutex, MutexWire.ACQUIRE_ALL, new JsonObject().put("names", new JsonArray(names))
        .put("owner", owner).put("timeoutMs", timeoutMs), timeoutMs + 10_000);
  }

  private MutexState state(String name) {
    return await(f.client.mutexState(name));
  }

  private String owner(String name) {
    return state(name).owner().map(o -> o.owner()).orElse(null);
  }

  private List<String> queue(String name) {
    return state(name).queue().stream().map(QueueEntry::owner).toList();
  }

  private static Map<String, String> tokens(JsonObject grant) {
    Map<String, String> tokens = new HashMap<>();
    for (Object o : grant.getJsonArray("grants")) {
      JsonObject g = (JsonObject) o;
      tokens.put(g.getString("name"), g.getString("token"));
    }
    return tokens;
  }

  private static Throwable failureOf(Future<?> f) {
    try {
      await(f);
    } catch (RuntimeException e) {
      return e instanceof ReplyException ? e : e.getCause() != null ? e.getCause() : e;
    }
    return fail("expected a failure, got " + f.result());
  }

  /**
   * The typed client's {@code acquireAll} and {@code releaseAll}: two owners asking for overlapping sets in opposite
   * orders are served one after the other (no deadlock), each set's tokens are what the store holds, and a set
   * released together leaves nothing held.
   */
  @Test
  void theTypedClientTakesAndReleasesSetsAllOrNone() throws Exception {
    List<String> forward = List.of(n("x"), n("y"), n("z"));
    List<String> backward = List.of(n("z"), n("y"));
    CoordinationClient.MultiGrant first = await(f.client.acquireAll(forward, "typed-a", Duration.ofSeconds(15)));
    assertEquals("typed-a", first.owner());
    assertEquals(Set.copyOf(forward), first.tokens().keySet());
    for (String name : forward) {
      assertEquals(first.tokens().get(name), state(name).owner().orElseThrow().token());
    }
    Future<CoordinationClient.MultiGrant> second = f.client.acquireAll(backward, "typed-b", Duration.ofSeconds(15));
    eventually("typed-b queued on both", Duration.ofSeconds(20),
        () -> queue(n("y")).equals(List.of("typed-b")) && queue(n("z")).equals(List.of("typed-b")));
    assertEquals(3, await(f.client.releaseAll(first)).size());
    CoordinationClient.MultiGrant next = await(second);
    assertEquals(Set.copyOf(backward), next.tokens().keySet());
    for (String name : backward) {
      assertTrue(next.tokens().get(name).isNewerThan(first.tokens().get(name)), name + "'s token is newer");
    }
    assertEquals(null, owner(n("x")), "x was released with the set");
    await(f.client.releaseAll(next));
    assertEquals(null, owner(n("y")));
    assertEquals(null, owner(n("z")));
  }

  @Test
  void acquiresEveryMutexHeartbeatsThemByNameAndReleasesThemTogether() {
    int heldBefore = f.service.heldMutexCount();
    JsonObject grant = await(acquireAll(List.of(n("c"), n("a"), n("b"), n("a")), "x", 5_000));
    assertEquals(heldBefore + 3, f.service.heldMutexCount(), "the node remembers the grants, to release them at stop");
    assertEquals("x", grant.getString("owner"));
    assertTrue(grant.getBoolean("held"));
    assertEquals(30_000, grant.getLong("leaseMs"));
    Map<String, String> tokens = tokens(grant);
    assertEquals(List.of(n("a"), n("b"), n("c")), grant.getJsonArray("grants").stream()
        .map(g -> ((JsonObject) g).getString("name")).toList(), "each name once, in the order queued");
    for (String name : List.of(n("a"), n("b"), n("c"))) {
      assertEquals(tokens.get(name), state(name).owner().orElseThrow().token().toString());
      JsonObject beat = f.request(mutex, MutexWire.HEARTBEAT, new JsonObject().put("name", name).put("owner", "x")
          .put("token", tokens.get(name)));
      assertTrue(beat.getBoolean("held"), beat.encode());
    }
    JsonObject released = f.request(mutex, MutexWire.RELEASE_ALL, new JsonObject().put("owner", "x")
        .put("grants", grant.getJsonArray("grants")));
    JsonArray events = released.getJsonArray("events");
    assertEquals(3, events.size());
    assertEquals(1, events.stream().map(e -> ((JsonObject) e).getString("sequence")).distinct().count(),
        "released in one transaction: " + events);
    for (String name : List.of(n("a"), n("b"), n("c"))) {
      assertNull(owner(name), name);
    }
    assertEquals(heldBefore, f.service.heldMutexCount(), "the node forgot the released grants");
  }

  /**
   * Requesters take random overlapping sets of 3 to 5 of 8 mutexes, listed in random orders, through the event bus:
   * every one is served (no deadlock), no mutex ever has two holders, and each mutex's tokens only grow.
   */
  @Test
  void overlappingSetsInAnyOrderAreServedWithoutDeadlockOrOverlap() throws Exception {
    List<String> mutexes = List.of(n("m0"), n("m1"), n("m2"), n("m3"), n("m4"), n("m5"), n("m6"), n("m7"));
    Map<String, String> holders = new ConcurrentHashMap<>();
    Map<String, String> lastToken = new ConcurrentHashMap<>();
    Map<String, Integer> grantsPerMutex = new ConcurrentHashMap<>();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    AtomicInteger served = new AtomicInteger();
    CountDownLatch go = new CountDownLatch(1);
    int requesters = 12;
    int rounds = 6;
    List<Thread> threads = new ArrayList<>();
    for (int c = 0; c < requesters; c++) {
      int requester = c;
      threads.add(new Thread(() -> {
        try {
          go.await();
          for (int r = 0; r < rounds; r++) {
            List<String> set = new ArrayList<>(mutexes);
            Collections.shuffle(set, ThreadLocalRandom.current());
            set = set.subList(0, 3 + ThreadLocalRandom.current().nextInt(3));
            String owner = "r" + requester + "/" + r;
            JsonObject grant = await(acquireAll(set, owner, 20_000));
            Map<String, String> tokens = tokens(grant);
            assertEquals(Set.copyOf(set), tokens.keySet());
            for (String m : set) {
              String was = holders.putIfAbsent(m, owner);
              assertNull(was, owner + " holds " + m + " while " + was + " does");
              String token = tokens.get(m);
              String before = lastToken.put(m, token);
              // Tokens are hex of one length: their strings sort as their values.
              assertTrue(before == null || token.compareTo(before) > 0, m + ": token " + token + " after " + before);
              grantsPerMutex.merge(m, 1, Integer::sum);
            }
            served.incrementAndGet();
            for (String m : set) {
              assertTrue(holders.remove(m, owner));
            }
            if (r % 2 == 0) {
              f.request(mutex, MutexWire.RELEASE_ALL, new JsonObject().put("owner", owner)
                  .put("grants", grant.getJsonArray("grants")));
            } else {
              for (String m : set) {
                f.request(mutex, MutexWire.RELEASE, new JsonObject().put("name", m).put("owner", owner)
                    .put("token", tokens.get(m)));
              }
            }
          }
        } catch (Throwable t) {
          failure.compareAndSet(null, t);
        }
      }, "requester-" + c));
    }
    threads.forEach(Thread::start);
    go.countDown();
    for (Thread t : threads) {
      t.join(100_000);
      assertFalse(t.isAlive(), t.getName() + " still waits after 100 s: a deadlock");
    }
    if (failure.get() != null) {
      throw new AssertionError("a requester failed", failure.get());
    }
    assertEquals(requesters * rounds, served.get(), "every round of every requester was served");
    assertEquals(Set.copyOf(mutexes), grantsPerMutex.keySet(), "every mutex was contended: " + grantsPerMutex);
    for (String m : mutexes) {
      MutexState s = state(m);
      assertTrue(s.owner().isEmpty() && s.queue().isEmpty(), m + " left held or queued: " + s);
    }
  }

  @Test
  void aTimeoutIs409TimedOutAndLeavesNothingQueuedOrHeld() {
    assertTrue(await(f.client.tryAcquire(n("b"), "holder")).held());
    ReplyException e = assertInstanceOf(ReplyException.class, failureOf(acquireAll(List.of(n("a"), n("b"), n("c")), "x", 300)));
    assertEquals(FailureCodes.CONFLICT, e.failureCode());
    assertTrue(e.getMessage().startsWith("timed_out: "), e.getMessage());
    for (String name : List.of(n("a"), n("c"))) {
      MutexState s = state(name);
      assertTrue(s.owner().isEmpty() && s.queue().isEmpty(), name + ": " + s);
    }
    assertEquals("holder", owner(n("b")));
    assertEquals(List.of(), queue(n("b")));
  }

  @Test
  void aRequesterWhoseNodeIsGoneLeavesEveryQueueAndGivesBackItsEarlyGrants() throws Exception {
    assertTrue(await(f.client.tryAcquire(n("c"), "holder")).held());
    MessageConsumer<JsonObject> liveness = vertx.eventBus().consumer("test.liveness.multi", m -> m.reply(new JsonObject()));
    await(liveness.completion());
    Future<JsonObject> gone = f.client.request(mutex, MutexWire.ACQUIRE_ALL, new JsonObject()
        .put("names", new JsonArray().add(n("a")).add(n("b")).add(n("c"))).put("owner", "gone").put("timeoutMs", 20_000)
        .put("liveness", "test.liveness.multi"), 30_000);
    eventually("'gone' holds a and b and waits for c", Duration.ofSeconds(20),
        () -> "gone".equals(owner(n("a"))) && "gone".equals(owner(n("b"))) && queue(n("c")).equals(List.of("gone")));

    await(liveness.unregister());
    ReplyException abandoned = assertInstanceOf(ReplyException.class, failureOf(gone));
    assertEquals(FailureCodes.CONFLICT, abandoned.failureCode());
    assertTrue(abandoned.getMessage().startsWith("abandoned: "), abandoned.getMessage());
    eventually("'gone' left c's queue and gave a and b back", Duration.ofSeconds(20),
        () -> owner(n("a")) == null && owner(n("b")) == null && queue(n("c")).isEmpty());
    assertEquals("holder", owner(n("c")));
  }

  @Test
  void abandonNamingAnyOfItsMutexesEndsTheWait() throws Exception {
    assertTrue(await(f.client.tryAcquire(n("b"), "holder")).held());
    Future<JsonObject> waiting = acquireAll(List.of(n("a"), n("b")), "x", 20_000);
    eventually("x queued on b", Duration.ofSeconds(20), () -> queue(n("b")).equals(List.of("x")));
    JsonObject reply = f.request(mutex, MutexWire.ABANDON, new JsonObject().put("name", n("b")).put("owner", "x"));
    assertEquals(1, reply.getInteger("abandoned"));
    ReplyException e = assertInstanceOf(ReplyException.class, failureOf(waiting));
    assertTrue(e.getMessage().startsWith("abandoned: "), e.getMessage());
    // Answered once the wait has left its queues and given its grants back.
    assertNull(owner(n("a")));
    assertEquals(List.of(), queue(n("b")));
  }

  @Test
  void badInputIs400NamingTheField() {
    List<String> tooMany = new ArrayList<>();
    for (int i = 0; i <= MutexService.MAX_NAMES_PER_CALL; i++) {
      tooMany.add(n("m") + i);
    }
    Map<JsonObject, String> cases = Map.of(
        new JsonObject().put("owner", "x"), "'names' is missing",
        new JsonObject().put("names", new JsonArray()).put("owner", "x"), "'names' is empty",
        new JsonObject().put("names", n("a")).put("owner", "x"), "'names' must be an array",
        new JsonObject().put("names", new JsonArray().add(n("a")).add(7)).put("owner", "x"), "'names' item 1 must be a string",
        new JsonObject().put("names", new JsonArray().add(n("a")).add("")).put("owner", "x"), "'names' item 1 must not be empty",
        new JsonObject().put("names", new JsonArray(tooMany)).put("owner", "x"), "'names' has 101 distinct mutexes",
        new JsonObject().put("names", new JsonArray().add(n("a"))), "'owner' is missing",
        new JsonObject().put("names", new JsonArray().add(n("a"))).put("owner", "x").put("timeoutMs", -1), "'timeoutMs'");
    cases.forEach((body, says) -> {
      ReplyException e = f.failure(mutex, MutexWire.ACQUIRE_ALL, body, FailureCodes.BAD_REQUEST, "bad_request");
      assertTrue(e.getMessage().contains(says), body + ": " + e.getMessage());
    });
    // Duplicates count once: 101 items naming 100 mutexes are one set of 100.
    List<String> hundred = new ArrayList<>(tooMany.subList(0, 100));
    hundred.add(n("m0"));
    JsonObject grant = await(acquireAll(hundred, "x", 5_000));
    assertEquals(100, grant.getJsonArray("grants").size());
    f.request(mutex, MutexWire.RELEASE_ALL, new JsonObject().put("owner", "x").put("grants", grant.getJsonArray("grants")));

    Map<JsonObject, String> releases = Map.of(
        new JsonObject().put("owner", "x"), "'grants' is missing",
        new JsonObject().put("owner", "x").put("grants", new JsonArray()), "'grants' is empty",
        new JsonObject().put("owner", "x").put("grants", new JsonArray().add(n("a"))), "'grants' item 0 must be an object",
        new JsonObject().put("owner", "x").put("grants", new JsonArray().add(new JsonObject().put("name", n("a")))),
        "'token' is missing",
        new JsonObject().put("owner", "x").put("grants", new JsonArray().add(new JsonObject().put("name", n("a"))
            .put("token", "zz"))), "'token'");
    releases.forEach((body, says) -> {
      ReplyException e = f.failure(mutex, MutexWire.RELEASE_ALL, body, FailureCodes.BAD_REQUEST, "bad_request");
      assertTrue(e.getMessage().contains(says), body + ": " + e.getMessage());
    });
  }

  @Test
  void theHttpRoutesAcquireAndReleaseAllOrNone() {
    HttpResponse<Buffer> r = await(f.web().post("/mutexes/acquire-all").sendJsonObject(new JsonObject()
        .put("names", new JsonArray().add(n("h2")).add(n("h1"))).put("owner", "web").put("timeoutMs", 5_000)));
    assertEquals(200, r.statusCode(), r.bodyAsString());
    JsonObject grant = r.bodyAsJsonObject();
    assertEquals("web", owner(n("h1")));
    assertEquals("web", owner(n("h2")));
    HttpResponse<Buffer> released = await(f.web().post("/mutexes/release-all").sendJsonObject(new JsonObject()
        .put("owner", "web").put("grants", grant.getJsonArray("grants"))));
    assertEquals(200, released.statusCode(), released.bodyAsString());
    assertEquals(2, released.bodyAsJsonObject().getJsonArray("events").size());
    assertNull(owner(n("h1")));
    assertNull(owner(n("h2")));

    HttpResponse<Buffer> bad = await(f.web().post("/mutexes/acquire-all").sendJsonObject(new JsonObject()
        .put("names", new JsonArray().add(1)).put("owner", "web")));
    assertEquals(400, bad.statusCode());
    assertEquals("bad_request", bad.bodyAsJsonObject().getString("error"));
    assertTrue(bad.bodyAsJsonObject().getString("message").contains("'names' item 0"), bad.bodyAsString());

    assertTrue(await(f.client.tryAcquire(n("h2"), "holder")).held());
    HttpResponse<Buffer> timedOut = await(f.web().post("/mutexes/acquire-all").sendJsonObject(new JsonObject()
        .put("names", new JsonArray().add(n("h1")).add(n("h2"))).put("owner", "web").put("timeoutMs", 200)));
    assertEquals(409, timedOut.statusCode());
    assertEquals("timed_out", timedOut.bodyAsJsonObject().getString("error"));
    assertNull(owner(n("h1")));
    assertEquals(List.of(), queue(n("h2")));
  }

  @Test
  void anHttpClientThatDisconnectsLeavesEveryQueueAndGivesBackItsEarlyGrants() throws Exception {
    assertTrue(await(f.client.tryAcquire(n("d3"), "holder")).held());
    NetSocket socket = await(net.connect(f.service.httpPort(), "127.0.0.1"));
    String body = new JsonObject().put("names", new JsonArray().add(n("d3")).add(n("d1")).add(n("d2"))).put("owner", "gone")
        .put("timeoutMs", 20_000).encode();
    await(socket.write("POST /mutexes/acquire-all HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        + "Content-Type: application/json\r\nContent-Length: " + body.length() + "\r\n\r\n" + body));
    eventually("'gone' holds d1 and d2 and waits for d3", Duration.ofSeconds(20),
        () -> "gone".equals(owner(n("d1"))) && "gone".equals(owner(n("d2"))) && queue(n("d3")).equals(List.of("gone")));
    await(socket.close());
    eventually("'gone' left d3's queue and gave d1 and d2 back", Duration.ofSeconds(20),
        () -> owner(n("d1")) == null && owner(n("d2")) == null && queue(n("d3")).isEmpty());
    assertEquals("holder", owner(n("d3")));
  }

  /**
   * The last grant and the client's disconnect race: whoever wins, the disconnected client does not keep the mutexes
   * (a grant written after the close is released whole, with releaseAll) and the next waiter gets them all. At worst,
   * when the grant was written before the close arrived, the client holds them until its lease (5 s here) runs out,
   * as any holder that stops heartbeating, still within the next waiter's wait.
   */
  @Test
  void grantsRacingTheDisconnectAreGivenBack() throws Exception {
    // A service of its own, with a short lease, on a Vert.x of its own (its addresses are the shared service's).
    Vertx own = Vertx.vertx();
    JsonObject config = ServiceFixture.baseConfig();
    config.getJsonObject("mutex").put("leaseMs", 5_000);
    f = ServiceFixture.start(own, config, null);
    mutex = f.client.mutexAddress();
    try {
      raceTheDisconnect();
    } finally {
      try {
        f.close();
      } finally {
        await(own.close());
      }
    }
  }

  private void raceTheDisconnect() throws Exception {
    for (int round = 0; round < 6; round++) {
      String a = "race-a-" + round;
      String c = "race-c-" + round;
      // A lock that renews itself: the holder stays whatever the machine's load.
      ClientLock holder = await(f.client.lock(c, new LockOptions().setOwner("holder")));
      NetSocket socket = await(net.connect(f.service.httpPort(), "127.0.0.1"));
      String body = new JsonObject().put("names", new JsonArray().add(a).add(c)).put("owner", "gone")
          .put("timeoutMs", 15_000).encode();
      await(socket.write("POST /mutexes/acquire-all HTTP/1.1\r\nHost: 127.0.0.1\r\n"
          + "Content-Type: application/json\r\nContent-Length: " + body.length() + "\r\n\r\n" + body));
      eventually("'gone' holds a and waits for c", Duration.ofSeconds(20),
          () -> "gone".equals(owner(a)) && queue(c).equals(List.of("gone")));
      Future<HttpResponse<Buffer>> live = f.web().post("/mutexes/acquire-all").sendJsonObject(new JsonObject()
          .put("names", new JsonArray().add(c).add(a)).put("owner", "live").put("timeoutMs", 20_000));
      eventually("'live' waits on both", Duration.ofSeconds(20),
          () -> queue(a).equals(List.of("live")) && queue(c).equals(List.of("gone", "live")));
      Future<Void> release = holder.release();
      socket.close();
      await(release);
      HttpResponse<Buffer> granted = await(live);
      assertEquals(200, granted.statusCode(), granted.bodyAsString());
      assertEquals("live", owner(a));
      assertEquals("live", owner(c));
      f.request(mutex, MutexWire.RELEASE_ALL, new JsonObject().put("owner", "live")
          .put("grants", granted.bodyAsJsonObject().getJsonArray("grants")));
    }
  }

  /**
   * A stopping node answers a waiting acquireAll 503 closed once its owner left every queue and gave back its early
   * grants, and releases the grants of the acquireAll calls it served (as it does an acquire's).
   */
  @Test
  void aStoppingNodeEndsWaitingSetsAndReleasesTheSetsItGranted() throws Exception {
    Vertx own = Vertx.vertx();
    EmbeddedDatabase db = EmbeddedDatabase.inMemory();
    try {
      f = ServiceFixture.start(own, ServiceFixture.baseConfig(), db);
      mutex = f.client.mutexAddress();
      List<String> path = new ArrayList<>(f.root);
      path.add("mutex");
      try (MutexService probe = MutexService.create(db, DirectoryLayer.getDefault().open(db, path).join(),
          MutexOptions.builder().reaperEnabled(false).build())) {
        // Held outside the service: the stop does not release it.
        probe.acquire("d", "outsider").get(20, TimeUnit.SECONDS);
        await(acquireAll(List.of("a", "b"), "x", 5_000));
        Future<JsonObject> waiting = acquireAll(List.of("c", "d"), "y", 20_000);
        eventually("y holds c and waits for d", Duration.ofSeconds(20), () -> {
          MutexState c = probe.state("c").join();
          return c.owner().map(o -> o.owner().equals("y")).orElse(false)
              && probe.state("d").join().queue().size() == 1;
        });
        await(own.undeploy(f.deploymentId));
        ReplyException closed = assertInstanceOf(ReplyException.class, failureOf(waiting));
        assertEquals(FailureCodes.UNAVAILABLE, closed.failureCode());
        assertTrue(closed.getMessage().startsWith("closed: "), closed.getMessage());
        for (String name : List.of("a", "b", "c")) {
          assertTrue(probe.state(name).join().owner().isEmpty(), name + " released: " + probe.state(name).join());
        }
        MutexState d = probe.state("d").join();
        assertEquals("outsider", d.owner().orElseThrow().owner());
        assertTrue(d.queue().isEmpty(), d.toString());
      }
    } finally {
      f = shared;
      try {
        await(own.close());
      } finally {
        db.close();
      }
    }
  }
}
