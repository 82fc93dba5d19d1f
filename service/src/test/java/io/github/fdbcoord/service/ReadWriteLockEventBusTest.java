package io.github.fdbcoord.service;

import static io.github.fdbcoord.service.ServiceFixture.await;
import static io.github.fdbcoord.service.WaiterLivenessTest.eventually;
import static io.github.fdbcoord.service.eventbus.FailureCodes.BAD_REQUEST;
import static io.github.fdbcoord.service.eventbus.FailureCodes.CONFLICT;
import static io.github.fdbcoord.service.eventbus.FailureCodes.NOT_FOUND;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.fdbcoord.client.wire.ReadWriteLockWire;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The read-write lock on {@code <prefix>.rwlock}, through the service on the embedded engine: acquire, heartbeat,
 * downgrade, release and state; many readers and writers at once, never a writer with anyone else; a waiting writer
 * not overtaken by later readers; a silent holder replaced after its lease; a waiter whose requester went away taken
 * out of the queue; refusals and malformed requests with their documented codes.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class ReadWriteLockEventBusTest {
  /** Far longer than a test: a holder the test does not heartbeat keeps its grant on a loaded machine. */
  private static final long LONG_LEASE_MS = 60_000;
  private static final String ZERO_TOKEN = "000000000000000000010000";

  private Vertx vertx;
  private ServiceFixture f;
  private String rwlock;

  private void start(long leaseMs) {
    vertx = Vertx.vertx();
    JsonObject config = ServiceFixture.baseConfig();
    // Acquires of many contenders may wait long on a loaded machine: up to 50 s.
    config.getJsonObject("mutex").put("maxAcquireTimeoutMs", 50_000);
    config.put("rwlock", new JsonObject().put("leaseMs", leaseMs));
    f = ServiceFixture.start(vertx, config, null);
    rwlock = f.client.readWriteLockAddress();
  }

  @AfterEach
  void stop() {
    if (f != null) {
      f.close();
    }
    if (vertx != null) {
      await(vertx.close());
    }
  }

  private Future<JsonObject> acquire(String name, String owner, String mode, long timeoutMs) {
    return f.client.request(rwlock, ReadWriteLockWire.ACQUIRE, new JsonObject().put("name", name).put("owner", owner)
        .put("mode", mode).put("timeoutMs", timeoutMs), timeoutMs + 10_000);
  }

  private JsonObject state(String name) {
    JsonObject reply = f.request(rwlock, ReadWriteLockWire.STATE, new JsonObject().put("name", name));
    assertEquals(name, reply.getString("name"), reply::encode);
    return reply;
  }

  private List<String> queue(String name) {
    return state(name).getJsonArray("queue").stream().map(w -> ((JsonObject) w).getString("owner")).toList();
  }

  private List<String> holders(String name) {
    return state(name).getJsonArray("holders").stream().map(h -> ((JsonObject) h).getString("owner")).sorted()
        .toList();
  }

  /** The fields that name a grant: what release, heartbeat and downgrade take. */
  private static JsonObject grant(JsonObject reply) {
    return new JsonObject().put("name", reply.getString("name")).put("owner", reply.getString("owner"))
        .put("token", reply.getString("token"));
  }

  @Test
  void acquireHeartbeatDowngradeAndRelease() throws Exception {
    start(LONG_LEASE_MS);
    assertEquals(new JsonObject().put("name", "l").put("holders", new JsonArray()).put("queue", new JsonArray()),
        state("l"));
    JsonObject w = await(acquire("l", "w", "write", 5_000));
    assertEquals("l", w.getString("name"));
    assertEquals("w", w.getString("owner"));
    assertEquals("write", w.getString("mode"));
    assertEquals(LONG_LEASE_MS, w.getLong("leaseMs"));
    assertEquals(ReadWriteLockWire.TOKEN_HEX_LENGTH, w.getString("token").length(), w::encode);
    assertEquals(new JsonArray().add(ReadWriteLockWire.holder("w", "write", w.getString("token"))),
        state("l").getJsonArray("holders"));

    JsonObject again = await(acquire("l", "w", "write", 0));
    assertEquals(w.getString("token"), again.getString("token"), "a holder acquiring again keeps its grant");

    JsonObject beat = f.request(rwlock, ReadWriteLockWire.HEARTBEAT, grant(w));
    assertEquals(w.getString("token"), beat.getString("token"));
    assertEquals("write", beat.getString("mode"));

    Future<JsonObject> reader = acquire("l", "r", "read", 20_000);
    eventually("'r' queues behind the writer", Duration.ofSeconds(20), () -> queue("l").equals(List.of("r")));
    JsonObject down = f.request(rwlock, ReadWriteLockWire.DOWNGRADE, grant(w));
    assertEquals("read", down.getString("mode"));
    assertTrue(down.getString("token").compareTo(w.getString("token")) > 0, () -> down + " after " + w);
    // The downgrade lets the readers at the head in, in the same transaction.
    JsonObject r = await(reader);
    assertEquals("read", r.getString("mode"));
    assertEquals(List.of("r", "w"), holders("l"));
    // The write grant is over: its token is refused; the read grant that replaced it is alive.
    f.failure(rwlock, ReadWriteLockWire.HEARTBEAT, grant(w), CONFLICT, "not_held");
    f.request(rwlock, ReadWriteLockWire.HEARTBEAT, grant(down));
    // A reader has nothing to downgrade.
    ReplyException e = f.failure(rwlock, ReadWriteLockWire.DOWNGRADE, grant(r), BAD_REQUEST, "bad_request");
    assertTrue(e.getMessage().contains("READ"), e.getMessage());

    JsonObject released = f.request(rwlock, ReadWriteLockWire.RELEASE, grant(down));
    assertTrue(released.getBoolean("released"), released::encode);
    f.request(rwlock, ReadWriteLockWire.RELEASE, grant(r).put("mode", "read"));
    assertEquals(List.of(), holders("l"));
    f.failure(rwlock, ReadWriteLockWire.RELEASE, grant(r), CONFLICT, "not_held");
  }

  @Test
  void onlyTheHolderOfTheTokenReleasesHeartbeatsOrDowngrades() {
    start(LONG_LEASE_MS);
    f.failure(rwlock, ReadWriteLockWire.RELEASE, new JsonObject().put("name", "t").put("owner", "a")
        .put("token", ZERO_TOKEN), CONFLICT, "not_held");
    JsonObject a = await(acquire("t", "a", "write", 5_000));
    JsonObject wrongToken = grant(a).put("token", ZERO_TOKEN);
    JsonObject wrongOwner = grant(a).put("owner", "b");
    for (String action : List.of(ReadWriteLockWire.RELEASE, ReadWriteLockWire.HEARTBEAT,
        ReadWriteLockWire.DOWNGRADE)) {
      f.failure(rwlock, action, wrongToken, CONFLICT, "not_held");
      f.failure(rwlock, action, wrongOwner, CONFLICT, "not_held");
    }
    // The right token with the wrong mode names no grant either; a read grant has nothing to downgrade.
    f.failure(rwlock, ReadWriteLockWire.RELEASE, grant(a).put("mode", "read"), CONFLICT, "not_held");
    f.failure(rwlock, ReadWriteLockWire.HEARTBEAT, grant(a).put("mode", "read"), CONFLICT, "not_held");
    f.failure(rwlock, ReadWriteLockWire.DOWNGRADE, grant(a).put("mode", "read"), BAD_REQUEST, "bad_request");
    assertEquals(List.of("a"), holders("t"));
    assertEquals("write", state("t").getJsonArray("holders").getJsonObject(0).getString("mode"));
    f.request(rwlock, ReadWriteLockWire.RELEASE, grant(a));
    assertEquals(List.of(), holders("t"));
  }

  @Test
  void aWaitingWriterIsNotOvertakenByLaterReaders() throws Exception {
    start(LONG_LEASE_MS);
    JsonObject first = await(acquire("s", "r0", "read", 5_000));
    Future<JsonObject> writer = acquire("s", "w", "write", 30_000);
    eventually("'w' queues", Duration.ofSeconds(20), () -> queue("s").equals(List.of("w")));
    // Compatible with the reader that holds, but a writer waits: a reader that would not wait is refused...
    f.failure(rwlock, ReadWriteLockWire.ACQUIRE, new JsonObject().put("name", "s").put("owner", "late")
        .put("mode", "read").put("timeoutMs", 0), CONFLICT, "timed_out");
    // ... and those that wait queue behind the writer.
    List<Future<JsonObject>> readers = new ArrayList<>();
    List<String> expected = new ArrayList<>(List.of("w"));
    for (int i = 1; i <= 4; i++) {
      readers.add(acquire("s", "r" + i, "read", 30_000));
      expected.add("r" + i);
      List<String> line = List.copyOf(expected);
      eventually("r" + i + " queues behind the writer", Duration.ofSeconds(20), () -> queue("s").equals(line),
          () -> "queue " + queue("s"));
    }
    assertEquals(List.of("r0"), holders("s"));
    f.request(rwlock, ReadWriteLockWire.RELEASE, grant(first));
    JsonObject w = await(writer);
    assertEquals(List.of("w"), holders("s"));
    for (Future<JsonObject> r : readers) {
      assertFalse(r.isComplete(), "a reader got in with the writer");
    }
    f.request(rwlock, ReadWriteLockWire.RELEASE, grant(w));
    Set<String> tokens = new HashSet<>();
    for (Future<JsonObject> r : readers) {
      JsonObject granted = await(r);
      assertTrue(granted.getString("token").compareTo(w.getString("token")) > 0);
      tokens.add(granted.getString("token"));
    }
    assertEquals(4, tokens.size(), "the readers one release let in have tokens of their own: " + tokens);
    assertEquals(List.of("r1", "r2", "r3", "r4"), holders("s"));
  }

  @Test
  void aSilentHolderIsReplacedAfterItsLease() {
    // Nobody heartbeats the writer, as a requester that went away: after a lease, the waiting reader gets the lock.
    // The lease is short enough for that and long enough for the checks after it on a loaded machine.
    start(4_000);
    JsonObject silent = await(acquire("x", "silent", "write", 5_000));
    JsonObject next = await(acquire("x", "next", "read", 40_000));
    assertEquals("read", next.getString("mode"));
    assertTrue(next.getString("token").compareTo(silent.getString("token")) > 0);
    f.request(rwlock, ReadWriteLockWire.HEARTBEAT, grant(next));
    assertEquals(List.of("next"), holders("x"));
    // The replaced holder learns it at its next heartbeat, and cannot release the grant it lost.
    f.failure(rwlock, ReadWriteLockWire.HEARTBEAT, grant(silent), CONFLICT, "not_held");
    f.failure(rwlock, ReadWriteLockWire.RELEASE, grant(silent), CONFLICT, "not_held");
    f.request(rwlock, ReadWriteLockWire.RELEASE, grant(next));
  }

  @Test
  void aWaiterWhoseRequesterIsGoneLeavesTheQueueAndGetsNoGrant() throws Exception {
    start(LONG_LEASE_MS);
    JsonObject holder = await(acquire("g", "holder", "write", 5_000));
    // The requester's liveness address: the service pings it while the acquire waits.
    MessageConsumer<JsonObject> liveness = vertx.eventBus().consumer("test.liveness.rw", m -> m.reply(new JsonObject()));
    await(liveness.completion());
    Future<JsonObject> gone = f.client.request(rwlock, ReadWriteLockWire.ACQUIRE, new JsonObject().put("name", "g")
        .put("owner", "gone").put("mode", "write").put("timeoutMs", 30_000).put("liveness", "test.liveness.rw"),
        40_000);
    eventually("'gone' queues", Duration.ofSeconds(20), () -> queue("g").equals(List.of("gone")));
    Future<JsonObject> live = acquire("g", "live", "read", 30_000);
    eventually("'live' queues", Duration.ofSeconds(20), () -> queue("g").equals(List.of("gone", "live")));

    await(liveness.unregister());
    ReplyException abandoned = assertInstanceOf(ReplyException.class, failureOf(gone));
    assertEquals(CONFLICT, abandoned.failureCode());
    assertTrue(abandoned.getMessage().startsWith("abandoned: "), abandoned.getMessage());
    eventually("'gone' left the queue", Duration.ofSeconds(20), () -> queue("g").equals(List.of("live")));

    f.request(rwlock, ReadWriteLockWire.RELEASE, grant(holder));
    assertEquals("live", await(live).getString("owner"));
    assertEquals(List.of("live"), holders("g"), "the departed requester holds nothing");
  }

  @Test
  void anAbandonedAcquireLeavesTheQueue() throws Exception {
    start(LONG_LEASE_MS);
    JsonObject holder = await(acquire("ab", "holder", "read", 5_000));
    Future<JsonObject> waiting = acquire("ab", "w", "write", 30_000);
    eventually("'w' queues", Duration.ofSeconds(20), () -> queue("ab").equals(List.of("w")));
    JsonObject reply = f.request(rwlock, ReadWriteLockWire.ABANDON, new JsonObject().put("name", "ab")
        .put("owner", "w"));
    assertEquals(1, reply.getInteger("abandoned"), reply::encode);
    ReplyException e = assertInstanceOf(ReplyException.class, failureOf(waiting));
    assertTrue(e.getMessage().startsWith("abandoned: "), e.getMessage());
    eventually("'w' left the queue", Duration.ofSeconds(20), () -> queue("ab").isEmpty());
    f.request(rwlock, ReadWriteLockWire.RELEASE, grant(holder));
    assertEquals(List.of(), holders("ab"), "the abandoned writer was not granted the lock its holder freed");
  }

  @Test
  void anAcquireTimesOutAndLeavesTheQueue() {
    start(LONG_LEASE_MS);
    await(acquire("to", "w", "write", 5_000));
    f.failure(rwlock, ReadWriteLockWire.ACQUIRE, new JsonObject().put("name", "to").put("owner", "r")
        .put("mode", "read").put("timeoutMs", 300), CONFLICT, "timed_out");
    assertEquals(List.of(), queue("to"));
    assertEquals(List.of("w"), holders("to"));
  }

  @Test
  void malformedRequestsAreBadRequestsNamingTheField() {
    start(LONG_LEASE_MS);
    String big = "x".repeat(1_025);
    JsonObject ok = new JsonObject().put("name", "e").put("owner", "a").put("mode", "read");
    JsonObject token = new JsonObject().put("name", "e").put("owner", "a").put("token", ZERO_TOKEN);
    List<List<Object>> cases = List.of(
        List.of(ReadWriteLockWire.ACQUIRE, ok.copy().put("name", null), "'name'"),
        List.of(ReadWriteLockWire.ACQUIRE, ok.copy().put("name", ""), "name"),
        List.of(ReadWriteLockWire.ACQUIRE, ok.copy().put("name", "  "), "name"),
        List.of(ReadWriteLockWire.ACQUIRE, ok.copy().put("name", big), "name"),
        List.of(ReadWriteLockWire.ACQUIRE, ok.copy().put("name", 3), "'name'"),
        List.of(ReadWriteLockWire.ACQUIRE, ok.copy().put("owner", null), "'owner'"),
        List.of(ReadWriteLockWire.ACQUIRE, ok.copy().put("owner", true), "'owner'"),
        List.of(ReadWriteLockWire.ACQUIRE, ok.copy().put("mode", null), "'mode'"),
        List.of(ReadWriteLockWire.ACQUIRE, ok.copy().put("mode", "READ"), "'mode'"),
        List.of(ReadWriteLockWire.ACQUIRE, ok.copy().put("mode", "exclusive"), "'mode'"),
        List.of(ReadWriteLockWire.ACQUIRE, ok.copy().put("mode", 1), "'mode'"),
        List.of(ReadWriteLockWire.ACQUIRE, ok.copy().put("timeoutMs", -1), "'timeoutMs'"),
        List.of(ReadWriteLockWire.ACQUIRE, ok.copy().put("timeoutMs", "soon"), "'timeoutMs'"),
        List.of(ReadWriteLockWire.ACQUIRE, ok.copy().put("timeoutMs", 50_001), "'timeoutMs'"),
        List.of(ReadWriteLockWire.ACQUIRE, ok.copy().put("liveness", 3), "'liveness'"),
        List.of(ReadWriteLockWire.RELEASE, token.copy().put("token", null), "'token'"),
        List.of(ReadWriteLockWire.RELEASE, token.copy().put("token", "not hex"), "'token'"),
        List.of(ReadWriteLockWire.RELEASE, token.copy().put("token", "00000000000000000001"), "'token'"),
        List.of(ReadWriteLockWire.RELEASE, token.copy().put("token", "ffffffffffffffffffff0000"), "'token'"),
        List.of(ReadWriteLockWire.RELEASE, token.copy().put("mode", "both"), "'mode'"),
        List.of(ReadWriteLockWire.RELEASE, token.copy().put("owner", null), "'owner'"),
        List.of(ReadWriteLockWire.HEARTBEAT, token.copy().put("token", 12), "'token'"),
        List.of(ReadWriteLockWire.DOWNGRADE, token.copy().put("name", null), "'name'"),
        List.of(ReadWriteLockWire.STATE, new JsonObject(), "'name'"),
        List.of(ReadWriteLockWire.ABANDON, new JsonObject().put("name", "e"), "'owner'"));
    for (List<Object> c : cases) {
      ReplyException e = f.failure(rwlock, (String) c.get(0), (JsonObject) c.get(1), BAD_REQUEST, "bad_request");
      assertTrue(e.getMessage().contains((String) c.get(2)), () -> c + ": " + e.getMessage());
      assertFalse(e.getMessage().contains("Exception"), () -> c + ": " + e.getMessage());
    }
    ReplyException unknown = f.failure(rwlock, "lock", new JsonObject(), NOT_FOUND, "unknown_action");
    assertTrue(unknown.getMessage().contains(ReadWriteLockWire.ACQUIRE), unknown.getMessage());
    assertEquals(new JsonObject().put("name", "e").put("holders", new JsonArray()).put("queue", new JsonArray()),
        state("e"), "no malformed acquire queued or granted anything");
  }

  /**
   * 10 readers and 4 writers acquire at once, three times each, each holding a while and heartbeating. Every
   * grant checks, as it is made, that no writer holds with anyone else; a watcher reads the lock's state throughout
   * and checks the same of every snapshot; every grant's token is its own.
   */
  @Test
  void manyReadersAndWritersAtOnceNeverAWriterWithAnyoneElse() throws Exception {
    start(LONG_LEASE_MS);
    int readers = 10;
    int writers = 4;
    int rounds = 3;
    AtomicInteger reading = new AtomicInteger();
    AtomicInteger writing = new AtomicInteger();
    AtomicInteger maxReading = new AtomicInteger();
    ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
    Set<String> tokens = java.util.concurrent.ConcurrentHashMap.newKeySet();
    AtomicInteger grants = new AtomicInteger();
    AtomicBoolean running = new AtomicBoolean(true);
    AtomicInteger snapshots = new AtomicInteger();
    Promise<Void> watcherDone = Promise.promise();
    watchState(running, violations, snapshots, watcherDone);

    List<Future<Void>> done = new ArrayList<>();
    for (int i = 0; i < readers + writers; i++) {
      String owner = (i < readers ? "r" : "w") + i;
      String mode = i < readers ? "read" : "write";
      Promise<Void> finished = Promise.promise();
      done.add(finished.future());
      contend(owner, mode, rounds, new Random(i), reading, writing, maxReading, violations, tokens, grants, finished);
    }
    Future.all(done).await(80, TimeUnit.SECONDS);
    running.set(false);
    watcherDone.future().await(20, TimeUnit.SECONDS);
    assertEquals(List.of(), List.copyOf(violations));
    assertEquals((readers + writers) * rounds, grants.get());
    assertEquals(grants.get(), tokens.size(), "every grant has a token of its own");
    assertTrue(snapshots.get() > 0, "the watcher read the state while the contenders ran");
    assertTrue(maxReading.get() > 1, "readers shared the lock at least once: " + maxReading.get());
    assertEquals(new JsonObject().put("name", "many").put("holders", new JsonArray()).put("queue", new JsonArray()),
        state("many"));
  }

  private void contend(String owner, String mode, int rounds, Random random, AtomicInteger reading,
      AtomicInteger writing, AtomicInteger maxReading, ConcurrentLinkedQueue<String> violations, Set<String> tokens,
      AtomicInteger grants, Promise<Void> finished) {
    if (rounds == 0) {
      finished.complete();
      return;
    }
    acquire("many", owner, mode, 50_000).compose(granted -> {
      grants.incrementAndGet();
      if (!tokens.add(granted.getString("token"))) {
        violations.add(owner + " got token " + granted.getString("token") + " a grant already had");
      }
      if (mode.equals("write")) {
        if (writing.incrementAndGet() != 1 || reading.get() != 0) {
          violations.add(owner + " writes while " + writing.get() + " write and " + reading.get() + " read");
        }
      } else {
        int now = reading.incrementAndGet();
        maxReading.accumulateAndGet(now, Math::max);
        if (writing.get() != 0) {
          violations.add(owner + " reads while " + writing.get() + " write");
        }
      }
      Future<?> chain = Future.succeededFuture();
      for (int beats = random.nextInt(3); beats > 0; beats--) {
        chain = chain.compose(x -> f.client.request(rwlock, ReadWriteLockWire.HEARTBEAT, grant(granted)));
      }
      // No longer counted before the release is sent: the release lets the next holders in.
      return chain.compose(x -> {
        (mode.equals("write") ? writing : reading).decrementAndGet();
        return f.client.request(rwlock, ReadWriteLockWire.RELEASE, grant(granted));
      });
    }).onComplete(ar -> {
      if (ar.failed()) {
        finished.fail(new AssertionError(owner + " failed: " + ar.cause(), ar.cause()));
      } else {
        contend(owner, mode, rounds - 1, random, reading, writing, maxReading, violations, tokens, grants, finished);
      }
    });
  }

  /** Reads the lock's state again and again until {@code running} is false, checking each snapshot's holders. */
  private void watchState(AtomicBoolean running, ConcurrentLinkedQueue<String> violations, AtomicInteger snapshots,
      Promise<Void> done) {
    if (!running.get()) {
      done.complete();
      return;
    }
    f.client.request(rwlock, ReadWriteLockWire.STATE, new JsonObject().put("name", "many")).onComplete(ar -> {
      if (ar.failed()) {
        violations.add("state failed: " + ar.cause());
      } else {
        snapshots.incrementAndGet();
        JsonArray holders = ar.result().getJsonArray("holders");
        long writersHolding = holders.stream().filter(h -> "write".equals(((JsonObject) h).getString("mode")))
            .count();
        if (writersHolding > 0 && holders.size() > 1) {
          violations.add("a writer holds with others: " + holders.encode());
        }
      }
      watchState(running, violations, snapshots, done);
    });
  }

  private static Throwable failureOf(Future<?> f) {
    try {
      await(f);
    } catch (RuntimeException e) {
      return e instanceof ReplyException ? e : e.getCause() != null ? e.getCause() : e;
    }
    throw new AssertionError("expected a failure, got " + f.result());
  }
}
