package io.github.fdbcoord.service;

import io.github.fdbcoord.api.FencingToken;
import io.vertx.core.Vertx;
import io.vertx.core.http.WebSocket;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketConnectOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import static io.github.fdbcoord.service.WaiterLivenessTest.eventually;
import static io.github.fdbcoord.service.ServiceFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The WebSocket's subscriptions to elections, semaphores and read-write locks: the current leader or state first,
 * each change after it, never an older one after a newer; bad messages answered with errors on an open connection;
 * one limit for every kind; the watches given back when the socket closes.
 */
@ExtendWith(VertxExtension.class)
class WebSocketStateEventsTest {
  private ServiceFixture f;
  private WebSocketClient http;
  private final List<Socket> sockets = new ArrayList<>();

  /** One connection and what it received. */
  private final class Socket {
    final WebSocket ws;
    final BlockingQueue<JsonObject> received = new LinkedBlockingQueue<>();
    /** Every message taken so far, in order. */
    final List<JsonObject> seen = new ArrayList<>();

    Socket() {
      ws = await(http.connect(new WebSocketConnectOptions().setHost("127.0.0.1").setPort(f.service.httpPort())
          .setURI("/ws")));
      ws.textMessageHandler(t -> received.add(new JsonObject(t)));
      sockets.add(this);
    }

    void send(JsonObject msg) {
      await(ws.writeTextMessage(msg.encode()));
    }

    JsonObject next() throws InterruptedException {
      JsonObject m = received.poll(15, TimeUnit.SECONDS);
      assertNotNull(m, "no WebSocket message within 15 s; seen " + seen);
      seen.add(m);
      return m;
    }

    /** The next message that {@code wanted} accepts, skipping others (kept in {@link #seen}). */
    JsonObject until(String what, Predicate<JsonObject> wanted) throws InterruptedException {
      for (int i = 0; i < 200; i++) {
        JsonObject m = next();
        if (wanted.test(m)) {
          return m;
        }
      }
      throw new AssertionError("no " + what + " in " + seen);
    }
  }

  /**
   * Leases far longer than a test: nothing heartbeats the grants made over the event bus here, and a loaded machine
   * must not see them expire between two steps (the fixture's mutex lease, which elections use, is 1.5 s).
   */
  private static JsonObject longLeases() {
    JsonObject config = ServiceFixture.baseConfig();
    config.getJsonObject("mutex").put("leaseMs", 120_000).put("heartbeatIntervalMs", 10_000);
    JsonObject leased = new JsonObject().put("leaseMs", 120_000).put("heartbeatIntervalMs", 10_000);
    return config.put("semaphore", leased.copy()).put("rwlock", leased.copy());
  }

  private void start(Vertx vertx, JsonObject config) {
    f = ServiceFixture.start(vertx, config, null);
    http = vertx.createWebSocketClient();
  }

  @AfterEach
  void stop() {
    for (Socket s : sockets) {
      if (!s.ws.isClosed()) {
        await(s.ws.close());
      }
    }
    if (http != null) {
      await(http.close());
    }
    if (f != null) {
      f.close();
    }
  }

  private static boolean ofType(JsonObject m, String type) {
    return type.equals(m.getString("type"));
  }

  private static List<String> owners(JsonArray holders) {
    List<String> out = new ArrayList<>();
    holders.forEach(h -> out.add(((JsonObject) h).getString("owner")));
    return out;
  }

  /** Versions (or epochs) of the messages of {@code type} in {@code seen}, each newer than the one before. */
  private static void assertOrdered(List<JsonObject> seen, String type, String field) {
    FencingToken last = null;
    for (JsonObject m : seen) {
      if (!ofType(m, type)) {
        continue;
      }
      String v = field.equals("epoch") ? (m.getJsonObject("leader") == null ? null
          : m.getJsonObject("leader").getString("epoch")) : m.getString(field);
      if (v == null) {
        continue;
      }
      FencingToken t = FencingToken.parse(v);
      assertTrue(last == null || t.isNewerThan(last), "older after newer in " + seen);
      last = t;
    }
  }

  @Test
  void semaphoreStateFirstThenEachChange(Vertx vertx) throws Exception {
    start(vertx, longLeases());
    Socket s = new Socket();
    s.send(new JsonObject().put("subscribe", new JsonObject().put("semaphores", new JsonArray().add("s1"))));
    JsonObject first = s.until("the current state", m -> ofType(m, "semaphore"));
    assertEquals("s1", first.getString("name"));
    assertEquals(List.of(), owners(first.getJsonObject("state").getJsonArray("holders")));
    JsonObject ack = s.until("the ack", m -> ofType(m, "subscribed"));
    assertEquals(new JsonArray().add("s1"), ack.getJsonArray("semaphores"));

    String addr = f.client.semaphoreAddress();
    JsonObject a = f.request(addr, "acquire", new JsonObject().put("name", "s1").put("owner", "a").put("permits", 2));
    f.request(addr, "acquire", new JsonObject().put("name", "s1").put("owner", "b").put("permits", 2));
    s.until("a and b holding", m -> ofType(m, "semaphore")
        && owners(m.getJsonObject("state").getJsonArray("holders")).equals(List.of("a", "b")));
    // c waits: the queue alone changes, and that is pushed too.
    var c = f.client.request(addr, "acquire", new JsonObject().put("name", "s1").put("owner", "c").put("permits", 2)
        .put("timeoutMs", 15_000));
    s.until("c queued", m -> ofType(m, "semaphore")
        && m.getJsonObject("state").getJsonArray("waiters").equals(new JsonArray().add("c")));
    f.request(addr, "release", new JsonObject().put("name", "s1").put("owner", "a").put("token", a.getString("token")));
    JsonObject cHolds = s.until("c holding", m -> ofType(m, "semaphore")
        && owners(m.getJsonObject("state").getJsonArray("holders")).equals(List.of("b", "c")));
    assertEquals(await(c).getString("token"), cHolds.getJsonObject("state").getJsonArray("holders").getJsonObject(1)
        .getString("token"));
    JsonObject state = f.request(addr, "state", new JsonObject().put("name", "s1"));
    assertEquals(state, cHolds.getJsonObject("state"));
    assertOrdered(s.seen, "semaphore", "version");

    // After unsubscribing, no more pushes of s1: the next message is the ack of another subscription.
    s.send(new JsonObject().put("unsubscribe", new JsonObject().put("semaphores", new JsonArray().add("s1"))));
    assertEquals(new JsonArray().add("s1"), s.until("unsubscribed", m -> ofType(m, "unsubscribed"))
        .getJsonArray("semaphores"));
    int unsubscribedAt = s.seen.size();
    JsonObject b = cHolds.getJsonObject("state").getJsonArray("holders").getJsonObject(0);
    f.request(addr, "release", new JsonObject().put("name", "s1").put("owner", "b").put("token", b.getString("token")));
    s.send(new JsonObject().put("subscribe", new JsonObject().put("semaphores", new JsonArray().add("s2"))));
    s.until("the ack of s2", m -> ofType(m, "subscribed"));
    for (JsonObject m : s.seen.subList(unsubscribedAt, s.seen.size())) {
      assertTrue(!"s1".equals(m.getString("name")), "a push of s1 after unsubscribing: " + m);
    }
  }

  @Test
  void readWriteLockModesAndQueue(Vertx vertx) throws Exception {
    start(vertx, longLeases());
    Socket s = new Socket();
    s.send(new JsonObject().put("subscribe", new JsonObject().put("rwlocks", new JsonArray().add("l1"))));
    s.until("the ack", m -> ofType(m, "subscribed"));
    String addr = f.client.readWriteLockAddress();
    JsonObject w = f.request(addr, "acquire", new JsonObject().put("name", "l1").put("owner", "w").put("mode", "write"));
    s.until("the writer", m -> ofType(m, "rwlock") && m.getJsonObject("state").getJsonArray("holders").size() == 1
        && "write".equals(m.getJsonObject("state").getJsonArray("holders").getJsonObject(0).getString("mode")));
    var r = f.client.request(addr, "acquire", new JsonObject().put("name", "l1").put("owner", "r").put("mode", "read")
        .put("timeoutMs", 15_000));
    s.until("the reader queued", m -> ofType(m, "rwlock")
        && m.getJsonObject("state").getJsonArray("queue").size() == 1);
    f.request(addr, "release", new JsonObject().put("name", "l1").put("owner", "w").put("mode", "write")
        .put("token", w.getString("token")));
    await(r);
    JsonObject reading = s.until("the reader holding", m -> ofType(m, "rwlock")
        && owners(m.getJsonObject("state").getJsonArray("holders")).equals(List.of("r")));
    assertEquals(f.request(addr, "state", new JsonObject().put("name", "l1")), reading.getJsonObject("state"));
    assertOrdered(s.seen, "rwlock", "version");
  }

  @Test
  void electionLeaderFirstThenEachChangeInEpochOrder(Vertx vertx) throws Exception {
    start(vertx, longLeases());
    Socket s = new Socket();
    s.send(new JsonObject().put("subscribe", new JsonObject().put("elections", new JsonArray().add("e1"))));
    JsonObject none = s.until("the current leader", m -> ofType(m, "election"));
    assertEquals("e1", none.getString("election"));
    assertNull(none.getJsonObject("leader"));
    String addr = f.client.electionAddress();
    JsonObject a = f.request(addr, "campaign", new JsonObject().put("election", "e1").put("candidate", "a"));
    JsonObject led = s.until("a leading", m -> ofType(m, "election") && m.getJsonObject("leader") != null);
    assertEquals("a", led.getJsonObject("leader").getString("candidate"));
    assertEquals(a.getString("epoch"), led.getJsonObject("leader").getString("epoch"));
    var b = f.client.request(addr, "campaign", new JsonObject().put("election", "e1").put("candidate", "b")
        .put("timeoutMs", 15_000));
    // A second socket subscribing now is told the current leader, a.
    Socket late = new Socket();
    late.send(new JsonObject().put("subscribe", new JsonObject().put("elections", new JsonArray().add("e1"))));
    assertEquals("a", late.until("the current leader", m -> ofType(m, "election")).getJsonObject("leader")
        .getString("candidate"));
    f.request(addr, "resign", new JsonObject().put("election", "e1").put("candidate", "a")
        .put("epoch", a.getString("epoch")));
    JsonObject bLeads = s.until("b leading", m -> ofType(m, "election") && m.getJsonObject("leader") != null
        && "b".equals(m.getJsonObject("leader").getString("candidate")));
    assertEquals(await(b).getString("epoch"), bLeads.getJsonObject("leader").getString("epoch"));
    late.until("b leading", m -> ofType(m, "election") && m.getJsonObject("leader") != null
        && "b".equals(m.getJsonObject("leader").getString("candidate")));
    assertOrdered(s.seen, "election", "epoch");
    assertOrdered(late.seen, "election", "epoch");
  }

  /** The newest message of {@code type} received so far (waiting for the queue to drain first). */
  private static JsonObject lastOf(Socket s, String type) throws InterruptedException {
    JsonObject m;
    while ((m = s.received.poll()) != null) {
      s.seen.add(m);
    }
    JsonObject last = null;
    for (JsonObject x : s.seen) {
      if (ofType(x, type)) {
        last = x;
      }
    }
    return last;
  }

  @Test
  void manyContendersTheLastStatePushedIsTheState(Vertx vertx) throws Exception {
    start(vertx, longLeases());
    Socket s = new Socket();
    s.send(new JsonObject().put("subscribe", new JsonObject().put("semaphores", new JsonArray().add("busy"))
        .put("elections", new JsonArray().add("busy-e"))));
    s.until("an ack", m -> ofType(m, "subscribed"));
    s.until("an ack", m -> ofType(m, "subscribed"));
    String sem = f.client.semaphoreAddress();
    String election = f.client.electionAddress();
    List<io.vertx.core.Future<?>> all = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      String owner = "c" + i;
      io.vertx.core.Future<?> chain = io.vertx.core.Future.succeededFuture();
      for (int cycle = 0; cycle < 3; cycle++) {
        chain = chain.compose(v -> f.client.request(sem, "acquire", new JsonObject().put("name", "busy")
                .put("owner", owner).put("permits", 3).put("timeoutMs", 20_000)))
            .compose(held -> f.client.request(sem, "release", new JsonObject().put("name", "busy")
                .put("owner", owner).put("token", held.getString("token"))))
            .compose(v -> f.client.request(election, "campaign", new JsonObject().put("election", "busy-e")
                .put("candidate", owner).put("timeoutMs", 20_000)))
            .compose(led -> f.client.request(election, "resign", new JsonObject().put("election", "busy-e")
                .put("candidate", owner).put("epoch", led.getString("epoch"))));
      }
      all.add(chain);
    }
    await(io.vertx.core.Future.all(all));
    // One more leader, so that the last leader change is one with a leader.
    JsonObject last = f.request(election, "campaign", new JsonObject().put("election", "busy-e").put("candidate", "z"));
    JsonObject state = f.request(sem, "state", new JsonObject().put("name", "busy"));
    eventually("the last semaphore state pushed is the state", Duration.ofSeconds(30), () -> {
      try {
        JsonObject m = lastOf(s, "semaphore");
        return m != null && state.equals(m.getJsonObject("state"));
      } catch (InterruptedException e) {
        throw new AssertionError(e);
      }
    });
    eventually("the last leader pushed is the leader", Duration.ofSeconds(30), () -> {
      try {
        JsonObject m = lastOf(s, "election");
        return m != null && m.getJsonObject("leader") != null
            && last.getString("epoch").equals(m.getJsonObject("leader").getString("epoch"));
      } catch (InterruptedException e) {
        throw new AssertionError(e);
      }
    });
    assertOrdered(s.seen, "semaphore", "version");
    assertOrdered(s.seen, "election", "epoch");
    long states = s.seen.stream().filter(m -> ofType(m, "semaphore")).count();
    long leaders = s.seen.stream().filter(m -> ofType(m, "election") && m.getJsonObject("leader") != null).count();
    assertTrue(states > 3 && leaders > 3, "changes were pushed: " + states + " states, " + leaders + " leaders");
    for (JsonObject m : s.seen) {
      if (ofType(m, "semaphore")) {
        assertTrue(m.getJsonObject("state").getJsonArray("holders").size() <= 3, "at most 3 holders: " + m);
      }
    }
  }

  @Test
  void badMessagesGetErrorsAndTheConnectionStaysOpen(Vertx vertx) throws Exception {
    JsonObject config = ServiceFixture.baseConfig();
    config.getJsonObject("http").put("maxWebSocketSubscriptions", 3);
    start(vertx, config);
    Socket s = new Socket();
    for (String bad : List.of("{\"subscribe\": {}}", "{\"subscribe\": {\"locks\": [\"x\"]}}",
        "{\"subscribe\": {\"semaphores\": \"x\"}}", "{\"subscribe\": {\"elections\": [\"\"]}}",
        "{\"subscribe\": {\"rwlocks\": [1]}}", "{\"unsubscribe\": {\"bogus\": []}}")) {
      s.send(new JsonObject(bad));
      JsonObject error = s.next();
      assertEquals("error", error.getString("type"), bad + " -> " + error);
      assertTrue(error.getString("message").length() > 10, error.toString());
    }
    JsonObject unknown = s.seen.get(1);
    assertTrue(unknown.getString("message").contains("locks"), "names the unknown kind: " + unknown);

    // One limit for every kind: 3 here.
    s.send(new JsonObject().put("subscribe", new JsonObject().put("semaphores", new JsonArray().add("a").add("b"))));
    s.until("the ack", m -> ofType(m, "subscribed"));
    s.send(new JsonObject().put("subscribe", new JsonObject().put("elections", new JsonArray().add("e1").add("e2"))));
    JsonObject tooMany = s.until("an error", m -> ofType(m, "error"));
    assertTrue(tooMany.getString("message").contains("at most 3"), tooMany.toString());
    s.send(new JsonObject().put("subscribe", new JsonArray().add("m1").add("m2")));
    assertTrue(s.until("an error", m -> ofType(m, "error")).getString("message").contains("at most 3"));
    s.send(new JsonObject().put("unsubscribe", new JsonObject().put("semaphores", new JsonArray().add("a"))));
    s.until("unsubscribed", m -> ofType(m, "unsubscribed"));
    s.send(new JsonObject().put("subscribe", new JsonObject().put("elections", new JsonArray().add("e1"))
        .put("mutexes", new JsonArray().add("m1"))));
    JsonObject acks = new JsonObject();
    for (int i = 0; i < 2; i++) {
      acks.mergeIn(s.until("an ack", m -> ofType(m, "subscribed")));
    }
    assertEquals(new JsonArray().add("e1"), acks.getJsonArray("elections"));
    assertEquals(new JsonArray().add("m1"), acks.getJsonArray("mutexes"));
  }

  @Test
  void closingTheSocketGivesItsWatchesBack(Vertx vertx) throws Exception {
    // This node publishes one name of each kind at most: a second is refused until the first is given back.
    JsonObject config = ServiceFixture.baseConfig();
    config.getJsonObject("mutex").put("maxWatched", 1);
    start(vertx, config);
    Socket first = new Socket();
    first.send(new JsonObject().put("subscribe", new JsonObject().put("semaphores", new JsonArray().add("a"))
        .put("rwlocks", new JsonArray().add("a"))));
    first.until("an ack", m -> ofType(m, "subscribed"));
    first.until("an ack", m -> ofType(m, "subscribed"));
    Socket second = new Socket();
    second.send(new JsonObject().put("subscribe", new JsonObject().put("semaphores", new JsonArray().add("b"))));
    JsonObject refused = second.until("an error", m -> ofType(m, "error"));
    assertTrue(refused.getString("message").contains("too_many_watched")
        || refused.getString("message").contains("already publishes"), refused.toString());
    await(first.ws.close());
    second.send(new JsonObject().put("subscribe", new JsonObject().put("semaphores", new JsonArray().add("b"))
        .put("rwlocks", new JsonArray().add("b"))));
    JsonObject acks = new JsonObject();
    for (int i = 0; i < 2; i++) {
      acks.mergeIn(second.until("an ack", m -> ofType(m, "subscribed")));
    }
    assertEquals(new JsonArray().add("b"), acks.getJsonArray("semaphores"));
    assertEquals(new JsonArray().add("b"), acks.getJsonArray("rwlocks"));
  }
}
