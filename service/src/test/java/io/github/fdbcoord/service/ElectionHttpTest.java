package io.github.fdbcoord.service;

import static io.github.fdbcoord.service.ServiceFixture.await;
import static io.github.fdbcoord.service.WaiterLivenessTest.eventually;
import static io.github.fdbcoord.service.HttpAnswers.ok;
import static io.github.fdbcoord.service.HttpAnswers.refused;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.QueueEntry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.WebSocket;
import io.vertx.core.http.WebSocketClient;
import io.vertx.core.http.WebSocketConnectOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetSocket;
import io.vertx.ext.web.client.HttpRequest;
import io.vertx.ext.web.client.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The election's HTTP routes ({@code /elections/{name}...}), answered by its event-bus actions: the same replies,
 * the same failure codes as statuses with {@code {error, message}} bodies, the same token and Origin checks as
 * every route, and a campaign that lives as long as its HTTP request.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ElectionHttpTest {
  private Vertx vertx;
  private ServiceFixture f;

  private void start(JsonObject http) {
    vertx = Vertx.vertx();
    JsonObject config = ServiceFixture.baseConfig();
    // A lease far longer than a test: a leader the test does not heartbeat keeps its leadership under load.
    config.getJsonObject("mutex").put("leaseMs", 60_000);
    config.getJsonObject("http").mergeIn(http);
    f = ServiceFixture.start(vertx, config, null);
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

  private Future<HttpResponse<Buffer>> post(String path, JsonObject body) {
    return f.web().post(path).sendJsonObject(body);
  }

  private JsonObject leaderOf(String name) {
    JsonObject reply = ok(await(f.web().get("/elections/" + name).send()));
    assertEquals(name, reply.getString("election"), reply.encode());
    assertTrue(reply.containsKey("leader"), reply.encode());
    return reply.getJsonObject("leader");
  }

  private List<String> line(String name) {
    return await(f.client.mutexState(name)).queue().stream().map(QueueEntry::owner).toList();
  }

  private static JsonObject leadership(JsonObject won) {
    return new JsonObject().put("candidate", won.getString("candidate")).put("epoch", won.getString("epoch"));
  }

  @Test
  void campaignLeaderHeartbeatResignOverHttp() throws Exception {
    start(new JsonObject());
    assertNull(leaderOf("h"));
    JsonObject a = ok(await(post("/elections/h/campaign", new JsonObject().put("candidate", "a").put("timeoutMs", 5_000))));
    assertEquals("h", a.getString("election"));
    assertEquals("a", a.getString("candidate"));
    assertEquals(60_000, a.getLong("leaseMs"));
    assertEquals(new JsonObject().put("candidate", "a").put("epoch", a.getString("epoch")), leaderOf("h"));
    assertEquals(a.getString("epoch"), ok(await(post("/elections/h/heartbeat", leadership(a)))).getString("epoch"));

    refused(await(post("/elections/h/campaign", new JsonObject().put("candidate", "b").put("timeoutMs", 200))),
        409, "timed_out");
    assertEquals(List.of(), line("h"), "the candidate that timed out left the line");

    Future<HttpResponse<Buffer>> b = post("/elections/h/campaign", new JsonObject().put("candidate", "b")
        .put("timeoutMs", 20_000));
    eventually("'b' is in line", Duration.ofSeconds(20), () -> line("h").equals(List.of("b")));
    refused(await(post("/elections/h/resign", new JsonObject().put("candidate", "b").put("epoch", a.getString("epoch")))),
        409, "not_owner");
    JsonObject resigned = ok(await(post("/elections/h/resign", leadership(a))));
    assertTrue(resigned.getBoolean("resigned"), resigned.encode());
    JsonObject won = ok(await(b));
    assertEquals("b", won.getString("candidate"));
    assertEquals(new JsonObject().put("candidate", "b").put("epoch", won.getString("epoch")), resigned.getJsonObject("leader"));
    assertTrue(FencingToken.parse(won.getString("epoch")).isNewerThan(FencingToken.parse(a.getString("epoch"))));
    assertEquals("b", leaderOf("h").getString("candidate"));

    ok(await(post("/elections/h/resign", leadership(won))));
    assertNull(leaderOf("h"));
    refused(await(post("/elections/h/resign", new JsonObject().put("candidate", "b")
        .put("epoch", "00000000000000000001"))), 409, "not_held");
  }

  @Test
  void handOverToANamedCandidateOverHttp() throws Exception {
    start(new JsonObject());
    JsonObject a = ok(await(post("/elections/ho/campaign", new JsonObject().put("candidate", "a").put("timeoutMs", 5_000))));
    Future<HttpResponse<Buffer>> b = post("/elections/ho/campaign", new JsonObject().put("candidate", "b")
        .put("timeoutMs", 20_000));
    eventually("'b' is in line", Duration.ofSeconds(20), () -> line("ho").equals(List.of("b")));
    Future<HttpResponse<Buffer>> c = post("/elections/ho/campaign", new JsonObject().put("candidate", "c")
        .put("timeoutMs", 20_000));
    eventually("'c' is in line", Duration.ofSeconds(20), () -> line("ho").equals(List.of("b", "c")));

    JsonObject notQueued = refused(await(post("/elections/ho/handover", leadership(a).put("successor", "zed"))),
        409, "not_queued");
    assertTrue(notQueued.getString("message").contains("'zed'"), notQueued.encode());
    assertEquals(a.getString("epoch"), leaderOf("ho").getString("epoch"), "the leader stays");
    JsonObject missing = refused(await(post("/elections/ho/handover", leadership(a))), 400, "bad_request");
    assertTrue(missing.getString("message").contains("'successor'"), missing.encode());
    JsonObject self = refused(await(post("/elections/ho/handover", leadership(a).put("successor", "a"))), 400,
        "bad_request");
    assertTrue(self.getString("message").contains("'successor'"), self.encode());
    refused(await(post("/elections/ho/handover", leadership(a).put("successor", 5))), 400, "bad_request");

    JsonObject handedOver = ok(await(post("/elections/ho/handover", leadership(a).put("successor", "c"))));
    assertTrue(handedOver.getBoolean("handedOver"), handedOver.encode());
    JsonObject won = ok(await(c));
    assertEquals("c", won.getString("candidate"));
    assertEquals(new JsonObject().put("candidate", "c").put("epoch", won.getString("epoch")),
        handedOver.getJsonObject("leader"));
    assertEquals("c", leaderOf("ho").getString("candidate"));
    assertEquals(List.of("b"), line("ho"), "b keeps its place");
    refused(await(post("/elections/ho/handover", leadership(a).put("successor", "b"))), 409, "not_owner");
    ok(await(post("/elections/ho/resign", leadership(won))));
    assertEquals("b", ok(await(b)).getString("candidate"));
  }

  @Test
  void badInputIsA400NamingWhatWasWrong() {
    start(new JsonObject());
    String longName = "x".repeat(1_025);
    List<Object[]> cases = List.of(
        new Object[] {"/elections/e/campaign", new JsonObject(), "'candidate'"},
        new Object[] {"/elections/e/campaign", new JsonObject().put("candidate", 7), "'candidate'"},
        new Object[] {"/elections/e/campaign", new JsonObject().put("candidate", "a").put("timeoutMs", "soon"), "'timeoutMs'"},
        new Object[] {"/elections/e/campaign", new JsonObject().put("candidate", "a").put("timeoutMs", -5), "'timeoutMs'"},
        new Object[] {"/elections/e/campaign", new JsonObject().put("candidate", "a").put("timeoutMs", 20_001), "'timeoutMs'"},
        new Object[] {"/elections/" + longName + "/campaign", new JsonObject().put("candidate", "a"), "election"},
        new Object[] {"/elections/e/resign", new JsonObject().put("candidate", "a"), "'epoch'"},
        new Object[] {"/elections/e/resign", new JsonObject().put("candidate", "a").put("epoch", "zz"), "'epoch'"},
        new Object[] {"/elections/e/resign", new JsonObject().put("epoch", "00000000000000000001"), "'candidate'"},
        new Object[] {"/elections/e/heartbeat", new JsonObject().put("candidate", "a").put("epoch", 12), "'epoch'"});
    for (Object[] c : cases) {
      JsonObject body = refused(await(post((String) c[0], (JsonObject) c[1])), 400, "bad_request");
      assertTrue(body.getString("message").contains((String) c[2]), () -> c[0] + " " + c[1] + ": " + body.encode());
    }
    refused(await(f.web().post("/elections/e/campaign").putHeader("Content-Type", "application/json")
        .sendBuffer(Buffer.buffer("{\"candidate\": "))), 400, "bad_request");
    refused(await(f.web().post("/elections/e/campaign").putHeader("Content-Type", "application/json")
        .sendBuffer(Buffer.buffer("[\"a\"]"))), 400, "bad_request");
    refused(await(f.web().request(HttpMethod.DELETE, "/elections/e").send()), 405, "method_not_allowed");
    assertEquals(List.of(), line("e"), "no malformed campaign queued anyone");
  }

  /** The campaign lives as long as its request: a client that disconnects leaves the line at once. */
  @Test
  void aCampaignWhoseClientDisconnectsLeavesTheLine() throws Exception {
    start(new JsonObject());
    NetClient net = vertx.createNetClient();
    JsonObject holder = ok(await(post("/elections/d/campaign", new JsonObject().put("candidate", "holder"))));
    NetSocket gone = await(net.connect(f.service.httpPort(), "127.0.0.1"));
    String body = new JsonObject().put("candidate", "gone").put("timeoutMs", 20_000).encode();
    await(gone.write("POST /elections/d/campaign HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        + "Content-Type: application/json\r\nContent-Length: " + body.length() + "\r\n\r\n" + body));
    eventually("'gone' is in line", Duration.ofSeconds(20), () -> line("d").equals(List.of("gone")));
    Future<HttpResponse<Buffer>> live = post("/elections/d/campaign", new JsonObject().put("candidate", "live")
        .put("timeoutMs", 20_000));
    eventually("'live' is in line", Duration.ofSeconds(20), () -> line("d").equals(List.of("gone", "live")));

    await(gone.close());
    // Within a fraction of the campaigns' 20 s timeouts and the 60 s lease: the abandon, not a timeout or lease.
    eventually("'gone' left the line", Duration.ofSeconds(10), () -> line("d").equals(List.of("live")));
    JsonObject resigned = ok(await(post("/elections/d/resign", leadership(holder))));
    assertEquals("live", resigned.getJsonObject("leader").getString("candidate"));
    assertEquals("live", ok(await(live)).getString("candidate"));
    await(net.close());
  }

  /** The routes pass the filters every route passes: the bearer token, then the Origin check for changes. */
  @Test
  void theTokenAndOriginChecksApply() {
    start(new JsonObject().put("host", "0.0.0.0").put("token", "s3cret"));
    JsonObject campaign = new JsonObject().put("candidate", "a").put("timeoutMs", 5_000);
    refused(await(post("/elections/sec/campaign", campaign)), 401, "unauthorized");
    refused(await(f.web().get("/elections/sec").send()), 401, "unauthorized");
    HttpResponse<Buffer> foreign = await(f.web().post("/elections/sec/campaign").putHeader("Origin", "http://evil.example")
        .sendJsonObject(campaign));
    assertTrue(foreign.statusCode() == 401 || foreign.statusCode() == 403, foreign.bodyAsString());
    assertEquals(List.of(), line("sec"));
    assertNull(await(f.client.mutexState("sec")).owner().orElse(null), "nothing was campaigned without the token");

    JsonObject a = ok(await(authorized(f.web().post("/elections/sec/campaign")).sendJsonObject(campaign)));
    assertEquals("a", a.getString("candidate"));
    assertEquals("a", ok(await(authorized(f.web().get("/elections/sec")).send())).getJsonObject("leader")
        .getString("candidate"));
    refused(await(f.web().post("/elections/sec/resign").sendJsonObject(leadership(a))), 401, "unauthorized");
    assertEquals("a", await(f.client.mutexState("sec")).owner().orElseThrow().owner());
    ok(await(authorized(f.web().post("/elections/sec/resign")).sendJsonObject(leadership(a))));
  }

  /** Without a token, a page of another site cannot campaign or resign; programs (no Origin) can. */
  @Test
  void anotherOriginCannotCampaignOrResign() {
    start(new JsonObject());
    JsonObject campaign = new JsonObject().put("candidate", "a").put("timeoutMs", 5_000);
    refused(await(f.web().post("/elections/o/campaign").putHeader("Origin", "http://evil.example")
        .sendJsonObject(campaign)), 403, "forbidden_origin");
    assertNull(await(f.client.mutexState("o")).owner().orElse(null));
    JsonObject a = ok(await(post("/elections/o/campaign", campaign)));
    refused(await(f.web().post("/elections/o/resign").putHeader("Origin", "http://evil.example")
        .sendJsonObject(leadership(a))), 403, "forbidden_origin");
    // Reading who leads is no change.
    assertEquals(200, await(f.web().get("/elections/o").putHeader("Origin", "http://evil.example").send()).statusCode());
    assertEquals("a", leaderOf("o").getString("candidate"));
  }

  /** Leader changes are the lock events of the election's mutex: the WebSocket's subscription tells them. */
  @Test
  void leaderChangesAreTheMutexsLockEventsOnTheWebSocket() throws Exception {
    start(new JsonObject());
    BlockingQueue<JsonObject> received = new LinkedBlockingQueue<>();
    WebSocketClient http = vertx.createWebSocketClient();
    WebSocket ws = await(http.connect(new WebSocketConnectOptions().setHost("127.0.0.1")
        .setPort(f.service.httpPort()).setURI("/ws")));
    ws.textMessageHandler(t -> received.add(new JsonObject(t)));
    await(ws.writeTextMessage(new JsonObject().put("subscribe", new JsonArray().add("w")).encode()));
    assertEquals("subscribed", next(received).getString("type"));

    JsonObject a = ok(await(post("/elections/w/campaign", new JsonObject().put("candidate", "a"))));
    JsonObject acquired = next(received);
    assertEquals("ACQUIRED", acquired.getString("event"), acquired.encode());
    assertEquals("a", acquired.getString("owner"));
    assertEquals(a.getString("epoch"), acquired.getString("token"), "the event's token is the epoch");

    Future<HttpResponse<Buffer>> b = post("/elections/w/campaign", new JsonObject().put("candidate", "b"));
    eventually("'b' is in line", Duration.ofSeconds(20), () -> line("w").equals(List.of("b")));
    ok(await(post("/elections/w/resign", leadership(a))));
    JsonObject handedOff = next(received);
    assertEquals("HANDED_OFF", handedOff.getString("event"), handedOff.encode());
    assertEquals("a", handedOff.getString("previousOwner"));
    assertEquals("b", handedOff.getString("owner"));
    assertEquals(ok(await(b)).getString("epoch"), handedOff.getString("token"));
    await(ws.close());
    await(http.close());
  }

  private static JsonObject next(BlockingQueue<JsonObject> received) throws InterruptedException {
    JsonObject m = received.poll(20, TimeUnit.SECONDS);
    assertNotNull(m, "no WebSocket message within 20 s");
    return m;
  }

  private static HttpRequest<Buffer> authorized(HttpRequest<Buffer> request) {
    return request.putHeader("Authorization", "Bearer s3cret");
  }
}
