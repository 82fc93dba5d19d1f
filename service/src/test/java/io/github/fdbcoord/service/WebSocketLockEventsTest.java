package io.github.fdbcoord.service;

import io.github.fdbcoord.client.CoordinationClient;
import io.vertx.core.Vertx;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocket;
import io.vertx.core.http.WebSocketConnectOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static io.github.fdbcoord.service.ServiceFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A WebSocket client subscribes to mutexes and sees each lock event with its fencing token: a
 * hand-off when the holder releases, and an expiry hand-off when the holder stops heartbeating.
 */
@ExtendWith(VertxExtension.class)
class WebSocketLockEventsTest {
  private ServiceFixture f;
  private WebSocketClient http;
  private WebSocket ws;
  private final BlockingQueue<JsonObject> received = new LinkedBlockingQueue<>();

  @BeforeEach
  void start(Vertx vertx) {
    f = ServiceFixture.start(vertx);
    http = vertx.createWebSocketClient();
    ws = await(http.connect(new WebSocketConnectOptions().setHost("127.0.0.1").setPort(f.service.httpPort())
        .setURI("/ws")));
    ws.textMessageHandler(t -> received.add(new JsonObject(t)));
  }

  @AfterEach
  void stop() {
    await(ws.close());
    await(http.close());
    f.close();
  }

  private JsonObject next() throws InterruptedException {
    JsonObject m = received.poll(10, TimeUnit.SECONDS);
    assertNotNull(m, "no WebSocket message within 10 s");
    return m;
  }

  private JsonObject nextLock() throws InterruptedException {
    JsonObject m;
    do {
      m = next();
    } while (!"lock".equals(m.getString("type")));
    return m;
  }

  @Test
  void handOffOnReleaseAndOnMissedHeartbeats() throws Exception {
    await(ws.writeTextMessage(new JsonObject().put("subscribe", new JsonArray().add("m1").add("m2")).encode()));
    JsonObject ack = next();
    assertEquals("subscribed", ack.getString("type"));
    assertEquals(new JsonArray().add("m1").add("m2"), ack.getJsonArray("mutexes"));

    CoordinationClient c = f.client;
    var a = await(c.tryAcquire("m1", "a"));
    JsonObject acquired = nextLock();
    assertEquals("ACQUIRED", acquired.getString("event"));
    assertEquals("m1", acquired.getString("mutex"));
    assertEquals("a", acquired.getString("owner"));
    assertEquals(a.token().get().toString(), acquired.getString("token"));

    await(c.tryAcquire("m1", "b"));
    await(c.release("m1", "a", a.token().get()));
    JsonObject handOff = nextLock();
    assertEquals("HANDED_OFF", handOff.getString("event"));
    assertEquals("a", handOff.getString("previousOwner"));
    assertEquals("b", handOff.getString("owner"));
    assertTrue(handOff.getString("token").compareTo(acquired.getString("token")) > 0, "token grows");

    // c queues behind b and heartbeats its place; b never heartbeats: the reaper hands the mutex to c
    // after b's lease (1.5 s).
    await(c.tryAcquire("m1", "c"));
    long beat = f.vertx.setPeriodic(200, id -> c.heartbeatWaiter("m1", "c"));
    long start = System.nanoTime();
    JsonObject expired = nextLock();
    long waitedMs = (System.nanoTime() - start) / 1_000_000;
    f.vertx.cancelTimer(beat);
    assertEquals("EXPIRED", expired.getString("event"));
    assertEquals("b", expired.getString("previousOwner"));
    assertEquals("c", expired.getString("owner"));
    assertTrue(expired.getString("token").compareTo(handOff.getString("token")) > 0);
    assertTrue(waitedMs >= 1000, "evicted only after the lease, waited " + waitedMs + " ms");

    // Events of another subscribed mutex arrive too; unsubscribed ones do not.
    await(ws.writeTextMessage(new JsonObject().put("unsubscribe", new JsonArray().add("m1")).encode()));
    assertEquals("unsubscribed", next().getString("type"));
    await(c.release("m1", "c", null));
    await(c.tryAcquire("m2", "z"));
    JsonObject m2 = nextLock();
    assertEquals("m2", m2.getString("mutex"), "no event of m1 after unsubscribing: " + m2);
    await(c.release("m2", "z", null));
  }

  @Test
  void badMessagesGetErrorsAndTheConnectionStaysOpen() throws Exception {
    await(ws.writeTextMessage("not json"));
    assertEquals("error", next().getString("type"));
    await(ws.writeTextMessage("[1]"));
    assertEquals("error", next().getString("type"));
    await(ws.writeTextMessage("{\"subscribe\": \"m1\"}"));
    assertEquals("error", next().getString("type"));
    await(ws.writeTextMessage("{\"subscribe\": [\"\"]}"));
    assertEquals("error", next().getString("type"));
    await(ws.writeTextMessage("{\"hello\": 1}"));
    assertEquals("error", next().getString("type"));
    JsonArray tooMany = new JsonArray();
    for (int i = 0; i < 101; i++) {
      tooMany.add("m" + i);
    }
    await(ws.writeTextMessage(new JsonObject().put("subscribe", tooMany).encode()));
    assertEquals("error", next().getString("type"));
    await(ws.writeBinaryMessage(io.vertx.core.buffer.Buffer.buffer("x")));
    assertEquals("error", next().getString("type"));
    await(ws.writeTextMessage("{\"subscribe\": [\"ok\"]}"));
    assertEquals("subscribed", next().getString("type"));
  }
}
