package io.github.fdbcoord.service;

import static io.github.fdbcoord.service.ServiceFixture.await;
import static io.github.fdbcoord.service.WaiterLivenessTest.eventually;
import static io.github.fdbcoord.service.HttpAnswers.ok;
import static io.github.fdbcoord.service.HttpAnswers.refused;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetSocket;
import io.vertx.ext.web.client.HttpRequest;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import io.vertx.core.http.PoolOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The read-write lock's HTTP routes ({@code /rwlocks/{name}...}), answered by its event-bus actions: the same
 * replies, the same failure codes as statuses with {@code {error, message}} bodies, the same token and Origin checks
 * as every route, and an acquire that lives as long as its HTTP request.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class ReadWriteLockHttpTest {
  private static final long LONG_LEASE_MS = 60_000;

  private Vertx vertx;
  private ServiceFixture f;

  private void start(JsonObject http, long leaseMs) {
    vertx = Vertx.vertx();
    JsonObject config = ServiceFixture.baseConfig();
    config.getJsonObject("mutex").put("maxAcquireTimeoutMs", 50_000);
    config.put("rwlock", new JsonObject().put("leaseMs", leaseMs));
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

  /**
   * A client with a connection for every contender and its release: the fixture's client pools 5 connections, and
   * a holder's release queued behind 5 waiting acquires would wait for one of them to end.
   */
  private WebClient manyConnections() {
    return WebClient.create(vertx, new WebClientOptions().setDefaultHost("127.0.0.1")
        .setDefaultPort(f.service.httpPort()), new PoolOptions().setHttp1MaxSize(64));
  }

  private JsonObject state(String name) {
    JsonObject reply = ok(await(f.web().get("/rwlocks/" + name).send()));
    assertEquals(name, reply.getString("name"), reply.encode());
    return reply;
  }

  private List<String> queue(String name) {
    return state(name).getJsonArray("queue").stream().map(w -> ((JsonObject) w).getString("owner")).toList();
  }

  private List<String> holders(String name) {
    return state(name).getJsonArray("holders").stream().map(h -> ((JsonObject) h).getString("owner")).sorted()
        .toList();
  }

  private static JsonObject grant(JsonObject reply) {
    return new JsonObject().put("owner", reply.getString("owner")).put("token", reply.getString("token"));
  }

  @Test
  void acquireHeartbeatDowngradeReleaseOverHttp() throws Exception {
    start(new JsonObject(), LONG_LEASE_MS);
    assertEquals(List.of(), holders("h"));
    JsonObject w = ok(await(post("/rwlocks/h/acquire?mode=write", new JsonObject().put("owner", "w")
        .put("timeoutMs", 5_000))));
    assertEquals("h", w.getString("name"));
    assertEquals("write", w.getString("mode"));
    assertEquals(LONG_LEASE_MS, w.getLong("leaseMs"));
    assertEquals(new JsonArray().add(new JsonObject().put("owner", "w").put("mode", "write")
        .put("token", w.getString("token"))), state("h").getJsonArray("holders"));
    assertEquals(w.getString("token"), ok(await(post("/rwlocks/h/heartbeat", grant(w)))).getString("token"));

    refused(await(post("/rwlocks/h/acquire", new JsonObject().put("owner", "r").put("mode", "read")
        .put("timeoutMs", 200))), 409, "timed_out");
    assertEquals(List.of(), queue("h"), "the reader that timed out left the queue");
    Future<HttpResponse<Buffer>> r = post("/rwlocks/h/acquire", new JsonObject().put("owner", "r")
        .put("mode", "read").put("timeoutMs", 20_000));
    eventually("'r' queues", Duration.ofSeconds(20), () -> queue("h").equals(List.of("r")));
    refused(await(post("/rwlocks/h/release", grant(w).put("owner", "r"))), 409, "not_held");
    refused(await(post("/rwlocks/h/release", grant(w).put("token", "000000000000000000010000"))), 409, "not_held");

    JsonObject down = ok(await(post("/rwlocks/h/downgrade", grant(w))));
    assertEquals("read", down.getString("mode"));
    assertTrue(down.getString("token").compareTo(w.getString("token")) > 0);
    JsonObject reader = ok(await(r));
    assertEquals("read", reader.getString("mode"));
    assertEquals(List.of("r", "w"), holders("h"));
    refused(await(post("/rwlocks/h/heartbeat", grant(w))), 409, "not_held");

    assertTrue(ok(await(post("/rwlocks/h/release", grant(down)))).getBoolean("released"));
    ok(await(post("/rwlocks/h/release?mode=read", grant(reader))));
    assertEquals(List.of(), holders("h"));
    refused(await(post("/rwlocks/h/release", grant(reader))), 409, "not_held");
  }

  @Test
  void badInputIsA400NamingWhatWasWrong() {
    start(new JsonObject(), LONG_LEASE_MS);
    String longName = "x".repeat(1_025);
    JsonObject reader = new JsonObject().put("owner", "a").put("mode", "read");
    List<Object[]> cases = List.of(
        new Object[] {"/rwlocks/e/acquire", new JsonObject().put("mode", "read"), "'owner'"},
        new Object[] {"/rwlocks/e/acquire", reader.copy().put("owner", 7), "'owner'"},
        new Object[] {"/rwlocks/e/acquire", reader.copy().put("owner", " "), "'owner'"},
        new Object[] {"/rwlocks/e/acquire", new JsonObject().put("owner", "a"), "'mode'"},
        new Object[] {"/rwlocks/e/acquire?mode=shared", new JsonObject().put("owner", "a"), "'mode'"},
        new Object[] {"/rwlocks/e/acquire?mode=write", reader, "'mode'"},
        new Object[] {"/rwlocks/e/acquire", reader.copy().put("timeoutMs", "soon"), "'timeoutMs'"},
        new Object[] {"/rwlocks/e/acquire", reader.copy().put("timeoutMs", -5), "'timeoutMs'"},
        new Object[] {"/rwlocks/e/acquire", reader.copy().put("timeoutMs", 50_001), "'timeoutMs'"},
        new Object[] {"/rwlocks/%20%20/acquire", reader, "'name'"},
        new Object[] {"/rwlocks/" + longName + "/acquire", reader, "name"},
        new Object[] {"/rwlocks/e/release", new JsonObject().put("owner", "a"), "'token'"},
        new Object[] {"/rwlocks/e/release", new JsonObject().put("owner", "a").put("token", "zz"), "'token'"},
        new Object[] {"/rwlocks/e/release", new JsonObject().put("token", "000000000000000000010000"), "'owner'"},
        new Object[] {"/rwlocks/e/heartbeat", new JsonObject().put("owner", "a").put("token", 12), "'token'"},
        new Object[] {"/rwlocks/e/downgrade", new JsonObject().put("owner", "a"), "'token'"});
    for (Object[] c : cases) {
      JsonObject body = refused(await(post((String) c[0], (JsonObject) c[1])), 400, "bad_request");
      assertTrue(body.getString("message").contains((String) c[2]), () -> c[0] + " " + c[1] + ": " + body.encode());
    }
    refused(await(f.web().post("/rwlocks/e/acquire").putHeader("Content-Type", "application/json")
        .sendBuffer(Buffer.buffer("{\"owner\": "))), 400, "bad_request");
    refused(await(f.web().post("/rwlocks/e/acquire").putHeader("Content-Type", "application/json")
        .sendBuffer(Buffer.buffer("[\"a\"]"))), 400, "bad_request");
    refused(await(f.web().request(HttpMethod.DELETE, "/rwlocks/e").send()), 405, "method_not_allowed");
    assertEquals(new JsonObject().put("name", "e").put("holders", new JsonArray()).put("queue", new JsonArray()),
        state("e"), "no malformed acquire queued or granted anything");
  }

  /** A waiting writer is not overtaken by readers that come after it, though they would share the lock's reader. */
  @Test
  void aWaitingWriterIsNotOvertakenByLaterReaders() throws Exception {
    start(new JsonObject(), LONG_LEASE_MS);
    JsonObject first = ok(await(post("/rwlocks/s/acquire?mode=read", new JsonObject().put("owner", "r0"))));
    Future<HttpResponse<Buffer>> writer = post("/rwlocks/s/acquire?mode=write", new JsonObject().put("owner", "w")
        .put("timeoutMs", 30_000));
    eventually("'w' queues", Duration.ofSeconds(20), () -> queue("s").equals(List.of("w")));
    Future<HttpResponse<Buffer>> later = post("/rwlocks/s/acquire?mode=read", new JsonObject().put("owner", "r1")
        .put("timeoutMs", 30_000));
    eventually("'r1' queues behind the writer", Duration.ofSeconds(20), () -> queue("s").equals(List.of("w", "r1")));
    assertEquals(List.of("r0"), holders("s"));
    ok(await(post("/rwlocks/s/release", grant(first))));
    JsonObject w = ok(await(writer));
    assertEquals(List.of("w"), holders("s"));
    assertFalse(later.isComplete(), "the later reader got in with the writer");
    ok(await(post("/rwlocks/s/release", grant(w))));
    assertEquals("r1", ok(await(later)).getString("owner"));
  }

  /**
   * 10 readers and 4 writers over HTTP, twice each: every grant checks, as it is made, that no writer holds with
   * anyone else.
   */
  @Test
  void manyReadersAndWritersOverHttpNeverAWriterWithAnyoneElse() throws Exception {
    start(new JsonObject(), LONG_LEASE_MS);
    WebClient web = manyConnections();
    AtomicInteger reading = new AtomicInteger();
    AtomicInteger writing = new AtomicInteger();
    ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
    Set<String> tokens = ConcurrentHashMap.newKeySet();
    List<Future<Void>> done = new ArrayList<>();
    for (int i = 0; i < 14; i++) {
      String mode = i < 10 ? "read" : "write";
      Promise<Void> finished = Promise.promise();
      done.add(finished.future());
      contend(web, "c" + i, mode, 2, reading, writing, violations, tokens, finished);
    }
    Future.all(done).await(80, TimeUnit.SECONDS);
    assertEquals(List.of(), List.copyOf(violations));
    assertEquals(28, tokens.size(), "every grant has a token of its own");
    assertEquals(List.of(), holders("many"));
    assertEquals(List.of(), queue("many"));
    web.close();
  }

  private void contend(WebClient web, String owner, String mode, int rounds, AtomicInteger reading, AtomicInteger writing,
      ConcurrentLinkedQueue<String> violations, Set<String> tokens, Promise<Void> finished) {
    if (rounds == 0) {
      finished.complete();
      return;
    }
    web.post("/rwlocks/many/acquire?mode=" + mode).sendJsonObject(new JsonObject().put("owner", owner)
            .put("timeoutMs", 50_000))
        .compose(r -> {
          if (r.statusCode() != 200) {
            return Future.failedFuture(r.statusCode() + " " + r.bodyAsString());
          }
          JsonObject granted = r.bodyAsJsonObject();
          tokens.add(granted.getString("token"));
          boolean fine = mode.equals("write") ? writing.incrementAndGet() == 1 && reading.get() == 0
              : reading.incrementAndGet() > 0 && writing.get() == 0;
          if (!fine) {
            violations.add(owner + " (" + mode + ") holds while " + writing.get() + " write, " + reading.get() + " read");
          }
          (mode.equals("write") ? writing : reading).decrementAndGet();
          return web.post("/rwlocks/many/release").sendJsonObject(grant(granted));
        }).onComplete(ar -> {
          if (ar.failed() || ar.result().statusCode() != 200) {
            finished.fail(new AssertionError(owner + " failed: " + (ar.failed() ? ar.cause() : ar.result().bodyAsString())));
          } else {
            contend(web, owner, mode, rounds - 1, reading, writing, violations, tokens, finished);
          }
        });
  }

  /** A holder that stops heartbeating is replaced after its lease by the writer waiting over HTTP. */
  @Test
  void aSilentHolderIsHandedOffAfterItsLease() {
    start(new JsonObject(), 4_000);
    JsonObject silent = ok(await(post("/rwlocks/x/acquire?mode=read", new JsonObject().put("owner", "silent"))));
    JsonObject next = ok(await(post("/rwlocks/x/acquire?mode=write", new JsonObject().put("owner", "next")
        .put("timeoutMs", 40_000))));
    assertTrue(next.getString("token").compareTo(silent.getString("token")) > 0);
    assertEquals(List.of("next"), holders("x"));
    refused(await(post("/rwlocks/x/heartbeat", grant(silent))), 409, "not_held");
    ok(await(post("/rwlocks/x/release", grant(next))));
  }

  /** The acquire lives as long as its request: a client that disconnects leaves the queue at once, holding nothing. */
  @Test
  void anAcquireWhoseClientDisconnectsLeavesTheQueue() throws Exception {
    start(new JsonObject(), LONG_LEASE_MS);
    NetClient net = vertx.createNetClient();
    JsonObject holder = ok(await(post("/rwlocks/d/acquire?mode=write", new JsonObject().put("owner", "holder"))));
    NetSocket gone = await(net.connect(f.service.httpPort(), "127.0.0.1"));
    String body = new JsonObject().put("owner", "gone").put("mode", "write").put("timeoutMs", 20_000).encode();
    await(gone.write("POST /rwlocks/d/acquire HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        + "Content-Type: application/json\r\nContent-Length: " + body.length() + "\r\n\r\n" + body));
    eventually("'gone' queues", Duration.ofSeconds(20), () -> queue("d").equals(List.of("gone")));
    Future<HttpResponse<Buffer>> live = post("/rwlocks/d/acquire?mode=read", new JsonObject().put("owner", "live")
        .put("timeoutMs", 20_000));
    eventually("'live' queues", Duration.ofSeconds(20), () -> queue("d").equals(List.of("gone", "live")));

    await(gone.close());
    // Within a fraction of the acquires' 20 s timeouts and the 60 s lease: the abandon, not a timeout or lease.
    eventually("'gone' left the queue", Duration.ofSeconds(10), () -> queue("d").equals(List.of("live")));
    ok(await(post("/rwlocks/d/release", grant(holder))));
    assertEquals("live", ok(await(live)).getString("owner"));
    assertEquals(List.of("live"), holders("d"), "the departed client holds nothing");
    await(net.close());
  }

  /** The routes pass the filters every route passes: the bearer token, then the Origin check for changes. */
  @Test
  void theTokenAndOriginChecksApply() {
    start(new JsonObject().put("host", "0.0.0.0").put("token", "s3cret"), LONG_LEASE_MS);
    JsonObject acquire = new JsonObject().put("owner", "a").put("mode", "write").put("timeoutMs", 5_000);
    refused(await(post("/rwlocks/sec/acquire", acquire)), 401, "unauthorized");
    refused(await(f.web().get("/rwlocks/sec").send()), 401, "unauthorized");
    HttpResponse<Buffer> foreign = await(f.web().post("/rwlocks/sec/acquire").putHeader("Origin", "http://evil.example")
        .putHeader("Authorization", "Bearer s3cret").sendJsonObject(acquire));
    assertEquals(403, foreign.statusCode(), foreign.bodyAsString());
    JsonObject empty = new JsonObject().put("name", "sec").put("holders", new JsonArray()).put("queue", new JsonArray());
    assertEquals(empty, ok(await(authorized(f.web().get("/rwlocks/sec")).send())), "nothing acquired without the token");

    JsonObject a = ok(await(authorized(f.web().post("/rwlocks/sec/acquire")).sendJsonObject(acquire)));
    refused(await(f.web().post("/rwlocks/sec/release").sendJsonObject(grant(a))), 401, "unauthorized");
    refused(await(authorized(f.web().post("/rwlocks/sec/release")).putHeader("Origin", "http://evil.example")
        .sendJsonObject(grant(a))), 403, "forbidden_origin");
    assertEquals("a", ok(await(authorized(f.web().get("/rwlocks/sec")).send())).getJsonArray("holders")
        .getJsonObject(0).getString("owner"));
    ok(await(authorized(f.web().post("/rwlocks/sec/release")).sendJsonObject(grant(a))));
    assertEquals(empty, ok(await(authorized(f.web().get("/rwlocks/sec")).send())));
  }

  private static HttpRequest<Buffer> authorized(HttpRequest<Buffer> request) {
    return request.putHeader("Authorization", "Bearer s3cret");
  }
}
