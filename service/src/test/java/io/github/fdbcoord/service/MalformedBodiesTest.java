package io.github.fdbcoord.service;

import static io.github.fdbcoord.service.ServiceFixture.await;
import static io.github.fdbcoord.service.eventbus.FailureCodes.BAD_REQUEST;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.fdbcoord.client.wire.WireProtocol;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.http.WebSocket;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketConnectOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Every event-bus address the service consumes answers a body that is not a JSON object (a string,
 * a number, an array) with the documented 400 {@code bad_request} failure, not with silence (a handler
 * that cast the body threw, and the asker waited out its timeout).
 */
@ExtendWith(VertxExtension.class)
class MalformedBodiesTest {
  private static final List<Object> MALFORMED = List.of("not json", 42, new JsonArray().add("path"));

  private ServiceFixture f;

  @BeforeEach
  void start(Vertx vertx) {
    f = ServiceFixture.start(vertx);
  }

  @AfterEach
  void stop() {
    f.close();
  }

  @Test
  void theStoreAddressAnswersBadRequest() {
    String store = f.service.coordinationConfig().storeAddress();
    for (Object body : MALFORMED) {
      assertBadRequest(store, null, body);
    }
    // Still the store's identity for a host that asks properly.
    JsonObject identity = await(f.vertx.eventBus().<JsonObject>request(store, new JsonObject())).body();
    assertEquals(f.service.storeId(), identity.getString("storeId"));
  }

  @Test
  void everyLayerAddressAnswersBadRequest() {
    CoordinationConfig config = f.service.coordinationConfig();
    // A real action of each layer: the body, not the header, is what is wrong.
    List<List<String>> addressAndAction = List.of(
        List.of(config.directoryAddress(), "create"),
        List.of(config.allocatorAddress(), "allocate"),
        List.of(config.internerAddress(), "intern"),
        List.of(config.mutexAddress(), "release"),
        List.of(config.electionAddress(), "campaign"),
        List.of(config.semaphoreAddress(), "acquire"),
        List.of(config.readWriteLockAddress(), "acquire"));
    for (List<String> target : addressAndAction) {
      for (Object body : MALFORMED) {
        assertBadRequest(target.get(0), target.get(1), body);
      }
    }
  }

  @Test
  void aMutexEventsAddressAnswersBadRequestAndKeepsTheSubscriptionServed() throws Exception {
    BlockingQueue<JsonObject> received = new LinkedBlockingQueue<>();
    WebSocketClient http = f.vertx.createWebSocketClient();
    try {
      WebSocket ws = await(http.connect(new WebSocketConnectOptions().setHost("127.0.0.1")
          .setPort(f.service.httpPort()).setURI("/ws")));
      ws.textMessageHandler(t -> received.add(new JsonObject(t)));
      await(ws.writeTextMessage(new JsonObject().put("subscribe", new JsonArray().add("m1")).encode()));
      assertEquals("subscribed", next(received).getString("type"));

      for (Object body : MALFORMED) {
        assertBadRequest(f.service.coordinationConfig().mutexEventsAddress("m1"), null, body);
      }
      // The malformed messages never reached the client: the next one it gets is the real lock event.
      await(f.client.tryAcquire("m1", "a"));
      JsonObject event = next(received);
      assertEquals("lock", event.getString("type"), event::encode);
      assertEquals("ACQUIRED", event.getString("event"), event::encode);
      await(ws.close());
    } finally {
      await(http.close());
    }
  }

  private static JsonObject next(BlockingQueue<JsonObject> received) throws InterruptedException {
    JsonObject m = received.poll(10, TimeUnit.SECONDS);
    assertNotNull(m, "no WebSocket message within 10 s");
    return m;
  }

  private void assertBadRequest(String address, String action, Object body) {
    DeliveryOptions options = new DeliveryOptions().setSendTimeout(10_000);
    if (action != null) {
      options.addHeader(WireProtocol.ACTION_HEADER, action);
    }
    Throwable failure;
    try {
      Object reply = await(f.vertx.eventBus().request(address, body, options)).body();
      throw new AssertionError(address + " answered " + body + " with " + reply);
    } catch (RuntimeException e) {
      failure = e instanceof ReplyException ? e : e.getCause();
    }
    String what = address + " " + action + " with the " + body.getClass().getSimpleName() + " " + body;
    ReplyException reply = assertInstanceOf(ReplyException.class, failure, what);
    assertEquals(ReplyFailure.RECIPIENT_FAILURE, reply.failureType(), () -> what + ": " + reply.getMessage());
    assertEquals(BAD_REQUEST, reply.failureCode(), () -> what + ": " + reply.getMessage());
    assertTrue(reply.getMessage().startsWith("bad_request: "), () -> what + ": " + reply.getMessage());
  }
}
