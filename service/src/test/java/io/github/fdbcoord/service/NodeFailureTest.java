package io.github.fdbcoord.service;

import io.github.fdbcoord.client.CoordinationClient;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.mutex.MutexOptions;
import io.github.fdbcoord.mutex.MutexService;
import io.github.fdbcoord.service.eventbus.FailureCodes;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.http.WebSocket;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketConnectOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.test.fakecluster.FakeClusterManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static io.github.fdbcoord.service.ServiceFixture.await;
import static io.github.fdbcoord.service.WaiterLivenessTest.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Node failure is explicit: a request to a host that never answers fails within its own wait plus
 * the client's grace with the documented code; stopping the service answers waiting HTTP acquirers
 * 503 closed and closes WebSockets with 1001; lock-event subscriptions resume after a host restart
 * (or report a gap); WebSocket watch slots are given back.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NodeFailureTest {
  private Vertx vertx;

  @BeforeEach
  void start() {
    vertx = Vertx.vertx();
  }

  @AfterEach
  void stop() {
    await(vertx.close());
  }

  private static ReplyException replyFailure(Future<?> f) {
    try {
      Object v = await(f);
      return fail("expected a failure, got " + v);
    } catch (RuntimeException e) {
      Throwable t = e instanceof ReplyException ? e : e.getCause();
      return assertInstanceOf(ReplyException.class, t, () -> "not a ReplyException: " + e);
    }
  }

  /** Below {@link CoordinationClient#DEFAULT_SEND_TIMEOUT}, far above the timeouts the tests set. */
  private static final long BELOW_DEFAULT_TIMEOUT_MS = 8_000;

  @Test
  void aRequestToAHostThatNeverAnswersFailsWithinItsWaitPlusTheGrace() {
    // A host that took the request and died: the request is never answered.
    MessageConsumer<Object> dead = vertx.eventBus().consumer("dead.mutex", m -> { });
    await(dead.completion());
    CoordinationClient client = CoordinationClient.create(vertx, "dead").withReplyGrace(Duration.ofMillis(300));
    long start = System.nanoTime();
    ReplyException e = replyFailure(client.acquire("m", "w", Duration.ofMillis(500)));
    long tookMs = (System.nanoTime() - start) / 1_000_000;
    assertEquals(CoordinationClient.HOST_UNAVAILABLE, e.failureCode());
    assertEquals(ReplyFailure.TIMEOUT, e.failureType());
    assertTrue(e.getMessage().startsWith("no_reply: "), e.getMessage());
    assertEquals("no_reply", FailureCodes.reasonOf(e));
    // The wait plus the grace is 800 ms; the upper bound only tells it from the 10 s default send timeout,
    // generously, as a loaded machine runs the timer late.
    assertTrue(tookMs >= 700 && tookMs < BELOW_DEFAULT_TIMEOUT_MS, "failed after " + tookMs + " ms, expected about 800");

    start = System.nanoTime();
    ReplyException plain = replyFailure(client.withSendTimeout(Duration.ofMillis(400)).mutexState("m"));
    tookMs = (System.nanoTime() - start) / 1_000_000;
    assertEquals(CoordinationClient.HOST_UNAVAILABLE, plain.failureCode());
    assertTrue(tookMs < BELOW_DEFAULT_TIMEOUT_MS, "failed after " + tookMs + " ms, expected about 400");

    ReplyException none = replyFailure(CoordinationClient.create(vertx, "nobody").mutexState("m"));
    assertEquals(CoordinationClient.HOST_UNAVAILABLE, none.failureCode());
    assertTrue(none.getMessage().startsWith("no_handlers: "), none.getMessage());
    await(dead.unregister());
  }

  /**
   * An event-bus acquire is alive while its requester's node is: when the node that sent it leaves
   * the cluster, the host takes its waiter out of the queue, well before the request's own timeout.
   */
  @Test
  void theWaiterOfANodeThatLeftTheClusterLeavesTheQueue() throws Exception {
    Vertx host = await(Vertx.builder().withClusterManager(new FakeClusterManager()).buildClustered());
    Vertx requester = await(Vertx.builder().withClusterManager(new FakeClusterManager()).buildClustered());
    try {
      JsonObject config = ServiceFixture.baseConfig();
      config.getJsonObject("http").put("enabled", false);
      // The holder keeps the mutex by its heartbeats until it releases; a lease no late timer reaches.
      config.getJsonObject("mutex").put("leaseMs", 60_000);
      ServiceFixture f = ServiceFixture.start(host, config, null);
      assertTrue(await(f.client.tryAcquire("m", "holder")).held());
      long beat = host.setPeriodic(200, id -> f.client.heartbeat("m", "holder", null));
      CoordinationClient remote = CoordinationClient.create(requester);
      remote.acquire("m", "remote-waiter", Duration.ofSeconds(20));
      Future<CoordinationClient.Grant> live = f.client.acquire("m", "live", Duration.ofSeconds(20));
      eventually("both queued", Duration.ofSeconds(10),
          () -> await(f.client.mutexState("m")).queue().size() == 2);

      long closed = System.nanoTime();
      await(requester.close()); // its node leaves the cluster; its request can never be answered
      // Well before the request's own 20 s timeout, generously for a loaded machine.
      eventually("the waiter of the node that left is gone", Duration.ofSeconds(10), () -> await(f.client.mutexState("m"))
          .queue().stream().noneMatch(q -> q.owner().equals("remote-waiter")));
      long goneMs = (System.nanoTime() - closed) / 1_000_000;
      assertTrue(goneMs < 10_000, "removed " + goneMs + " ms after its node left");
      host.cancelTimer(beat);
      await(f.client.release("m", "holder", null));
      assertEquals("live", await(live).owner());
      f.close();
    } finally {
      await(host.close());
      if (requester != null) {
        requester.close();
      }
      FakeClusterManager.reset();
    }
  }

  @Test
  void stoppingTheServiceAnswersWaitingHttpAcquirers503ClosedAndClosesWebSockets1001() throws Exception {
    // Nobody heartbeats "holder": under the fixture's 1.5 s lease, a loaded machine that took longer to
    // queue the four waiters saw the reaper hand the mutex to the first of them.
    for (int trial = 0; trial < 3; trial++) {
      JsonObject config = ServiceFixture.baseConfig();
      config.getJsonObject("mutex").put("leaseMs", 60_000);
      ServiceFixture f = ServiceFixture.start(vertx, config, null);
      assertTrue(await(f.client.tryAcquire("m", "holder")).held());
      List<Future<HttpResponse<Buffer>>> waiting = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        waiting.add(f.web().post("/mutexes/m/acquire")
            .sendJsonObject(new JsonObject().put("owner", "w" + i).put("timeoutMs", 15_000)));
      }
      WebSocketClient wsClient = vertx.createWebSocketClient();
      WebSocket ws = await(wsClient.connect(new WebSocketConnectOptions().setHost("127.0.0.1")
          .setPort(f.service.httpPort()).setURI("/ws")));
      BlockingQueue<String> wsMessages = new LinkedBlockingQueue<>();
      ws.textMessageHandler(wsMessages::add);
      await(ws.writeTextMessage(new JsonObject().put("subscribe", new JsonArray().add("m")).encode()));
      assertNotNull(wsMessages.poll(10, TimeUnit.SECONDS));
      eventually("all four queued", Duration.ofSeconds(10), () -> await(f.client.mutexState("m")).queue().size() == 4);

      await(vertx.undeploy(f.deploymentId));
      for (Future<HttpResponse<Buffer>> w : waiting) {
        HttpResponse<Buffer> r = await(w);
        assertEquals(503, r.statusCode(), "trial " + trial + ": " + r.bodyAsString());
        assertEquals("closed", r.bodyAsJsonObject().getString("error"));
      }
      eventually("the WebSocket is closed", Duration.ofSeconds(5), ws::isClosed);
      assertEquals(Short.valueOf((short) 1001), ws.closeStatusCode());
      assertNotNull(ws.closeReason());
      assertFalse(ws.closeReason().isBlank());
      await(wsClient.close());
      f.web().close();
    }
  }

  @Test
  void lockEventsResumeAfterTheHostRestartsAndReplayWhatWasMissed() throws Exception {
    EmbeddedDatabase db = EmbeddedDatabase.inMemory();
    try {
      JsonObject config = ServiceFixture.baseConfig();
      config.getJsonObject("http").put("enabled", false);
      // A long lease: no expiry may interleave with the events this test expects.
      config.getJsonObject("mutex").put("watchLeaseMs", 600).put("leaseMs", 60_000);
      ServiceFixture host = ServiceFixture.start(vertx, config, db);
      CoordinationClient client = CoordinationClient.create(vertx);
      List<LockEvent> events = new CopyOnWriteArrayList<>();
      List<CoordinationClient.EventGap> gaps = new CopyOnWriteArrayList<>();
      MessageConsumer<JsonObject> consumer = await(client.lockEvents("m", events::add, gaps::add));
      FencingToken a = await(client.tryAcquire("m", "a")).token().orElseThrow();
      eventually("ACQUIRED delivered", Duration.ofSeconds(5), () -> events.size() == 1);

      // The host goes away (releasing 'a' on its way out: that event may or may not be published
      // before its publisher stops); meanwhile another process changes the mutex.
      await(vertx.undeploy(host.deploymentId));
      List<String> mutexDir = new ArrayList<>(config.getJsonArray("rootDirectory").getList());
      mutexDir.add("mutex");
      MutexService elsewhere = MutexService.open(db, MutexOptions.builder().directory(mutexDir).reaperEnabled(false)
          .build()).join();
      FencingToken b = elsewhere.tryAcquire("m", "b").join().token().orElseThrow();
      elsewhere.tryAcquire("m", "c").join();
      LockEvent handOff = elsewhere.release("m", "b", b).join();
      elsewhere.close();
      Thread.sleep(300);
      assertTrue(events.size() <= 2, "nothing but a's release is delivered while no host publishes: " + events);

      ServiceFixture restarted = ServiceFixture.start(vertx, config, db);
      eventually("the events made while the host was down are replayed", Duration.ofSeconds(10),
          () -> events.contains(handOff));
      await(client.release("m", "c", null));
      eventually("the next live event arrives", Duration.ofSeconds(10), () -> events.size() == 5);
      Thread.sleep(300);
      assertEquals(List.of(LockEvent.Type.ACQUIRED, LockEvent.Type.RELEASED, LockEvent.Type.ACQUIRED,
          LockEvent.Type.HANDED_OFF, LockEvent.Type.RELEASED), events.stream().map(LockEvent::type).toList(),
          "each event once, in order: " + events);
      assertEquals(a, events.get(1).previousToken().orElseThrow());
      assertEquals(b, events.get(2).sequence());
      assertEquals(handOff, events.get(3));
      assertEquals("c", events.get(4).previousOwner().orElseThrow());
      assertEquals(List.of(), gaps);
      await(consumer.unregister());
      restarted.close();
    } finally {
      db.close();
    }
  }

  @Test
  void lockEventsReportAGapWhenTheRestartedHostNoLongerHasThem() throws Exception {
    JsonObject config = ServiceFixture.baseConfig();
    config.getJsonObject("http").put("enabled", false);
    config.getJsonObject("mutex").put("watchLeaseMs", 600);
    EmbeddedDatabase first = EmbeddedDatabase.inMemory();
    EmbeddedDatabase second = EmbeddedDatabase.inMemory();
    try {
      ServiceFixture host = ServiceFixture.start(vertx, config, first);
      CoordinationClient client = CoordinationClient.create(vertx);
      List<LockEvent> events = new CopyOnWriteArrayList<>();
      BlockingQueue<CoordinationClient.EventGap> gaps = new LinkedBlockingQueue<>();
      MessageConsumer<JsonObject> consumer = await(client.lockEvents("m", events::add, gaps::add));
      await(client.tryAcquire("m", "a"));
      eventually("ACQUIRED delivered", Duration.ofSeconds(5), () -> events.size() == 1);
      await(vertx.undeploy(host.deploymentId));
      // The host comes back over another (in-memory) store: what followed cannot be replayed.
      ServiceFixture restarted = ServiceFixture.start(vertx, config, second);
      CoordinationClient.EventGap gap = gaps.poll(10, TimeUnit.SECONDS);
      assertNotNull(gap, "no gap signal within 10 s");
      assertEquals("m", gap.mutex());
      assertEquals(events.get(events.size() - 1).sequence(), gap.lastDelivered().orElseThrow());
      await(consumer.unregister());
      restarted.close();
    } finally {
      first.close();
      second.close();
    }
  }

  private static LockEvent next(BlockingQueue<LockEvent> events) throws InterruptedException {
    LockEvent e = events.poll(10, TimeUnit.SECONDS);
    assertNotNull(e, "no lock event within 10 s");
    return e;
  }

  @Test
  void webSocketWatchSlotsAreGivenBackWhenSubscriptionsAndConnectionsEnd() throws Exception {
    JsonObject config = ServiceFixture.baseConfig();
    config.getJsonObject("mutex").put("maxWatched", 6);
    config.getJsonObject("http").put("maxWebSocketSubscriptions", 6);
    ServiceFixture f = ServiceFixture.start(vertx, config, null);
    try {
      WebSocketClient wsClient = vertx.createWebSocketClient();
      WebSocketConnectOptions to = new WebSocketConnectOptions().setHost("127.0.0.1").setPort(f.service.httpPort())
          .setURI("/ws");
      for (int connection = 0; connection < 5; connection++) {
        WebSocket ws = await(wsClient.connect(to));
        BlockingQueue<JsonObject> messages = new LinkedBlockingQueue<>();
        ws.textMessageHandler(t -> messages.add(new JsonObject(t)));
        JsonArray names = new JsonArray();
        for (int i = 0; i < 6; i++) {
          names.add("c" + connection + "-m" + i);
        }
        await(ws.writeTextMessage(new JsonObject().put("subscribe", names).encode()));
        JsonObject ack = messages.poll(10, TimeUnit.SECONDS);
        assertNotNull(ack);
        assertEquals("subscribed", ack.getString("type"), "connection " + connection + ": " + ack);
        if (connection % 2 == 0) {
          // Unsubscribing gives the slots back ...
          await(ws.writeTextMessage(new JsonObject().put("unsubscribe", names).encode()));
          assertEquals("unsubscribed", messages.poll(10, TimeUnit.SECONDS).getString("type"));
          eventually("slots given back", Duration.ofSeconds(5), () -> mutexVerticleWatched(f) == 0);
          await(ws.close());
        } else {
          // ... and so does closing the connection.
          await(ws.close());
          eventually("slots given back", Duration.ofSeconds(5), () -> mutexVerticleWatched(f) == 0);
        }
      }
      await(wsClient.close());
    } finally {
      f.close();
    }
  }

  @Test
  void aWatchNobodyRenewsEndsAfterItsLease() throws Exception {
    JsonObject config = ServiceFixture.baseConfig();
    config.getJsonObject("http").put("enabled", false);
    // Long enough that no watch ends before the fourth is refused (at 500 ms, a loaded machine's three
    // requests outlived the first), short enough to wait for.
    long watchLeaseMs = 5_000;
    config.getJsonObject("mutex").put("maxWatched", 3).put("watchLeaseMs", watchLeaseMs);
    ServiceFixture f = ServiceFixture.start(vertx, config, null);
    try {
      for (int i = 0; i < 3; i++) {
        f.request(f.client.mutexAddress(), "watch", new JsonObject().put("name", "w" + i));
      }
      f.failure(f.client.mutexAddress(), "watch", new JsonObject().put("name", "w3"), 409, "too_many_watched");
      // Nobody renews them (a client that died): the slots come back after the lease.
      eventually("the unrenewed watches end", Duration.ofSeconds(30), () -> mutexVerticleWatched(f) == 0);
      JsonObject reply = f.request(f.client.mutexAddress(), "watch", new JsonObject().put("name", "w3")
          .put("watcher", "me"));
      assertEquals(watchLeaseMs, reply.getLong("leaseMs"));
      JsonObject unwatched = f.request(f.client.mutexAddress(), "unwatch", new JsonObject().put("name", "w3")
          .put("watcher", "me"));
      assertTrue(unwatched.getBoolean("unwatched"));
      assertEquals(0, mutexVerticleWatched(f));
    } finally {
      f.close();
    }
  }

  /**
   * The semaphores' and read-write locks' state watches share the mutex's limit and lease: a watcher that dies
   * holds its slot only until its lease ends, and not sooner.
   */
  @Test
  void aStateWatchNobodyRenewsEndsAfterItsLease() throws Exception {
    JsonObject config = ServiceFixture.baseConfig();
    config.getJsonObject("http").put("enabled", false);
    long watchLeaseMs = 5_000; // as above: no watch ends before the third is refused on a loaded machine
    config.getJsonObject("mutex").put("maxWatched", 2).put("watchLeaseMs", watchLeaseMs);
    ServiceFixture f = ServiceFixture.start(vertx, config, null);
    try {
      List<String> layers = List.of(f.client.semaphoreAddress(), f.client.readWriteLockAddress());
      long started = System.nanoTime();
      for (String layer : layers) {
        for (int i = 0; i < 2; i++) {
          JsonObject reply = f.request(layer, "watch", new JsonObject().put("name", "s" + i).put("watcher", "dead"));
          assertEquals(watchLeaseMs, reply.getLong("leaseMs"), reply::encode);
          assertEquals(layer + ".events.s" + i, reply.getString("address"));
          assertNotNull(reply.getString("version"), reply::encode);
        }
      }
      ReplyException semaphores = f.failure(layers.get(0), "watch", new JsonObject().put("name", "s2")
          .put("watcher", "me"), 409, "too_many_watched");
      assertTrue(semaphores.getMessage().contains("publishes the state of 2 semaphores"), semaphores::getMessage);
      ReplyException locks = f.failure(layers.get(1), "watch", new JsonObject().put("name", "s2")
          .put("watcher", "me"), 409, "too_many_watched");
      assertTrue(locks.getMessage().contains("publishes the state of 2 read-write locks"), locks::getMessage);
      for (String layer : layers) {
        // A refused watch sweeps the expired ones first, so the first accepted one is when the slots came back.
        eventually("the unrenewed watches of " + layer + " end", Duration.ofSeconds(30), () -> {
          try {
            await(f.client.request(layer, "watch", new JsonObject().put("name", "s2").put("watcher", "me")));
            return true;
          } catch (RuntimeException e) {
            ReplyException r = assertInstanceOf(ReplyException.class, e instanceof ReplyException ? e : e.getCause());
            assertEquals(409, r.failureCode(), r::getMessage);
            return false;
          }
        });
      }
      assertTrue(System.nanoTime() - started >= TimeUnit.MILLISECONDS.toNanos(watchLeaseMs),
          "a slot came back before its watch's lease ended");
      for (String layer : layers) {
        // The first watch's lease ended first, so the sweep that gave a slot back ended it (the second's may still
        // run).
        JsonObject gone = f.request(layer, "unwatch", new JsonObject().put("name", "s0").put("watcher", "dead"));
        assertFalse(gone.getBoolean("unwatched"), () -> "the lease ended it: " + gone.encode());
        JsonObject unwatched = f.request(layer, "unwatch", new JsonObject().put("name", "s2").put("watcher", "me"));
        assertTrue(unwatched.getBoolean("unwatched"), unwatched::encode);
        JsonObject again = f.request(layer, "unwatch", new JsonObject().put("name", "s2").put("watcher", "me"));
        assertFalse(again.getBoolean("unwatched"), again::encode);
      }
    } finally {
      f.close();
    }
  }

  private static int mutexVerticleWatched(ServiceFixture f) {
    return f.service.watchedMutexCount();
  }
}
