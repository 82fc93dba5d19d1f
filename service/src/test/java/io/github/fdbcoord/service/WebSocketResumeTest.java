package io.github.fdbcoord.service;

import io.github.fdbcoord.client.CoordinationClient;
import io.github.fdbcoord.client.CoordinationClient.Grant;
import io.vertx.core.Vertx;
import io.vertx.core.http.WebSocket;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketConnectOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static io.github.fdbcoord.service.ServiceFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A WebSocket subscriber that comes back resumes after the last event it got: what it missed is
 * replayed from the event log, in order, before live events; a resume point the log no longer
 * holds gets an explicit gap message.
 */
@ExtendWith(VertxExtension.class)
class WebSocketResumeTest {
  private ServiceFixture f;
  private WebSocketClient http;
  private CoordinationClient c;

  @BeforeEach
  void start(Vertx vertx) {
    f = ServiceFixture.start(vertx);
    http = vertx.createWebSocketClient();
    c = f.client;
  }

  @AfterEach
  void stop() {
    await(http.close());
    f.close();
  }

  /** One connection and what it received. */
  private final class Connection {
    final WebSocket ws;
    final BlockingQueue<JsonObject> received = new LinkedBlockingQueue<>();

    Connection() {
      ws = await(http.connect(new WebSocketConnectOptions().setHost("127.0.0.1").setPort(f.service.httpPort())
          .setURI("/ws")));
      ws.textMessageHandler(t -> received.add(new JsonObject(t)));
    }

    void send(JsonObject msg) {
      await(ws.writeTextMessage(msg.encode()));
    }

    JsonObject next() throws InterruptedException {
      JsonObject m = received.poll(10, TimeUnit.SECONDS);
      assertNotNull(m, "no WebSocket message within 10 s");
      return m;
    }

    /** The next message of a type other than "subscribed". */
    JsonObject nextEventOrGap() throws InterruptedException {
      JsonObject m;
      do {
        m = next();
      } while ("subscribed".equals(m.getString("type")));
      return m;
    }
  }

  @Test
  void aSubscriberThatComesBackGetsWhatItMissedInOrder() throws Exception {
    Connection first = new Connection();
    first.send(new JsonObject().put("subscribe", new JsonArray().add("resumed")));
    assertEquals("subscribed", first.next().getString("type"));
    Grant a = await(c.tryAcquire("resumed", "a"));
    JsonObject acquired = first.nextEventOrGap();
    assertEquals("ACQUIRED", acquired.getString("event"));
    await(first.ws.close());

    // While it is away: a release, another holder, a hand-off through a queue, a release.
    await(c.release("resumed", "a", a.token().get()));
    Grant b = await(c.tryAcquire("resumed", "b"));
    await(c.tryAcquire("resumed", "c"));
    await(c.release("resumed", "b", b.token().get()));
    await(c.release("resumed", "c", null));

    Connection second = new Connection();
    second.send(new JsonObject().put("subscribe", new JsonArray().add("resumed"))
        .put("after", new JsonObject().put("resumed", acquired.getString("sequence"))));
    List<String> replayed = new ArrayList<>();
    String last = acquired.getString("sequence");
    for (int i = 0; i < 4; i++) {
      JsonObject e = second.nextEventOrGap();
      assertEquals("lock", e.getString("type"), e::encode);
      assertTrue(e.getString("sequence").compareTo(last) > 0, "in sequence order: " + e.encode());
      last = e.getString("sequence");
      replayed.add(e.getString("event") + " " + e.getString("owner"));
    }
    assertEquals(List.of("RELEASED null", "ACQUIRED b", "HANDED_OFF c", "RELEASED null"), replayed);
    // Live events follow the replay.
    await(c.tryAcquire("resumed", "d"));
    JsonObject live = second.nextEventOrGap();
    assertEquals("ACQUIRED", live.getString("event"));
    assertEquals("d", live.getString("owner"));
    await(second.ws.close());
  }

  @Test
  void aResumePointTheLogNoLongerHoldsIsReportedAsAGap() throws Exception {
    await(c.tryAcquire("gapped", "a"));
    Connection conn = new Connection();
    String unknown = "00000000000000000001";
    conn.send(new JsonObject().put("subscribe", new JsonArray().add("gapped"))
        .put("after", new JsonObject().put("gapped", unknown)));
    JsonObject gap = conn.nextEventOrGap();
    assertEquals("gap", gap.getString("type"), gap::encode);
    assertEquals("gapped", gap.getString("mutex"));
    assertEquals(unknown, gap.getString("after"));
    JsonObject retained = conn.nextEventOrGap();
    assertEquals("ACQUIRED", retained.getString("event"), "what the log still holds follows the gap");
    await(conn.ws.close());
  }

  @Test
  void aSubscriberGetsEveryEventSinceAPositionTakenBeforeItKnewTheMutex() throws Exception {
    var web = io.vertx.ext.web.client.WebClient.create(f.vertx);
    var answer = await(web.get(f.service.httpPort(), "127.0.0.1", "/events/position").send());
    assertEquals(200, answer.statusCode(), answer::bodyAsString);
    String position = answer.bodyAsJsonObject().getString("position");
    assertEquals(20, position.length(), position);

    Grant a = await(c.tryAcquire("late", "a"));
    await(c.release("late", "a", a.token().get()));
    Grant b = await(c.tryAcquire("late", "b"));
    await(c.tryAcquire("late", "c"));
    await(c.release("late", "b", b.token().get()));

    Connection conn = new Connection();
    conn.send(new JsonObject().put("subscribe", new JsonArray().add("late")).put("since", position));
    List<String> replayed = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      JsonObject e = conn.nextEventOrGap();
      assertEquals("lock", e.getString("type"), e::encode);
      assertTrue(e.getString("sequence").compareTo(position) > 0, e::encode);
      replayed.add(e.getString("event") + " " + e.getString("owner"));
    }
    assertEquals(List.of("ACQUIRED a", "RELEASED null", "ACQUIRED b", "HANDED_OFF c"), replayed);
    await(c.release("late", "c", null));
    JsonObject live = conn.nextEventOrGap();
    assertEquals("RELEASED", live.getString("event"), "live events follow, each once");
    assertEquals(null, conn.received.poll(300, TimeUnit.MILLISECONDS), "nothing twice");

    conn.send(new JsonObject().put("subscribe", new JsonArray().add("other")).put("since", "not-a-position"));
    JsonObject error = conn.nextEventOrGap();
    assertEquals("error", error.getString("type"), error::encode);
    assertTrue(error.getString("message").contains("since"), error::encode);
    await(conn.ws.close());
    web.close();
  }

  @Test
  void aResumePointOfAnotherMutexIsRefused() throws Exception {
    Connection conn = new Connection();
    conn.send(new JsonObject().put("subscribe", new JsonArray().add("m1"))
        .put("after", new JsonObject().put("m2", "00000000000000000001")));
    JsonObject error = conn.next();
    assertEquals("error", error.getString("type"));
    assertTrue(error.getString("message").contains("not subscribed"), error::encode);
    await(conn.ws.close());
  }
}
