package io.github.fdbcoord.service;

import static io.github.fdbcoord.service.ServiceFixture.await;
import static io.github.fdbcoord.service.WaiterLivenessTest.eventually;
import static io.github.fdbcoord.service.HttpAnswers.ok;
import static io.github.fdbcoord.service.HttpAnswers.refused;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.fdbcoord.api.FencingToken;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetSocket;
import io.vertx.ext.web.client.HttpRequest;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The semaphore's HTTP routes ({@code /semaphores/{name}...}), answered by its event-bus actions: the same replies,
 * the same failure codes as statuses with {@code {error, message}} bodies, the same token and Origin checks as every
 * route, and an acquire that lives as long as its HTTP request.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class SemaphoreHttpTest {
  private static final long LONG_LEASE_MS = 60_000;

  private Vertx vertx;
  private ServiceFixture f;

  private void start(long leaseMs, JsonObject http) {
    vertx = Vertx.vertx();
    JsonObject config = SemaphoreEventBusTest.config(leaseMs);
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

  /**
   * A client with a connection for every request of the contention test at once: the default pool (5) would keep a
   * holder's release queued behind waiting acquires, which wait for that release.
   */
  private WebClient web;

  private WebClient web() {
    if (web == null) {
      web = WebClient.create(vertx, new WebClientOptions().setDefaultHost("127.0.0.1")
          .setDefaultPort(f.service.httpPort()), new PoolOptions().setHttp1MaxSize(32));
    }
    return web;
  }

  private Future<HttpResponse<Buffer>> post(String path, JsonObject body) {
    return web().post(path).sendJsonObject(body);
  }

  private Future<HttpResponse<Buffer>> acquire(String name, int permits, String owner, long timeoutMs) {
    return post("/semaphores/" + name + "/acquire", new JsonObject().put("permits", permits).put("owner", owner)
        .put("timeoutMs", timeoutMs));
  }

  private JsonObject state(String name) {
    JsonObject s = ok(await(f.web().get("/semaphores/" + name).send()));
    assertEquals(name, s.getString("name"), s.encode());
    return s;
  }

  private List<String> holders(String name) {
    return state(name).getJsonArray("holders").stream().map(h -> ((JsonObject) h).getString("owner")).sorted()
        .toList();
  }

  private List<Object> waiters(String name) {
    return state(name).getJsonArray("waiters").getList();
  }

  private static JsonObject grant(JsonObject held) {
    return new JsonObject().put("owner", held.getString("owner")).put("token", held.getString("token"));
  }

  @Test
  void acquireHeartbeatReleaseAndStateOverHttp() throws Exception {
    start(LONG_LEASE_MS, new JsonObject());
    assertEquals(0, state("h").getInteger("permits"));
    JsonObject a = ok(await(acquire("h", 2, "a", 5_000)));
    assertEquals("h", a.getString("name"));
    assertEquals(2, a.getInteger("permits"));
    assertEquals(LONG_LEASE_MS, a.getLong("leaseMs"));
    JsonObject b = ok(await(acquire("h", 2, "b", 5_000)));
    assertEquals(List.of("a", "b"), holders("h"));
    assertEquals(a.getString("token"), ok(await(post("/semaphores/h/heartbeat", grant(a)))).getString("token"));

    refused(await(acquire("h", 2, "c", 200)), 409, "timed_out");
    assertEquals(List.of(), waiters("h"), "the owner that timed out left the queue");
    refused(await(acquire("h", 5, "c", 0)), 409, "conflict");

    Future<HttpResponse<Buffer>> c = acquire("h", 2, "c", 20_000);
    eventually("'c' is in line", Duration.ofSeconds(20), () -> waiters("h").equals(List.of("c")));
    Future<HttpResponse<Buffer>> d = acquire("h", 2, "d", 20_000);
    eventually("'d' is in line", Duration.ofSeconds(20), () -> waiters("h").equals(List.of("c", "d")));
    refused(await(post("/semaphores/h/release", grant(a).put("owner", "c"))), 409, "not_held");
    assertTrue(ok(await(post("/semaphores/h/release", grant(a)))).getBoolean("released"));
    JsonObject cHeld = ok(await(c));
    assertEquals("c", cHeld.getString("owner"), "the first waiter gets the freed permit");
    assertTrue(FencingToken.parse(cHeld.getString("token")).isNewerThan(FencingToken.parse(b.getString("token"))));
    assertFalse(d.isComplete(), "'d' waits behind 'c'");
    assertEquals(List.of("b", "c"), holders("h"));
    ok(await(post("/semaphores/h/release", grant(b))));
    assertEquals("d", ok(await(d)).getString("owner"));

    // Released already: no error (idempotent, as the mutex's release), nothing handed on twice.
    assertTrue(ok(await(post("/semaphores/h/release", grant(b)))).getBoolean("released"));
    assertEquals(List.of("c", "d"), holders("h"));
    refused(await(post("/semaphores/h/heartbeat", grant(a))), 409, "not_held");
  }

  @Test
  void badInputIsA400NamingWhatWasWrong() {
    start(LONG_LEASE_MS, new JsonObject());
    String longName = "x".repeat(1_025);
    JsonObject ok = new JsonObject().put("permits", 2).put("owner", "a");
    List<Object[]> cases = List.of(
        new Object[] {"/semaphores/e/acquire", new JsonObject().put("permits", 2), "'owner'"},
        new Object[] {"/semaphores/e/acquire", ok.copy().put("owner", 7), "'owner'"},
        new Object[] {"/semaphores/e/acquire", new JsonObject().put("owner", "a"), "'permits'"},
        new Object[] {"/semaphores/e/acquire", ok.copy().put("permits", 0), "'permits'"},
        new Object[] {"/semaphores/e/acquire", ok.copy().put("permits", 10_001), "'permits'"},
        new Object[] {"/semaphores/e/acquire", ok.copy().put("timeoutMs", -5), "'timeoutMs'"},
        new Object[] {"/semaphores/e/acquire", ok.copy().put("timeoutMs", "soon"), "'timeoutMs'"},
        new Object[] {"/semaphores/" + longName + "/acquire", ok, "name"},
        new Object[] {"/semaphores/e/release", new JsonObject().put("owner", "a"), "'token'"},
        new Object[] {"/semaphores/e/release", new JsonObject().put("owner", "a").put("token", "zz"), "'token'"},
        new Object[] {"/semaphores/e/release", new JsonObject().put("token", "00000000000000000001"), "'owner'"},
        new Object[] {"/semaphores/e/heartbeat", new JsonObject().put("owner", "a").put("token", 12), "'token'"});
    for (Object[] c : cases) {
      JsonObject body = refused(await(post((String) c[0], (JsonObject) c[1])), 400, "bad_request");
      assertTrue(body.getString("message").contains((String) c[2]), () -> c[0] + " " + c[1] + ": " + body.encode());
    }
    refused(await(f.web().post("/semaphores/e/acquire").putHeader("Content-Type", "application/json")
        .sendBuffer(Buffer.buffer("{\"owner\": "))), 400, "bad_request");
    refused(await(f.web().post("/semaphores/e/acquire").putHeader("Content-Type", "application/json")
        .sendBuffer(Buffer.buffer("[\"a\"]"))), 400, "bad_request");
    refused(await(f.web().request(HttpMethod.DELETE, "/semaphores/e").send()), 405, "method_not_allowed");
    assertEquals(0, state("e").getInteger("permits"), "no malformed acquire queued or granted anything");
  }

  /** 12 clients on a 3-permit semaphore over HTTP: at most 3 hold at once, as they and the state see it. */
  @Test
  void manyClientsAtOnceNeverMoreHoldersThanPermits() throws Exception {
    start(LONG_LEASE_MS, new JsonObject());
    int permits = 3;
    AtomicInteger holding = new AtomicInteger();
    ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
    AtomicBoolean running = new AtomicBoolean(true);
    AtomicInteger polls = new AtomicInteger();
    Promise<Void> pollerDone = Promise.promise();
    poll(permits, running, polls, violations, pollerDone);
    List<Future<Void>> done = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      Promise<Void> finished = Promise.promise();
      done.add(finished.future());
      rounds("c" + i, permits, 2, holding, violations, finished);
    }
    try {
      Future.all(done).await(70, TimeUnit.SECONDS);
    } finally {
      running.set(false);
    }
    pollerDone.future().await(20, TimeUnit.SECONDS);
    assertEquals(List.of(), List.copyOf(violations));
    assertTrue(polls.get() > 0, "the state was read while the clients ran");
    assertEquals(0, state("many").getInteger("permits"));
  }

  private void poll(int permits, AtomicBoolean running, AtomicInteger polls, ConcurrentLinkedQueue<String> violations,
      Promise<Void> done) {
    if (!running.get()) {
      done.complete();
      return;
    }
    web().get("/semaphores/many").send().onComplete(ar -> {
      if (ar.succeeded() && ar.result().statusCode() == 200) {
        polls.incrementAndGet();
        int holders = ar.result().bodyAsJsonObject().getJsonArray("holders").size();
        if (holders > permits) {
          violations.add(holders + " holders: " + ar.result().bodyAsString());
        }
      } else {
        violations.add("state failed: " + (ar.succeeded() ? ar.result().bodyAsString() : ar.cause()));
      }
      poll(permits, running, polls, violations, done);
    });
  }

  private void rounds(String owner, int permits, int left, AtomicInteger holding,
      ConcurrentLinkedQueue<String> violations, Promise<Void> finished) {
    if (left == 0) {
      finished.complete();
      return;
    }
    acquire("many", permits, owner, 45_000).compose(r -> {
      if (r.statusCode() != 200) {
        return Future.failedFuture(owner + " was refused: " + r.bodyAsString());
      }
      int now = holding.incrementAndGet();
      if (now > permits) {
        violations.add(owner + " holds while " + (now - 1) + " others do");
      }
      JsonObject mine = grant(r.bodyAsJsonObject());
      return post("/semaphores/many/heartbeat", mine).compose(beat -> {
        if (beat.statusCode() != 200) {
          violations.add(owner + "'s heartbeat: " + beat.bodyAsString());
        }
        holding.decrementAndGet();
        return post("/semaphores/many/release", mine);
      });
    }).onComplete(ar -> {
      if (ar.failed() || ar.result().statusCode() != 200) {
        finished.fail(new AssertionError(owner + " failed: " + (ar.failed() ? ar.cause() : ar.result().bodyAsString())));
      } else {
        rounds(owner, permits, left - 1, holding, violations, finished);
      }
    });
  }

  @Test
  void aHolderWhoseLeaseLapsesIsHandedOff() {
    start(5_000, new JsonObject());
    JsonObject silent = ok(await(acquire("x", 1, "silent", 5_000)));
    JsonObject next = ok(await(acquire("x", 1, "next", 40_000)));
    assertEquals("next", next.getString("owner"));
    assertEquals(List.of("next"), holders("x"));
    refused(await(post("/semaphores/x/heartbeat", grant(silent))), 409, "not_held");
    refused(await(post("/semaphores/x/release", grant(silent))), 409, "not_held");
    ok(await(post("/semaphores/x/release", grant(next))));
  }

  /** The acquire lives as long as its request: a client that disconnects leaves the queue and holds nothing. */
  @Test
  void anAcquireWhoseClientDisconnectsLeavesTheQueueAndNoGrant() throws Exception {
    start(LONG_LEASE_MS, new JsonObject());
    NetClient net = vertx.createNetClient();
    JsonObject holder = ok(await(acquire("d", 1, "holder", 5_000)));
    NetSocket gone = await(net.connect(f.service.httpPort(), "127.0.0.1"));
    String body = new JsonObject().put("permits", 1).put("owner", "gone").put("timeoutMs", 20_000).encode();
    await(gone.write("POST /semaphores/d/acquire HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        + "Content-Type: application/json\r\nContent-Length: " + body.length() + "\r\n\r\n" + body));
    eventually("'gone' is in line", Duration.ofSeconds(20), () -> waiters("d").equals(List.of("gone")));
    Future<HttpResponse<Buffer>> live = acquire("d", 1, "live", 20_000);
    eventually("'live' is in line", Duration.ofSeconds(20), () -> waiters("d").equals(List.of("gone", "live")));

    await(gone.close());
    // Within a fraction of the acquires' 20 s timeouts and the 60 s lease: the abandon, not a timeout or lease.
    eventually("'gone' left the line", Duration.ofSeconds(10), () -> waiters("d").equals(List.of("live")));
    ok(await(post("/semaphores/d/release", grant(holder))));
    assertEquals("live", ok(await(live)).getString("owner"));
    assertEquals(List.of("live"), holders("d"), "the departed client holds nothing");
    await(net.close());
  }

  /** The routes pass the filters every route passes: the bearer token, then the Origin check for changes. */
  @Test
  void theTokenAndOriginChecksApply() {
    start(LONG_LEASE_MS, new JsonObject().put("host", "0.0.0.0").put("token", "s3cret"));
    JsonObject acquire = new JsonObject().put("permits", 1).put("owner", "a").put("timeoutMs", 5_000);
    refused(await(post("/semaphores/sec/acquire", acquire)), 401, "unauthorized");
    refused(await(f.web().get("/semaphores/sec").send()), 401, "unauthorized");
    HttpResponse<Buffer> foreign = await(f.web().post("/semaphores/sec/acquire")
        .putHeader("Origin", "http://evil.example").sendJsonObject(acquire));
    assertTrue(foreign.statusCode() == 401 || foreign.statusCode() == 403, foreign.bodyAsString());
    JsonObject a = ok(await(authorized(f.web().post("/semaphores/sec/acquire")).sendJsonObject(acquire)));
    assertEquals(List.of("a"), ok(await(authorized(f.web().get("/semaphores/sec")).send())).getJsonArray("holders")
        .stream().map(h -> ((JsonObject) h).getString("owner")).toList(), "only the authorized acquire holds");
    refused(await(f.web().post("/semaphores/sec/release").sendJsonObject(grant(a))), 401, "unauthorized");
    refused(await(authorized(f.web().post("/semaphores/sec/release")).putHeader("Origin", "http://evil.example")
        .sendJsonObject(grant(a))), 403, "forbidden_origin");
    ok(await(authorized(f.web().post("/semaphores/sec/release")).sendJsonObject(grant(a))));
  }

  private static HttpRequest<Buffer> authorized(HttpRequest<Buffer> request) {
    return request.putHeader("Authorization", "Bearer s3cret");
  }
}
