package io.github.fdbcoord.service;

import com.apple.foundationdb.directory.DirectoryLayer;
import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.Tuple;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.embedded.EmbeddedOptions;
import io.github.fdbcoord.mutex.MutexOptions;
import io.github.fdbcoord.mutex.MutexService;
import io.github.fdbcoord.semaphore.SemaphoreOptions;
import io.github.fdbcoord.semaphore.SemaphoreService;
import io.github.fdbcoord.rwlock.LockMode;
import io.github.fdbcoord.rwlock.ReadWriteGrant;
import io.github.fdbcoord.rwlock.ReadWriteLockOptions;
import io.github.fdbcoord.rwlock.ReadWriteLockService;
import io.github.fdbcoord.service.eventbus.FailureCodes;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static io.github.fdbcoord.service.ServiceFixture.await;
import static io.github.fdbcoord.service.WaiterLivenessTest.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A store whose commits take far longer than a request may (the embedded engine's commit latency:
 * reads answer at once, every commit takes {@link #COMMIT_LATENCY}): requests are answered 503
 * {@code store_unavailable} within their bound, and an acquire (or tryAcquire) answered so is
 * withdrawn once its commit lands: its grant is released at once, not held for the lease. The real
 * FoundationDB stopped under the service is {@code process.StoreOutageTest}.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SlowStoreBoundsTest {
  private static final Duration COMMIT_LATENCY = Duration.ofSeconds(2);
  private static final long REQUEST_TIMEOUT_MS = 600;
  /** Long enough that a grant kept would be seen: the test waits far less for it to go. */
  private static final long LEASE_MS = 120_000;
  /** Scheduling and a busy machine's share on top of the service's own bound. */
  private static final long MARGIN_MS = 1_500;

  // One service for the class: it starts through slow commits, and each test uses names of its own.
  private static Vertx vertx;
  private static EmbeddedDatabase db;
  private static ServiceFixture f;
  /** The service's mutexes read straight from the store, for their event log. */
  private static MutexService log;

  @BeforeAll
  static void start() {
    vertx = Vertx.vertx();
    db = EmbeddedDatabase.open(EmbeddedOptions.builder().commitLatency(COMMIT_LATENCY).build());
    JsonObject config = ServiceFixture.baseConfig().put("requestTimeoutMs", REQUEST_TIMEOUT_MS);
    config.getJsonObject("mutex").put("leaseMs", LEASE_MS).put("heartbeatIntervalMs", 1000);
    config.put("semaphore", new JsonObject().put("leaseMs", LEASE_MS).put("heartbeatIntervalMs", 1000));
    config.put("rwlock", new JsonObject().put("leaseMs", LEASE_MS).put("heartbeatIntervalMs", 1000));
    f = ServiceFixture.start(vertx, config, db);
    List<String> mutexes = new ArrayList<>(f.root);
    mutexes.add("mutex");
    log = MutexService.create(db, DirectoryLayer.getDefault().open(db, mutexes).join(),
        MutexOptions.builder().reaperEnabled(false).build());
    // The first request loads the HTTP client's classes: its time is no answer's.
    await(f.web().get("/no-such-route").send());
  }

  @AfterAll
  static void stop() {
    try {
      log.close();
      await(vertx.undeploy(f.deploymentId));
      await(vertx.close());
    } finally {
      db.close();
    }
  }

  @Test
  void aCommitPastTheRequestTimeoutIsAnsweredStoreUnavailableInTime() {
    long start = System.nanoTime();
    f.failure(f.client.allocatorAddress(), "allocate", new JsonObject().put("name", "ids"),
        FailureCodes.UNAVAILABLE, "store_unavailable");
    assertWithin(REQUEST_TIMEOUT_MS + MARGIN_MS, start, "allocate");
    start = System.nanoTime();
    HttpResponse<Buffer> r = await(f.web().post("/interners/ns/intern").sendJsonObject(new JsonObject()
        .put("strings", new JsonArray().add("slow"))));
    assertStoreUnavailable(r);
    assertWithin(REQUEST_TIMEOUT_MS + MARGIN_MS, start, "HTTP intern");
  }

  @Test
  void anAcquireAnsweredStoreUnavailableNeverStaysAGrant() throws InterruptedException {
    long start = System.nanoTime();
    HttpResponse<Buffer> r = await(f.web().post("/mutexes/m/acquire").sendJsonObject(new JsonObject()
        .put("owner", "answered-failed").put("timeoutMs", 200)));
    assertStoreUnavailable(r);
    // Its own wait plus the slack after it (the request timeout, being shorter than 2 s).
    assertWithin(200 + REQUEST_TIMEOUT_MS + MARGIN_MS, start, "acquire");
    assertGrantedThenReleased("m", "answered-failed");
  }

  @Test
  void aTryAcquireAnsweredStoreUnavailableNeverStaysAGrant() throws InterruptedException {
    f.failure(f.client.mutexAddress(), "tryAcquire", new JsonObject().put("name", "t").put("owner", "tried"),
        FailureCodes.UNAVAILABLE, "store_unavailable");
    assertGrantedThenReleased("t", "tried");
  }

  @Test
  void anAcquireAllAnsweredStoreUnavailableNeverStaysAGrant() throws InterruptedException {
    long start = System.nanoTime();
    f.failure(f.client.mutexAddress(), "acquireAll", new JsonObject().put("names", new JsonArray().add("all-2")
        .add("all-1")).put("owner", "all-late").put("timeoutMs", 200), FailureCodes.UNAVAILABLE, "store_unavailable");
    assertWithin(200 + REQUEST_TIMEOUT_MS + MARGIN_MS, start, "acquireAll");
    // The late commit took both mutexes; both are released at once, in one transaction.
    assertGrantedThenReleased("all-1", "all-late");
    assertGrantedThenReleased("all-2", "all-late");
  }

  @Test
  void aCampaignAnsweredStoreUnavailableNeverStaysALeadership() throws InterruptedException {
    // The election is the mutex of the same name: its late leadership is the mutex's late grant, resigned at once.
    f.failure(f.client.electionAddress(), "campaign", new JsonObject().put("election", "e").put("candidate", "late")
        .put("timeoutMs", 200), FailureCodes.UNAVAILABLE, "store_unavailable");
    assertGrantedThenReleased("e", "late");
  }

  @Test
  void aSemaphoreAcquireAnsweredStoreUnavailableNeverStaysAGrant() throws InterruptedException {
    long start = System.nanoTime();
    HttpResponse<Buffer> r = await(f.web().post("/semaphores/s/acquire").sendJsonObject(new JsonObject()
        .put("permits", 1).put("owner", "answered-failed").put("timeoutMs", 200)));
    assertStoreUnavailable(r);
    assertWithin(200 + REQUEST_TIMEOUT_MS + MARGIN_MS, start, "semaphore acquire");
    // The semaphore keeps no event log: its generation key, changed by every grant and every end of one and left
    // when the semaphore is unused again, shows that the late commit granted a permit; the state, that it ended.
    // Both read straight from the store, without the service's request bound (a read waits for commits in flight).
    List<String> path = new ArrayList<>(f.root);
    path.add("semaphore");
    Subspace root = DirectoryLayer.getDefault().open(db, path).join();
    byte[] generation = root.pack(Tuple.from("s", "s", "generation"));
    try (SemaphoreService semaphores = SemaphoreService.create(db, root,
        SemaphoreOptions.builder().reaperEnabled(false).build())) {
      eventually("the late grant to answered-failed released", COMMIT_LATENCY.multipliedBy(6), () -> {
        boolean granted = db.readAsync(tr -> tr.get(generation)).join() != null;
        SemaphoreService.SemaphoreState state = semaphores.state("s").join();
        return granted && state.holders().isEmpty() && state.waiters().isEmpty();
      }, () -> String.valueOf(semaphores.state("s").join()));
    }
  }

  @Test
  void aReadWriteLockAcquireAnsweredStoreUnavailableNeverStaysAGrant() throws Exception {
    long start = System.nanoTime();
    f.failure(f.client.readWriteLockAddress(), "acquire", new JsonObject().put("name", "rw").put("owner", "late")
        .put("mode", "write").put("timeoutMs", 200), FailureCodes.UNAVAILABLE, "store_unavailable");
    assertWithin(200 + REQUEST_TIMEOUT_MS + MARGIN_MS, start, "rwlock acquire");
    // The late write grant, kept, would hold the lock for the whole lease: another writer gets it long before.
    List<String> path = new ArrayList<>(f.root);
    path.add("rwlock");
    try (ReadWriteLockService probe = ReadWriteLockService.create(db, DirectoryLayer.getDefault().open(db, path).join(),
        ReadWriteLockOptions.builder().reaperEnabled(false).lease(Duration.ofMillis(LEASE_MS)).build())) {
      ReadWriteGrant next = probe.awaitGrant("rw", "next", LockMode.WRITE, COMMIT_LATENCY.multipliedBy(6))
          .get(COMMIT_LATENCY.multipliedBy(10).toMillis(), TimeUnit.MILLISECONDS);
      assertEquals(List.of("next"), probe.state("rw").join().holders().stream().map(ReadWriteGrant::owner).toList());
      probe.release(next).join();
    }
  }

  @Test
  void theRequestTimeoutIsConfiguredAndChecked() {
    assertEquals(Duration.ofSeconds(5), CoordinationConfig.from(new JsonObject()).requestTimeout());
    assertEquals(Duration.ofMillis(REQUEST_TIMEOUT_MS),
        CoordinationConfig.from(new JsonObject().put("requestTimeoutMs", REQUEST_TIMEOUT_MS)).requestTimeout());
    for (Object bad : List.of(0, -1, "soon")) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> CoordinationConfig.from(new JsonObject().put("requestTimeoutMs", bad)));
      assertTrue(e.getMessage().contains("requestTimeoutMs"), e.getMessage());
    }
  }

  /**
   * The late commit made {@code owner} the holder (the store did what it was asked, after the
   * requester was told it failed), and that grant was released at once, not expired after the
   * lease. Read from the mutex's event log in the store: a read waits for the commits in flight, so
   * the state between the two commits cannot be seen through the service.
   */
  private static void assertGrantedThenReleased(String name, String owner) throws InterruptedException {
    List<LockEvent> events = new ArrayList<>();
    eventually("the late grant to " + owner + " released", COMMIT_LATENCY.multipliedBy(6), () -> {
      events.clear();
      events.addAll(log.events(name, FencingToken.of(new byte[FencingToken.LENGTH]), 100).join());
      return events.stream().anyMatch(e -> e.type() == LockEvent.Type.RELEASED
          && e.previousOwner().equals(Optional.of(owner)));
    }, events::toString);
    assertEquals(LockEvent.Type.ACQUIRED, events.get(0).type(), events.toString());
    assertEquals(Optional.of(owner), events.get(0).owner(), events.toString());
    assertEquals(2, events.size(), "granted, then released: " + events);
  }

  private static void assertStoreUnavailable(HttpResponse<Buffer> r) {
    assertTrue(r.statusCode() == 503 && "store_unavailable".equals(r.bodyAsJsonObject().getString("error")),
        r.statusCode() + " " + r.bodyAsString());
  }

  private static void assertWithin(long boundMs, long startNanos, String what) {
    long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    assertTrue(ms <= boundMs, what + " answered after " + ms + " ms, bound " + boundMs + " ms");
  }
}
