package io.github.fdbcoord.service.process;

import io.github.fdbcoord.testing.ChildJvm;
import io.github.fdbcoord.testing.FdbBinaries;
import io.github.fdbcoord.testing.FdbTestServer;
import io.github.fdbcoord.testing.NativeClient;
import io.github.fdbcoord.testing.SharedFdb;
import io.github.fdbcoord.testing.StorageEngine;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A store that stops answering (the single {@code ssd} fdbserver under the service SIGSTOPped, as a
 * hung machine would be) leaves no request of the service unanswered: every primitive's route is
 * answered 503 {@code store_unavailable} within its own bound (an acquire within its {@code timeoutMs}
 * plus a slack, every other request within the service's request timeout), and an acquire answered
 * so never becomes a grant once the store is back: the next acquirer gets the mutex at once instead
 * of after a ghost's lease, and the tryAcquire answered so holds nothing (without the withdrawal it
 * held the mutex here: its transaction committed once the server resumed, before the test looked).
 * When those late transactions commit is up to FoundationDB's retry back-off, so this test cannot
 * force the late grants; {@code SlowStoreBoundsTest} makes them every time. Skipped, saying why,
 * without fdbserver binaries.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
@Tag("slow")
class StoreOutageTest {
  /** Long enough that a ghost grant would be seen: the next acquirer would wait this long for the reaper. */
  private static final int LOCK_LEASE_MS = 15_000;
  /** The service's default request timeout (CoordinationConfig's {@code requestTimeoutMs}). */
  private static final long REQUEST_TIMEOUT_MS = 5_000;
  /** What the issue asks of an acquire with timeoutMs 2000 while the store is stopped. */
  private static final long ACQUIRE_BOUND_MS = 5_000;
  /** Java's exit status after SIGTERM once the shutdown hooks ran (128 + 15). */
  private static final int SIGTERM_STATUS = 143;
  /** Docker's default time between SIGTERM and SIGKILL ({@code docker stop -t}). */
  private static final long STOP_GRACE_MS = 10_000;
  /**
   * HTTP, scheduling and a busy machine's share on top of the service's own bound: answers came up to
   * 7.5 s at load 30-40 (a flake hunt beside five other sessions' builds), 2.5 s past the bound; before
   * the bound they took 30 s or never came, which this margin still tells apart.
   */
  private static final long MARGIN_MS = 4_000;

  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private FdbBinaries binaries;

  @BeforeEach
  void needsBinaries() {
    String reason = NativeClient.unloadableReason();
    Assumptions.assumeTrue(reason == null, () -> "no real FoundationDB for this test: " + reason);
    binaries = FdbBinaries.find();
    Assumptions.assumeTrue(binaries != null, () -> "no fdbserver binaries to stop (looked at "
        + FdbBinaries.searched() + "); " + SharedFdb.description());
  }

  private record Answer(String what, int status, String reason, long millis, String body) {
    JsonObject json() {
      return new JsonObject(body);
    }
  }

  @Test
  void everyPrimitiveIsAnsweredStoreUnavailableInTimeAndAFailedAcquireLeavesNoGhost() throws Exception {
    try (FdbTestServer fdb = FdbTestServer.startSingle(binaries, StorageEngine.SSD);
         ServiceProcess service = ServiceProcess.start("service-outage", config(fdb))) {
      int port = service.awaitReady();
      JsonObject held = send(port, "POST", "/mutexes/held/acquire", new JsonObject().put("owner", "holder")
          .put("timeoutMs", 5000)).json();
      assertTrue(held.getBoolean("held", false), "held before the outage: " + held);
      String token = held.getString("token");
      assertEquals(201, send(port, "POST", "/directories", new JsonObject().put("path", new JsonArray().add("before")))
          .status(), "the directory layer answers before the outage");

      fdb.pauseProcess(0);
      Map<String, CompletableFuture<Answer>> calls = new LinkedHashMap<>();
      calls.put("acquire", timed(port, "POST", "/mutexes/contended/acquire",
          new JsonObject().put("owner", "answered-during-outage").put("timeoutMs", 2000)));
      calls.put("tryAcquire", timed(port, "POST", "/mutexes/other/acquire",
          new JsonObject().put("owner", "tried-during-outage").put("wait", false)));
      calls.put("release", timed(port, "POST", "/mutexes/held/release",
          new JsonObject().put("owner", "holder").put("token", token)));
      calls.put("heartbeat", timed(port, "POST", "/mutexes/held/heartbeat",
          new JsonObject().put("owner", "holder").put("token", token)));
      calls.put("state", timed(port, "GET", "/mutexes/contended", null));
      calls.put("directory create", timed(port, "POST", "/directories",
          new JsonObject().put("path", new JsonArray().add("during"))));
      calls.put("directory open", timed(port, "GET", "/directories/never-opened", null));
      calls.put("allocate", timed(port, "POST", "/allocators/ids/allocate", new JsonObject()));
      calls.put("intern", timed(port, "POST", "/interners/ns/intern",
          new JsonObject().put("strings", new JsonArray().add("during-the-outage"))));
      Map<String, Answer> answers = new LinkedHashMap<>();
      for (Map.Entry<String, CompletableFuture<Answer>> call : calls.entrySet()) {
        answers.put(call.getKey(), call.getValue().get(60, TimeUnit.SECONDS));
      }
      fdb.resumeProcess(0);
      System.out.println("answers while the store was stopped: " + answers);
      for (Map.Entry<String, Answer> answer : answers.entrySet()) {
        Answer a = answer.getValue();
        long bound = (answer.getKey().equals("acquire") ? ACQUIRE_BOUND_MS : REQUEST_TIMEOUT_MS) + MARGIN_MS;
        assertEquals(503, a.status(), a.toString());
        assertEquals("store_unavailable", a.reason(), a.toString());
        assertTrue(a.millis() <= bound, "answered within " + bound + " ms: " + a);
      }

      // The store is back: the acquirer answered with a failure must not hold or wait for the mutex.
      long back = System.nanoTime();
      JsonObject next = null;
      while (System.nanoTime() - back < TimeUnit.SECONDS.toNanos(60)) {
        Answer a = send(port, "POST", "/mutexes/contended/acquire", new JsonObject().put("owner", "next")
            .put("timeoutMs", 20_000));
        if (a.status() == 200) {
          next = a.json();
          break;
        }
        // 503 store_unavailable while the cluster recovers from the stop: asked again.
      }
      long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - back);
      System.out.println("after the store came back, the next acquirer held the mutex after " + waitedMs + " ms: " + next);
      assertTrue(next != null && next.getBoolean("held", false), "the next acquirer got the mutex: " + next);
      assertTrue(waitedMs < LOCK_LEASE_MS / 2, "no ghost held the mutex for its lease: the next acquirer waited "
          + waitedMs + " ms (lease " + LOCK_LEASE_MS + " ms)");
      // The late grant is withdrawn when its commit's answer reaches the service, which may come after
      // the next acquirer's (a fresh-clone CI run saw it held at this point): wait for it, well within
      // the lease a ghost would hold it for.
      JsonObject other = send(port, "GET", "/mutexes/other", null).json();
      while (other.getValue("owner") != null && System.nanoTime() - back < TimeUnit.MILLISECONDS.toNanos(LOCK_LEASE_MS / 2)) {
        Thread.sleep(50);
        other = send(port, "GET", "/mutexes/other", null).json();
      }
      assertTrue(other.getValue("owner") == null, "the tryAcquire answered with a failure holds nothing "
          + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - back) + " ms after the store came back: " + other);
    }
  }

  /**
   * A deployment stops the service with SIGTERM and kills it a grace period later (Docker's default:
   * 10 s): while the store is stopped, the release of a held mutex and the node's leave cannot
   * complete, and the process must still exit in that time, as a SIGTERM of a healthy service does.
   */
  @ParameterizedTest(name = "clustered: {0}")
  @ValueSource(booleans = {false, true})
  void aSigtermDuringTheOutageEndsTheProcessWithinTheGracePeriod(boolean clustered) throws Exception {
    try (FdbTestServer fdb = FdbTestServer.startSingle(binaries, StorageEngine.SSD)) {
      // Bounds below their defaults (5 s and 7 s), so that a loaded machine's slow JVM exit keeps
      // within the grace period: the test checks that the stop honours them, whatever their values.
      JsonObject config = config(fdb).put("requestTimeoutMs", 2500).put("shutdownTimeoutMs", 4000);
      if (clustered) {
        config.put("cluster", new JsonObject().put("enabled", true).put("eventBusHost", "127.0.0.1")
            .put("nodeLeaseMs", 30_000).put("failureDetection", false));
      }
      try (ServiceProcess service = ServiceProcess.start("service-outage-stop", config)) {
        int port = service.awaitReady();
        JsonObject held = send(port, "POST", "/mutexes/held/acquire", new JsonObject().put("owner", "holder")
            .put("timeoutMs", 5000)).json();
        assertTrue(held.getBoolean("held", false), "held before the outage: " + held);

        fdb.pauseProcess(0);
        try {
          long terminated = System.nanoTime();
          service.jvm().terminate();
          ChildJvm.Exit exit = service.jvm().awaitExit(Duration.ofSeconds(90));
          long exitedAfter = TimeUnit.NANOSECONDS.toMillis(exit.nanoTime() - terminated);
          System.out.printf("SIGTERM during a store outage (clustered: %s): exited in %d ms (status %d)%n",
              clustered, exitedAfter, exit.status());
          assertEquals(SIGTERM_STATUS, exit.status(), "exit status; its last lines:\n" + service.jvm().tail(40));
          assertTrue(exitedAfter < STOP_GRACE_MS, "the service exited " + exitedAfter + " ms after SIGTERM (grace "
              + STOP_GRACE_MS + " ms); its last lines:\n" + service.jvm().tail(40));
          System.out.println("its last lines:\n" + service.jvm().tail(20));
          // Which of the stop's steps the bound cuts short depends on the mode: the release of the grant
          // (its own bound, the request timeout), or, on a cluster, the whole stop (the node's leave first).
          assertTrue(service.jvm().hasLine(l -> l.contains("could not release 1 mutex grant") && l.contains("'held' held by 'holder'")
                  || l.contains("not done within shutdownTimeoutMs")),
              "the service said why it did not stop cleanly; "
              + "its last lines:\n" + service.jvm().tail(40));
        } finally {
          fdb.resumeProcess(0);
        }
      }
    }
  }

  private static JsonObject config(FdbTestServer fdb) {
    JsonObject config = ServiceProcess.clusterConfig(fdb.clusterFile(), List.of("fdb-coord-test", "outage-" + UUID.randomUUID()));
    config.getJsonObject("mutex").put("leaseMs", LOCK_LEASE_MS).put("heartbeatIntervalMs", 1000);
    return config;
  }

  private CompletableFuture<Answer> timed(int port, String method, String path, JsonObject body) {
    return CompletableFuture.supplyAsync(() -> send(port, method, path, body));
  }

  private Answer send(int port, String method, String path, JsonObject body) {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(40)).header("Content-Type", "application/json");
    b = body == null ? b.GET() : b.method(method, HttpRequest.BodyPublishers.ofString(body.encode()));
    String what = method + " " + path + (body == null ? "" : " " + body.encode());
    long start = System.nanoTime();
    try {
      HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
      long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      String reason = r.statusCode() >= 400 ? new JsonObject(r.body()).getString("error") : null;
      return new Answer(what, r.statusCode(), reason, millis, r.body());
    } catch (IOException e) {
      return new Answer(what, 0, "no answer: " + e, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), "");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
