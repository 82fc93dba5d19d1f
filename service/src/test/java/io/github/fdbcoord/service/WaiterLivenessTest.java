package io.github.fdbcoord.service;

import io.github.fdbcoord.client.ClientLock;
import io.github.fdbcoord.client.CoordinationClient;
import io.github.fdbcoord.client.LockOptions;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.mutex.MutexOptions;
import io.github.fdbcoord.mutex.MutexService;
import io.github.fdbcoord.api.MutexState;
import io.github.fdbcoord.api.QueueEntry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetSocket;
import io.vertx.ext.web.client.HttpResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import static io.github.fdbcoord.service.ServiceFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Waiters are live or gone, through the service: an HTTP acquirer that disconnects leaves the queue
 * at once; a wait:false waiter that never heartbeats is removed after the lease; queues are
 * bounded (409 queue_full); a host restarted with the same host id removes what its earlier start
 * left queued or held.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class WaiterLivenessTest {
  private Vertx vertx;
  private ServiceFixture f;
  private NetClient net;

  @BeforeEach
  void start() {
    vertx = Vertx.vertx();
    net = vertx.createNetClient();
  }

  @AfterEach
  void stop() {
    if (f != null) {
      f.close();
    }
    await(net.close());
    await(vertx.close());
  }

  /**
   * The fixture's configuration with another lease: the holders of these tests are only as live as
   * a starved event loop lets their heartbeats and releases be, and at load 30 on two cores the
   * fixture's 1.5 s lease ran out under them (the event log showed the reaper's EXPIRED events).
   */
  private static JsonObject withLease(long ms) {
    JsonObject config = ServiceFixture.baseConfig();
    config.getJsonObject("mutex").put("leaseMs", ms);
    return config;
  }

  private static List<String> queue(MutexState s) {
    List<String> out = new ArrayList<>();
    for (QueueEntry q : s.queue()) {
      out.add(q.owner());
    }
    return out;
  }

  private List<String> queue(String name) {
    return queue(await(f.client.mutexState(name)));
  }

  static void eventually(String what, Duration within, BooleanSupplier condition) throws InterruptedException {
    eventually(what, within, condition, () -> "");
  }

  /** Polls {@code condition} until it holds; a failure also says {@code state}, what was seen last. */
  static void eventually(String what, Duration within, BooleanSupplier condition, Supplier<String> state)
      throws InterruptedException {
    long end = System.nanoTime() + within.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > end) {
        fail("not within " + within + ": " + what + "; " + state.get());
      }
      Thread.sleep(10);
    }
  }


  /** An HTTP acquire on a raw connection, so the test can drop the connection mid-request. */
  private NetSocket rawAcquire(String name, String owner, long timeoutMs) {
    NetSocket socket = await(net.connect(f.service.httpPort(), "127.0.0.1"));
    String body = new JsonObject().put("owner", owner).put("timeoutMs", timeoutMs).encode();
    await(socket.write("POST /mutexes/" + name + "/acquire HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        + "Content-Type: application/json\r\nContent-Length: " + body.length() + "\r\n\r\n" + body));
    return socket;
  }

  private Future<HttpResponse<Buffer>> httpAcquire(String name, JsonObject body) {
    return f.web().post("/mutexes/" + name + "/acquire").sendJsonObject(body);
  }

  /** A third of the 20 s acquire timeouts; the hand-offs take milliseconds on an idle machine. */
  private static final long AT_ONCE_MS = 6_000;

  @Test
  void anHttpAcquirerThatDisconnectsLeavesTheQueueAtOnce() throws Exception {
    // A lease far longer than the waits measured: on a loaded machine a holder must not lose its grant to
    // the reaper, and "at once" (within AT_ONCE_MS, generous for a loaded machine) stays far from what a
    // lease or the acquires' 20 s timeouts would take.
    f = ServiceFixture.start(vertx, withLease(60_000), null);
    assertTrue(await(f.client.tryAcquire("m", "holder")).held());
    NetSocket gone = rawAcquire("m", "gone", 20_000);
    eventually("'gone' is queued", Duration.ofSeconds(10), () -> queue("m").equals(List.of("gone")));
    Future<HttpResponse<Buffer>> live = httpAcquire("m", new JsonObject().put("owner", "live").put("timeoutMs", 20_000));
    eventually("'live' is queued", Duration.ofSeconds(10), () -> queue("m").equals(List.of("gone", "live")));

    long closed = System.nanoTime();
    await(gone.close());
    eventually("'gone' leaves the queue at once, not after a lease", Duration.ofMillis(AT_ONCE_MS),
        () -> queue("m").equals(List.of("live")));
    long leftMs = (System.nanoTime() - closed) / 1_000_000;
    assertTrue(leftMs < AT_ONCE_MS, "left after " + leftMs + " ms");

    long released = System.nanoTime();
    await(f.client.release("m", "holder", null));
    HttpResponse<Buffer> granted = await(live);
    long grantMs = (System.nanoTime() - released) / 1_000_000;
    assertEquals(200, granted.statusCode());
    assertEquals("live", granted.bodyAsJsonObject().getString("owner"));
    assertTrue(grantMs < AT_ONCE_MS, "granted " + grantMs + " ms after the release, not after a lease");
    assertEquals("live", await(f.client.mutexState("m")).owner().orElseThrow().owner());
  }

  @Test
  void aGrantRacingTheDisconnectIsGivenBack() throws Exception {
    // The holder renews its grant (a lock), so that it stays whatever the machine's load (a holder
    // nobody heartbeats lost its grant to the reaper before 'gone' queued, at load 20); the lease
    // bounds only the worst case below.
    f = ServiceFixture.start(vertx, withLease(5_000), null);
    for (int round = 0; round < 10; round++) {
      String name = "race-" + round;
      ClientLock holder = await(f.client.lock(name, new LockOptions().setOwner("holder")));
      NetSocket gone = rawAcquire(name, "gone", 15_000);
      eventually("'gone' is queued", Duration.ofSeconds(20), () -> queue(name).equals(List.of("gone")));
      Future<HttpResponse<Buffer>> live = httpAcquire(name, new JsonObject().put("owner", "live").put("timeoutMs", 20_000));
      eventually("'live' is queued", Duration.ofSeconds(20), () -> queue(name).size() == 2, () -> queue(name) + ", owner: " + await(f.client.mutexState(name)).owner() + ", live: " + (live.isComplete() ? live.result().statusCode() + " " + live.result().bodyAsString() : "pending"));
      // The release and the disconnect race: whoever wins, 'gone' does not keep the mutex (at worst,
      // when the grant was written before the close arrived, it keeps it until its lease runs out).
      Future<?> release = holder.release();
      gone.close();
      await(release);
      HttpResponse<Buffer> granted = await(live);
      assertEquals(200, granted.statusCode(), granted.bodyAsString());
      assertEquals("live", await(f.client.mutexState(name)).owner().orElseThrow().owner());
      await(f.client.release(name, "live", null));
    }
  }

  @Test
  @Tag("slow")
  void silentWaitFalseWaitersAreRemovedAfterTheLeaseAndHeartbeatingOnesStay() throws Exception {
    f = ServiceFixture.start(vertx, withLease(3_000), null);
    // The first HTTP request initialises the HTTP stack on an event loop that other verticles share:
    // seconds on a loaded machine, during which the holder's heartbeats (served there) would wait and
    // the reaper, on its own thread, would count its lease down. Paid before the holder exists.
    assertEquals(200, await(httpAcquire("warm-up", new JsonObject().put("owner", "w").put("wait", false))).statusCode());
    assertEquals(200, await(f.web().post("/mutexes/warm-up/heartbeat").sendJsonObject(new JsonObject().put("owner", "w")))
        .statusCode());
    assertTrue(await(f.client.tryAcquire("m", "holder")).held());
    // Heartbeats well inside the lease, so that a loaded machine cannot make the holder miss one.
    long holderBeat = vertx.setPeriodic(100, id -> f.client.heartbeat("m", "holder", null));
    for (int i = 0; i < 5; i++) {
      HttpResponse<Buffer> r = await(httpAcquire("m", new JsonObject().put("owner", "silent-" + i).put("wait", false)));
      assertEquals(200, r.statusCode());
      assertFalse(r.bodyAsJsonObject().getBoolean("held"));
    }
    HttpResponse<Buffer> queued = await(httpAcquire("m", new JsonObject().put("owner", "beating").put("wait", false)));
    assertEquals(6, queued.bodyAsJsonObject().getInteger("position"));
    List<JsonObject> beats = new ArrayList<>();
    long waiterBeat = vertx.setPeriodic(100, id -> f.web().post("/mutexes/m/heartbeat")
        .sendJsonObject(new JsonObject().put("owner", "beating"))
        .onSuccess(r -> {
          synchronized (beats) {
            beats.add(r.bodyAsJsonObject().put("status", r.statusCode()));
          }
        }));
    eventually("the silent waiters are removed", Duration.ofSeconds(12), () -> queue("m").equals(List.of("beating")));
    Thread.sleep(3500); // more than a lease: the heartbeating waiter stays
    assertEquals(List.of("beating"), queue("m"));
    synchronized (beats) {
      JsonObject lastBeat = beats.get(beats.size() - 1);
      assertEquals(200, lastBeat.getInteger("status"));
      assertEquals(false, lastBeat.getBoolean("held"));
      assertEquals(1, lastBeat.getInteger("position"));
    }
    vertx.cancelTimer(holderBeat);
    await(f.client.release("m", "holder", null));
    eventually("the waiter's heartbeat reports its grant", Duration.ofSeconds(5), () -> {
      synchronized (beats) {
        return Boolean.TRUE.equals(beats.get(beats.size() - 1).getBoolean("held"));
      }
    });
    vertx.cancelTimer(waiterBeat);
    assertEquals("beating", await(f.client.mutexState("m")).owner().orElseThrow().owner());
  }

  /**
   * Live HTTP contenders loop acquire / hold / release while acquirers that disconnect at random
   * moments keep joining the queue: never two holders, increasing fencing tokens, every live round
   * served, and nothing left queued or held at the end.
   */
  @Test
  @Tag("slow")
  void manyHttpWaitersSomeDisconnectingNeverTwoOwners() throws Exception {
    // A short lease, as a ghost whose grant was written before it disconnected keeps it for a lease;
    // 3 s rather than the fixture's 1.5 s, so a loaded machine cannot expire a live holder between
    // its grant and its release.
    f = ServiceFixture.start(vertx, withLease(3_000), null);
    int live = 8;
    int rounds = 3;
    java.util.concurrent.atomic.AtomicInteger inside = new java.util.concurrent.atomic.AtomicInteger();
    java.util.concurrent.atomic.AtomicInteger maxInside = new java.util.concurrent.atomic.AtomicInteger();
    java.util.concurrent.atomic.AtomicInteger served = new java.util.concurrent.atomic.AtomicInteger();
    List<String> tokens = java.util.Collections.synchronizedList(new ArrayList<>());
    List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
    java.util.Random random = new java.util.Random(12);
    List<Thread> threads = new ArrayList<>();
    for (int c = 0; c < live; c++) {
      String owner = "live-" + c;
      int seed = random.nextInt();
      Thread t = new Thread(() -> {
        java.util.Random r = new java.util.Random(seed);
        try {
          for (int round = 0; round < rounds; round++) {
            NetSocket ghost = rawAcquire("hot", owner + "-ghost-" + round, 20_000);
            vertx.setTimer(1 + r.nextInt(300), id -> ghost.close());
            HttpResponse<Buffer> g = await(httpAcquire("hot", new JsonObject().put("owner", owner)
                .put("timeoutMs", 20_000)));
            if (g.statusCode() != 200) {
              throw new AssertionError(owner + ": " + g.bodyAsString());
            }
            int now = inside.incrementAndGet();
            maxInside.accumulateAndGet(now, Math::max);
            tokens.add(g.bodyAsJsonObject().getString("token"));
            Thread.sleep(5);
            inside.decrementAndGet();
            served.incrementAndGet();
            await(f.client.release("hot", owner, null));
          }
        } catch (Throwable e) {
          failures.add(e);
        }
      });
      threads.add(t);
      t.start();
    }
    for (Thread t : threads) {
      t.join(50_000);
    }
    assertEquals(List.of(), failures);
    assertEquals(live * rounds, served.get());
    assertEquals(1, maxInside.get(), "two holders at once");
    List<String> sorted = new ArrayList<>(tokens);
    java.util.Collections.sort(sorted);
    assertEquals(sorted, tokens, "fencing tokens did not grow with each grant");
    eventually("no ghost stays queued or holding", Duration.ofSeconds(10), () -> {
      MutexState st = await(f.client.mutexState("hot"));
      return st.queue().isEmpty() && st.owner().isEmpty();
    });
  }

  @Test
  void queuesAreBoundedWith409QueueFull() {
    JsonObject config = ServiceFixture.baseConfig();
    config.getJsonObject("mutex").put("maxQueueLength", 2);
    f = ServiceFixture.start(vertx, config, null);
    assertTrue(await(f.client.tryAcquire("m", "holder")).held());
    assertEquals(1, await(f.client.tryAcquire("m", "w1")).position());
    assertEquals(2, await(f.client.tryAcquire("m", "w2")).position());
    HttpResponse<Buffer> full = await(httpAcquire("m", new JsonObject().put("owner", "w3").put("wait", false)));
    assertEquals(409, full.statusCode());
    assertEquals("queue_full", full.bodyAsJsonObject().getString("error"));
    HttpResponse<Buffer> fullWaiting = await(httpAcquire("m", new JsonObject().put("owner", "w4").put("timeoutMs", 5000)));
    assertEquals(409, fullWaiting.statusCode());
    assertEquals("queue_full", fullWaiting.bodyAsJsonObject().getString("error"));
    f.failure(f.client.mutexAddress(), "acquire", new JsonObject().put("name", "m").put("owner", "w5"), 409, "queue_full");
    f.failure(f.client.mutexAddress(), "tryAcquire", new JsonObject().put("name", "m").put("owner", "w5"), 409, "queue_full");
    assertEquals(List.of("w1", "w2"), queue("m"));
  }

  @Test
  void aHostRestartedWithTheSameHostIdRemovesWhatItsEarlierStartLeft() throws Exception {
    EmbeddedDatabase db = EmbeddedDatabase.inMemory();
    Vertx other = Vertx.vertx();
    try {
      JsonObject config = ServiceFixture.baseConfig();
      config.getJsonObject("http").put("enabled", false);
      config.getJsonObject("mutex").put("hostId", "host-1").put("leaseMs", 60_000).put("heartbeatIntervalMs", 1000);
      // The earlier start of host-1: a holder and two waiters, then the process dies (nothing released).
      List<String> mutexDir = new ArrayList<>(config.getJsonArray("rootDirectory").getList());
      mutexDir.add("mutex");
      MutexService earlier = await(Future.fromCompletionStage(MutexService.open(db,
          MutexOptions.builder().directory(mutexDir).hostId("host-1").reaperEnabled(false).build())));
      assertTrue(earlier.tryAcquire("m", "dead-holder").join().isHeld());
      earlier.tryAcquire("m", "dead-waiter-1").join();
      // A live waiter through another host, waiting for the mutex.
      JsonObject otherConfig = config.copy();
      otherConfig.getJsonObject("mutex").put("hostId", "host-2");
      ServiceFixture host2 = ServiceFixture.start(other, otherConfig, db);
      Future<CoordinationClient.Grant> live = host2.client.acquire("m", "live", Duration.ofSeconds(20));
      eventually("'live' is queued", Duration.ofSeconds(5),
          () -> queue(await(host2.client.mutexState("m"))).contains("live"));
      earlier.tryAcquire("m", "dead-waiter-2").join();
      earlier.close();

      f = ServiceFixture.start(vertx, config, db); // host-1 restarts
      CoordinationClient.Grant granted = await(live);
      assertTrue(granted.held());
      MutexState state = await(f.client.mutexState("m"));
      assertEquals("live", state.owner().orElseThrow().owner());
      assertEquals(List.of(), queue(state));
      host2.close();
    } finally {
      if (f != null) {
        f.close();
        f = null;
      }
      await(other.close());
      db.close();
    }
  }

  @Test
  void configurationOfTheNewKeysIsChecked() {
    CoordinationConfig defaults = CoordinationConfig.from(new JsonObject());
    assertEquals(1000, defaults.maxQueueLength());
    assertEquals(Duration.ofSeconds(30), defaults.watchLease());
    assertEquals(null, defaults.hostId());
    CoordinationConfig durable = CoordinationConfig.from(new JsonObject()
        .put("store", new JsonObject().put("dataDirectory", "some/dir")));
    assertTrue(durable.hostId().startsWith("embedded:") && durable.hostId().endsWith("dir"), durable.hostId());
    for (JsonObject bad : List.of(new JsonObject().put("maxQueueLength", 0), new JsonObject().put("hostId", ""),
        new JsonObject().put("watchLeaseMs", 10), new JsonObject().put("maxQueueLength", "many"))) {
      try {
        CoordinationConfig.from(new JsonObject().put("mutex", bad));
        fail("accepted " + bad);
      } catch (IllegalArgumentException e) {
        assertTrue(e.getMessage().contains("mutex."), e.getMessage());
      }
    }
  }
}
