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

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.client.wire.SemaphoreWire;
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
 * The fenced semaphore on {@code <prefix>.semaphore}, through the service on the embedded engine: acquire,
 * heartbeat, release and state; never more holders than permits with 12 contenders at once; FIFO hand-off; refusals
 * and malformed requests with their documented codes; a silent holder handed off after its lease; an acquire whose
 * requester went away (or abandoned it) out of the queue with no grant left behind.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class SemaphoreEventBusTest {
  /** Far longer than a test: a holder the test does not heartbeat keeps its permit on a loaded machine. */
  private static final long LONG_LEASE_MS = 60_000;

  private Vertx vertx;
  private ServiceFixture f;
  private String semaphore;

  static JsonObject config(long leaseMs) {
    JsonObject config = ServiceFixture.baseConfig();
    // Acquires of many contenders may wait long on a loaded machine: up to 50 s.
    config.getJsonObject("mutex").put("maxAcquireTimeoutMs", 50_000);
    config.put("semaphore", new JsonObject().put("leaseMs", leaseMs).put("heartbeatIntervalMs", 300)
        .put("reaperIntervalMs", 100));
    return config;
  }

  private void start(long leaseMs) {
    vertx = Vertx.vertx();
    f = ServiceFixture.start(vertx, config(leaseMs), null);
    semaphore = f.client.semaphoreAddress();
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

  private Future<JsonObject> acquire(String name, int permits, String owner, long timeoutMs) {
    return f.client.request(semaphore, SemaphoreWire.ACQUIRE, new JsonObject().put("name", name)
        .put("permits", permits).put("owner", owner).put("timeoutMs", timeoutMs), timeoutMs + 10_000);
  }

  private JsonObject state(String name) {
    JsonObject reply = f.request(semaphore, SemaphoreWire.STATE, new JsonObject().put("name", name));
    assertEquals(name, reply.getString("name"), reply::encode);
    return reply;
  }

  private List<String> holders(String name) {
    return state(name).getJsonArray("holders").stream().map(h -> ((JsonObject) h).getString("owner")).sorted()
        .toList();
  }

  private List<Object> waiters(String name) {
    return state(name).getJsonArray("waiters").getList();
  }

  private static JsonObject grant(JsonObject held) {
    return new JsonObject().put("name", held.getString("name")).put("owner", held.getString("owner"))
        .put("token", held.getString("token"));
  }

  private static FencingToken token(JsonObject reply) {
    return FencingToken.parse(reply.getString("token"));
  }

  @Test
  void acquireHeartbeatReleaseAndState() {
    start(LONG_LEASE_MS);
    assertEquals(new JsonObject().put("name", "s").put("permits", 0).put("holders", new JsonArray())
        .put("waiters", new JsonArray()), state("s"), "an unused semaphore");

    JsonObject a = await(acquire("s", 2, "a", 5_000));
    assertEquals("s", a.getString("name"));
    assertEquals("a", a.getString("owner"));
    assertEquals(2, a.getInteger("permits"));
    assertEquals(LONG_LEASE_MS, a.getLong("leaseMs"));
    assertEquals(20, a.getString("token").length(), a::encode);
    JsonObject b = await(acquire("s", 2, "b", 0));
    assertTrue(token(b).isNewerThan(token(a)), "each grant's token is newer than the one before");
    JsonObject s = state("s");
    assertEquals(2, s.getInteger("permits"));
    assertEquals(new JsonArray().add(SemaphoreWire.holder("a", token(a))).add(SemaphoreWire.holder("b", token(b))),
        s.getJsonArray("holders"));

    assertEquals(a.getString("token"), await(acquire("s", 2, "a", 0)).getString("token"),
        "an owner that holds gets its grant back");
    f.failure(semaphore, SemaphoreWire.ACQUIRE, new JsonObject().put("name", "s").put("permits", 2)
        .put("owner", "c").put("timeoutMs", 0), CONFLICT, "timed_out");
    f.failure(semaphore, SemaphoreWire.ACQUIRE, new JsonObject().put("name", "s").put("permits", 3)
        .put("owner", "c").put("timeoutMs", 0), CONFLICT, "conflict");

    JsonObject beat = f.request(semaphore, SemaphoreWire.HEARTBEAT, grant(a));
    assertEquals(a.getString("token"), beat.getString("token"));
    assertEquals(LONG_LEASE_MS, beat.getLong("leaseMs"));

    JsonObject released = f.request(semaphore, SemaphoreWire.RELEASE, grant(a));
    assertTrue(released.getBoolean("released"), released::encode);
    assertEquals(List.of("b"), holders("s"));
    // The grant is over: a heartbeat of it is refused; a second release is no error (as the mutex's: a retry after
    // commit_unknown_result finds its own commit), and hands nothing on twice.
    f.failure(semaphore, SemaphoreWire.HEARTBEAT, grant(a), CONFLICT, "not_held");
    assertTrue(f.request(semaphore, SemaphoreWire.RELEASE, grant(a)).getBoolean("released"));
    assertEquals(List.of("b"), holders("s"));
    f.request(semaphore, SemaphoreWire.RELEASE, grant(b));
    assertEquals(0, state("s").getInteger("permits"), "a semaphore without holders or waiters is unused again");
  }

  @Test
  void aReleaseWithAnotherTokenOrByANonHolderIsRefused() {
    start(LONG_LEASE_MS);
    JsonObject a = await(acquire("r", 1, "a", 5_000));
    f.failure(semaphore, SemaphoreWire.RELEASE, grant(a).put("owner", "b"), CONFLICT, "not_held");
    f.failure(semaphore, SemaphoreWire.RELEASE, grant(a).put("token", "00000000000000000001"), CONFLICT, "not_held");
    f.failure(semaphore, SemaphoreWire.HEARTBEAT, grant(a).put("owner", "b"), CONFLICT, "not_held");
    f.failure(semaphore, SemaphoreWire.RELEASE, grant(a).put("name", "other"), CONFLICT, "not_held");
    assertEquals(List.of("a"), holders("r"), "the refused releases changed nothing");
    f.request(semaphore, SemaphoreWire.RELEASE, grant(a));
    assertEquals(List.of(), holders("r"));
  }

  @Test
  void waitersAreGrantedInTheOrderTheyCame() throws Exception {
    start(LONG_LEASE_MS);
    List<JsonObject> held = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      held.add(await(acquire("fifo", 3, "h" + i, 5_000)));
    }
    List<Future<JsonObject>> waiting = new ArrayList<>();
    List<String> expectedLine = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      String owner = "w" + i;
      waiting.add(acquire("fifo", 3, owner, 30_000));
      expectedLine.add(owner);
      List<Object> expected = List.copyOf(expectedLine);
      eventually(owner + " is in line", Duration.ofSeconds(20), () -> waiters("fifo").equals(expected),
          () -> "waiters " + waiters("fifo"));
    }
    FencingToken newest = token(held.get(2));
    for (int i = 0; i < 4; i++) {
      // Release the oldest grant: the first waiter, and only it, gets the permit.
      f.request(semaphore, SemaphoreWire.RELEASE, grant(held.get(i)));
      JsonObject next = await(waiting.get(i));
      assertEquals("w" + i, next.getString("owner"), next::encode);
      assertTrue(token(next).isNewerThan(newest), () -> next + " after " + held);
      newest = token(next);
      held.add(next);
      for (int j = i + 1; j < 4; j++) {
        assertFalse(waiting.get(j).isComplete(), "w" + j + " granted out of turn");
      }
      assertEquals(3, holders("fifo").size());
    }
    assertEquals(List.of(), waiters("fifo"));
  }

  @Test
  void aSilentHolderIsHandedOffAfterItsLease() {
    // The holder never heartbeats, as a requester that went away: after the lease, the waiter gets its permit. The
    // lease is short enough for that and long enough for the checks after it on a loaded machine.
    start(5_000);
    JsonObject silent = await(acquire("x", 1, "silent", 5_000));
    JsonObject next = await(acquire("x", 1, "next", 40_000));
    assertEquals("next", next.getString("owner"));
    assertTrue(token(next).isNewerThan(token(silent)));
    f.request(semaphore, SemaphoreWire.HEARTBEAT, grant(next));
    assertEquals(List.of("next"), holders("x"));
    // The replaced holder learns it at its next heartbeat, and cannot release the permit it lost.
    f.failure(semaphore, SemaphoreWire.HEARTBEAT, grant(silent), CONFLICT, "not_held");
    f.failure(semaphore, SemaphoreWire.RELEASE, grant(silent), CONFLICT, "not_held");
    f.request(semaphore, SemaphoreWire.RELEASE, grant(next));
  }

  @Test
  void anAcquireWhoseRequesterIsGoneLeavesTheQueueAndNoGrant() throws Exception {
    start(LONG_LEASE_MS);
    JsonObject holder = await(acquire("g", 1, "holder", 5_000));
    // The requester's liveness address: the service pings it while the acquire waits.
    MessageConsumer<JsonObject> liveness = vertx.eventBus().consumer("test.semaphore.gone", m -> m.reply(new JsonObject()));
    await(liveness.completion());
    Future<JsonObject> gone = f.client.request(semaphore, SemaphoreWire.ACQUIRE, new JsonObject().put("name", "g")
        .put("permits", 1).put("owner", "gone").put("timeoutMs", 30_000).put("liveness", "test.semaphore.gone"),
        40_000);
    eventually("'gone' is in line", Duration.ofSeconds(20), () -> waiters("g").equals(List.of("gone")));
    Future<JsonObject> live = acquire("g", 1, "live", 30_000);
    eventually("'live' is in line", Duration.ofSeconds(20), () -> waiters("g").equals(List.of("gone", "live")));

    await(liveness.unregister());
    ReplyException abandoned = assertInstanceOf(ReplyException.class, failureOf(gone));
    assertEquals(CONFLICT, abandoned.failureCode());
    assertTrue(abandoned.getMessage().startsWith("abandoned: "), abandoned.getMessage());
    eventually("'gone' left the line", Duration.ofSeconds(20), () -> waiters("g").equals(List.of("live")));

    // The permit goes past the departed requester, which holds nothing.
    f.request(semaphore, SemaphoreWire.RELEASE, grant(holder));
    assertEquals("live", await(live).getString("owner"));
    assertEquals(List.of("live"), holders("g"));
  }

  @Test
  void anAbandonedAcquireLeavesTheQueue() throws Exception {
    start(LONG_LEASE_MS);
    JsonObject holder = await(acquire("ab", 1, "holder", 5_000));
    Future<JsonObject> waiting = acquire("ab", 1, "w", 30_000);
    eventually("'w' is in line", Duration.ofSeconds(20), () -> waiters("ab").equals(List.of("w")));
    JsonObject reply = f.request(semaphore, SemaphoreWire.ABANDON, new JsonObject().put("name", "ab").put("owner", "w"));
    assertEquals(1, reply.getInteger("abandoned"), reply::encode);
    ReplyException e = assertInstanceOf(ReplyException.class, failureOf(waiting));
    assertTrue(e.getMessage().startsWith("abandoned: "), e.getMessage());
    eventually("'w' left the line", Duration.ofSeconds(20), () -> waiters("ab").isEmpty());
    f.request(semaphore, SemaphoreWire.RELEASE, grant(holder));
    assertEquals(List.of(), holders("ab"), "the abandoned waiter was not granted the freed permit");
  }

  @Test
  void anAcquireTimesOutAndLeavesTheQueue() {
    start(LONG_LEASE_MS);
    await(acquire("t", 1, "holder", 5_000));
    f.failure(semaphore, SemaphoreWire.ACQUIRE, new JsonObject().put("name", "t").put("permits", 1).put("owner", "c")
        .put("timeoutMs", 300), CONFLICT, "timed_out");
    assertEquals(List.of(), waiters("t"), "an owner that timed out left the queue");
    assertEquals(List.of("holder"), holders("t"));
  }

  @Test
  void malformedRequestsAreBadRequestsNamingTheField() {
    start(LONG_LEASE_MS);
    String big = "x".repeat(1_025);
    JsonObject ok = new JsonObject().put("name", "m").put("permits", 2).put("owner", "a");
    List<List<Object>> cases = List.of(
        List.of(SemaphoreWire.ACQUIRE, without(ok, "name"), "'name'"),
        List.of(SemaphoreWire.ACQUIRE, ok.copy().put("name", ""), "name"),
        List.of(SemaphoreWire.ACQUIRE, ok.copy().put("name", big), "name"),
        List.of(SemaphoreWire.ACQUIRE, ok.copy().put("name", 3), "'name'"),
        List.of(SemaphoreWire.ACQUIRE, without(ok, "owner"), "'owner'"),
        List.of(SemaphoreWire.ACQUIRE, ok.copy().put("owner", ""), "owner"),
        List.of(SemaphoreWire.ACQUIRE, without(ok, "permits"), "'permits'"),
        List.of(SemaphoreWire.ACQUIRE, ok.copy().put("permits", 0), "'permits'"),
        List.of(SemaphoreWire.ACQUIRE, ok.copy().put("permits", -1), "'permits'"),
        List.of(SemaphoreWire.ACQUIRE, ok.copy().put("permits", SemaphoreWire.MAX_PERMITS + 1), "'permits'"),
        List.of(SemaphoreWire.ACQUIRE, ok.copy().put("permits", "3"), "'permits'"),
        List.of(SemaphoreWire.ACQUIRE, ok.copy().put("permits", 1.5), "'permits'"),
        List.of(SemaphoreWire.ACQUIRE, ok.copy().put("timeoutMs", -1), "'timeoutMs'"),
        List.of(SemaphoreWire.ACQUIRE, ok.copy().put("timeoutMs", "soon"), "'timeoutMs'"),
        List.of(SemaphoreWire.ACQUIRE, ok.copy().put("timeoutMs", 50_001), "'timeoutMs'"),
        List.of(SemaphoreWire.ACQUIRE, ok.copy().put("liveness", 3), "'liveness'"),
        List.of(SemaphoreWire.RELEASE, without(ok, "permits"), "'token'"),
        List.of(SemaphoreWire.RELEASE, without(ok, "permits").put("token", "not hex"), "'token'"),
        List.of(SemaphoreWire.HEARTBEAT, without(ok, "permits"), "'token'"),
        List.of(SemaphoreWire.HEARTBEAT, without(ok, "owner").put("token", "00000000000000000001"), "'owner'"),
        List.of(SemaphoreWire.STATE, new JsonObject(), "'name'"),
        List.of(SemaphoreWire.STATE, new JsonObject().put("name", " ".repeat(0)), "name"),
        List.of(SemaphoreWire.ABANDON, new JsonObject().put("name", "m"), "'owner'"));
    for (List<Object> c : cases) {
      ReplyException e = f.failure(semaphore, (String) c.get(0), (JsonObject) c.get(1), BAD_REQUEST, "bad_request");
      assertTrue(e.getMessage().contains((String) c.get(2)), () -> c + ": " + e.getMessage());
      assertFalse(e.getMessage().contains("Exception"), () -> c + ": " + e.getMessage());
    }
    ReplyException unknown = f.failure(semaphore, "acquireMany", new JsonObject(), NOT_FOUND, "unknown_action");
    assertTrue(unknown.getMessage().contains(SemaphoreWire.ACQUIRE), unknown.getMessage());
    f.failure(semaphore, SemaphoreWire.ACQUIRE, null, BAD_REQUEST, "bad_request");
    assertEquals(0, state("m").getInteger("permits"), "no malformed acquire queued or granted anything");
  }

  /**
   * 12 contenders on a 3-permit semaphore, three rounds each. Each holder checks that at most 3 believe they hold
   * and that the store lists at most 3 holders; a poller reads the state throughout and checks the same, and that
   * nobody is queued while a permit is free.
   */
  @Test
  void manyContendersAtOnceNeverMoreHoldersThanPermits() throws Exception {
    start(LONG_LEASE_MS);
    int permits = 3;
    int contenders = 12;
    int rounds = 3;
    AtomicInteger holding = new AtomicInteger();
    AtomicInteger mostHolding = new AtomicInteger();
    ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
    Set<FencingToken> tokens = java.util.Collections.synchronizedSet(new HashSet<>());
    AtomicBoolean running = new AtomicBoolean(true);
    AtomicInteger polls = new AtomicInteger();
    Promise<Void> pollerDone = Promise.promise();
    poll(permits, running, polls, violations, pollerDone);
    List<Future<Void>> done = new ArrayList<>();
    for (int i = 0; i < contenders; i++) {
      Promise<Void> finished = Promise.promise();
      done.add(finished.future());
      runRounds("c" + i, permits, rounds, new Random(i), holding, mostHolding, tokens, violations, finished);
    }
    try {
      Future.all(done).await(70, TimeUnit.SECONDS);
    } finally {
      running.set(false);
    }
    pollerDone.future().await(20, TimeUnit.SECONDS);
    assertEquals(List.of(), List.copyOf(violations));
    assertEquals(contenders * rounds, tokens.size(), "every grant has its own token");
    assertEquals(permits, mostHolding.get(), "the permits were all used at once");
    assertTrue(polls.get() > 0, "the state was read while the contenders ran");
    JsonObject end = state("many");
    assertEquals(0, end.getInteger("permits"), end::encode);
  }

  private void poll(int permits, AtomicBoolean running, AtomicInteger polls, ConcurrentLinkedQueue<String> violations,
      Promise<Void> done) {
    if (!running.get()) {
      done.complete();
      return;
    }
    f.client.request(semaphore, SemaphoreWire.STATE, new JsonObject().put("name", "many")).onComplete(ar -> {
      if (ar.succeeded()) {
        polls.incrementAndGet();
        JsonObject s = ar.result();
        int holders = s.getJsonArray("holders").size();
        int waiters = s.getJsonArray("waiters").size();
        if (holders > permits) {
          violations.add(holders + " holders in " + s.encode());
        }
        if (waiters > 0 && holders < permits) {
          violations.add("waiters while a permit is free in " + s.encode());
        }
      } else {
        violations.add("state failed: " + ar.cause());
      }
      poll(permits, running, polls, violations, done);
    });
  }

  private void runRounds(String owner, int permits, int rounds, Random random, AtomicInteger holding,
      AtomicInteger mostHolding, Set<FencingToken> tokens, ConcurrentLinkedQueue<String> violations,
      Promise<Void> finished) {
    if (rounds == 0) {
      finished.complete();
      return;
    }
    acquire("many", permits, owner, 45_000).compose(held -> {
      int now = holding.incrementAndGet();
      mostHolding.accumulateAndGet(now, Math::max);
      if (now > permits) {
        violations.add(owner + " holds while " + (now - 1) + " others do");
      }
      if (!tokens.add(token(held))) {
        violations.add(owner + " got a token already granted: " + held.getString("token"));
      }
      JsonObject mine = grant(held);
      Future<?> chain = f.client.request(semaphore, SemaphoreWire.STATE, new JsonObject().put("name", "many"))
          .onSuccess(s -> {
            if (!s.getJsonArray("holders").contains(SemaphoreWire.holder(owner, token(held)))) {
              violations.add(owner + " at " + held.getString("token") + " is not among the holders " + s.encode());
            }
          });
      for (int beats = random.nextInt(3); beats > 0; beats--) {
        chain = chain.compose(x -> f.client.request(semaphore, SemaphoreWire.HEARTBEAT, mine));
      }
      // Not holding any more before the release is sent: the release grants the next waiter.
      return chain.compose(x -> {
        holding.decrementAndGet();
        return f.client.request(semaphore, SemaphoreWire.RELEASE, mine);
      });
    }).onComplete(ar -> {
      if (ar.failed()) {
        finished.fail(new AssertionError(owner + " failed: " + ar.cause(), ar.cause()));
      } else {
        runRounds(owner, permits, rounds - 1, random, holding, mostHolding, tokens, violations, finished);
      }
    });
  }

  private static JsonObject without(JsonObject body, String field) {
    JsonObject copy = body.copy();
    copy.remove(field);
    return copy;
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
