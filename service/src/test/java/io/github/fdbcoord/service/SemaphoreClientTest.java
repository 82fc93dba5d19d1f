package io.github.fdbcoord.service;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.client.ClientPermit;
import io.github.fdbcoord.client.CoordinationClient;
import io.github.fdbcoord.client.LockOptions;
import io.github.fdbcoord.client.SemaphoreClient;
import io.github.fdbcoord.client.SemaphoreClient.Holder;
import io.github.fdbcoord.client.SemaphoreClient.Permit;
import io.github.fdbcoord.client.SemaphoreClient.State;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static io.github.fdbcoord.service.ServiceFixture.await;
import static io.github.fdbcoord.service.ServiceFixture.failure;
import static io.github.fdbcoord.service.TypedClients.lost;
import static io.github.fdbcoord.service.WaiterLivenessTest.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link CoordinationClient#semaphores()} against the service's verticles on the embedded engine: the typed calls,
 * a held {@link ClientPermit} that heartbeats and reports its loss, never more holders than permits among many
 * contenders with strictly increasing tokens, and the documented failures.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SemaphoreClientTest {
  private Vertx vertx;
  private ServiceFixture f;
  private SemaphoreClient semaphores;

  @BeforeEach
  void start() {
    vertx = Vertx.vertx();
    f = ServiceFixture.start(vertx, TypedClients.config(), null);
    semaphores = CoordinationClient.create(vertx).semaphores();
  }

  @AfterEach
  void stop() {
    f.close();
    await(vertx.close());
  }

  @Test
  void theTypedCallsRoundTrip() throws Exception {
    assertEquals(new State("s", 0, List.of(), List.of()), await(semaphores.state("s")));
    Permit a = await(semaphores.acquire("s", "a", 2, Duration.ofSeconds(5)));
    assertEquals("s", a.name());
    assertEquals("a", a.owner());
    assertEquals(Duration.ofMillis(TypedClients.LEASE_MS), a.lease());
    Permit b = await(semaphores.acquire("s", "b", 2, Duration.ZERO));
    assertTrue(b.token().isNewerThan(a.token()));
    assertEquals(a.token(), await(semaphores.acquire("s", "a", 2, Duration.ZERO)).token(), "a holder gets its grant");
    failure(semaphores.acquire("s", "c", 2, Duration.ZERO), 409, "timed_out");
    failure(semaphores.acquire("s", "c", 3, Duration.ZERO), 409, "conflict");
    assertEquals(a, await(semaphores.heartbeat("s", "a", a.token())));

    Future<Permit> c = semaphores.acquire("s", "c", 2, Duration.ofSeconds(20));
    eventually("'c' waits", Duration.ofSeconds(20), () -> await(semaphores.state("s")).waiters().equals(List.of("c")));
    assertEquals(new State("s", 2, List.of(new Holder("a", a.token()), new Holder("b", b.token())), List.of("c")),
        await(semaphores.state("s")));
    await(semaphores.release("s", "a", a.token()));
    Permit cp = await(c);
    assertTrue(cp.token().isNewerThan(b.token()));
    failure(semaphores.heartbeat("s", "a", a.token()), 409, "not_held");
    // Releasing again what its owner released is no error (a retry after commit_unknown_result finds its commit).
    await(semaphores.release("s", "a", a.token()));
    failure(semaphores.release("s", "b", a.token()), 409, "not_held");

    Future<Permit> d = semaphores.acquire("s", "d", 2, Duration.ofSeconds(30));
    eventually("'d' waits", Duration.ofSeconds(20), () -> !await(semaphores.state("s")).waiters().isEmpty());
    assertEquals(1, await(semaphores.abandon("s", "d")));
    failure(d, 409, "abandoned");
    await(semaphores.release("s", "b", b.token()));
    await(semaphores.release("s", "c", cp.token()));
    assertEquals(new State("s", 0, List.of(), List.of()), await(semaphores.state("s")));
  }

  @Test
  void badInputGetsTheDocumentedFailure() {
    failure(semaphores.acquire("s", "a", 0, Duration.ofSeconds(1)), 400, "bad_request");
    failure(semaphores.acquire("s", "a", 10_001, Duration.ofSeconds(1)), 400, "bad_request");
    failure(semaphores.acquire("", "a", 1, Duration.ofSeconds(1)), 400, "bad_request");
    failure(semaphores.acquire("s", "a", 1, Duration.ofSeconds(51)), 400, "bad_request"); // over maxAcquireTimeoutMs
    failure(semaphores.heartbeat("s", "a", null), 400, "bad_request");
    failure(semaphores.release("s", null, FencingToken.parse("00000000000000000001")), 400, "bad_request");
    failure(semaphores.permit("s", 0), 400, "bad_request");
  }

  @Test
  void aPermitHeldLongerThanTheLeaseStaysUntilReleased() throws Exception {
    ClientPermit p = await(semaphores.permit("long", 1, new LockOptions().setOwner("worker")));
    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2 * TypedClients.LEASE_MS);
    eventually("two leases passed", Duration.ofSeconds(30), () -> System.nanoTime() > end || !p.isHeld());
    assertTrue(p.isHeld(), "lost although it heartbeat");
    assertEquals(List.of(new Holder("worker", p.token())), await(semaphores.state("long")).holders());
    await(p.release());
    assertEquals(List.of(), await(semaphores.state("long")).holders());
    assertFalse(p.lost().isComplete(), "a release is no loss");
  }

  @Test
  void aPermitReleasedBehindItsBackIsReportedLost() {
    ClientPermit p = await(semaphores.permit("taken", 1));
    await(semaphores.release("taken", p.owner(), p.token()));
    ClientPermit next = await(semaphores.permit("taken", 1));
    assertEquals(p.token(), lost(p.lost(), "the permit"));
    assertFalse(p.isHeld());
    failure(p.release(), 409, "not_held");
    assertTrue(next.token().isNewerThan(p.token()));
    await(next.release());
  }

  /**
   * With the service gone, every typed client's calls fail 503 (a caller tells it from 400 and 409), and a held
   * permit, whose renewals now find nothing to answer them, is reported lost once its lease ran out on this clock.
   */
  @Test
  void withTheServiceGoneCallsFail503AndAHeldPermitIsLostAfterItsLease() {
    ClientPermit p = await(semaphores.permit("gone", 1));
    await(vertx.undeploy(f.deploymentId));
    CoordinationClient client = CoordinationClient.create(vertx);
    failure(client.semaphores().state("gone"), 503, "no_handlers");
    failure(client.elections().leader("gone"), 503, "no_handlers");
    failure(client.readWriteLocks().state("gone"), 503, "no_handlers");
    assertEquals(p.token(), lost(p.lost(), "the permit"));
    assertFalse(p.isHeld());
    failure(p.release(), 409, "not_held");
  }

  /** Twelve owners take one of three permits four times each: never more than three at once, tokens increasing. */
  @Test
  void manyContendersNeverHoldMoreThanThePermits() {
    int contenders = 12;
    int rounds = 4;
    int permits = 3;
    AtomicInteger holding = new AtomicInteger();
    AtomicInteger most = new AtomicInteger();
    Set<FencingToken> tokens = new HashSet<>();
    AtomicReference<FencingToken> newestReleased = new AtomicReference<>();
    LockOptions options = new LockOptions().setTimeout(Duration.ofSeconds(45));
    TypedClients.runAll(vertx, contenders, c -> TypedClients.repeat(rounds, round -> {
      FencingToken before = newestReleased.get();
      return semaphores.permit("pool", permits, options).compose(p -> {
        int now = holding.incrementAndGet();
        most.accumulateAndGet(now, Math::max);
        synchronized (tokens) {
          assertTrue(tokens.add(p.token()), () -> "token " + p.token() + " granted twice");
        }
        assertTrue(now <= permits, () -> now + " holders of " + permits + " permits");
        assertTrue(before == null || p.token().isNewerThan(before), () -> p.token() + " not newer than " + before);
        return TypedClients.briefly(vertx).compose(v -> {
          assertTrue(p.isHeld(), "lost during the round");
          newestReleased.accumulateAndGet(p.token(), (a, b) -> a == null || b.isNewerThan(a) ? b : a);
          holding.decrementAndGet();
          return p.release();
        });
      });
    }));
    assertEquals(contenders * rounds, tokens.size());
    assertTrue(most.get() > 1, "the contenders never held permits at the same time: the test checked nothing");
    assertEquals(new State("pool", 0, List.of(), List.of()), await(semaphores.state("pool")));
  }
}
