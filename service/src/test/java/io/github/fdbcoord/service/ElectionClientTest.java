package io.github.fdbcoord.service;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.client.ClientLeadership;
import io.github.fdbcoord.client.CoordinationClient;
import io.github.fdbcoord.client.ElectionClient;
import io.github.fdbcoord.client.ElectionClient.Leader;
import io.github.fdbcoord.client.ElectionClient.Leadership;
import io.github.fdbcoord.client.ElectionClient.Resignation;
import io.github.fdbcoord.client.LockOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VerticleBase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.HashSet;
import java.util.Optional;
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
 * {@link CoordinationClient#elections()} against the service's verticles on the embedded engine: the typed calls,
 * a held {@link ClientLeadership} that heartbeats and reports its loss, one leader at a time with strictly
 * increasing epochs among many candidates, and the documented failures.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ElectionClientTest {
  private Vertx vertx;
  private ServiceFixture f;
  private ElectionClient elections;

  @BeforeEach
  void start() {
    vertx = Vertx.vertx();
    f = ServiceFixture.start(vertx, TypedClients.config(), null);
    elections = CoordinationClient.create(vertx).elections();
  }

  @AfterEach
  void stop() {
    f.close();
    await(vertx.close());
  }

  @Test
  void theTypedCallsRoundTrip() {
    assertEquals(Optional.empty(), await(elections.leader("e")));
    Leadership a = await(elections.campaign("e", "a", Duration.ofSeconds(5)));
    assertEquals("e", a.election());
    assertEquals("a", a.candidate());
    assertEquals(Duration.ofMillis(TypedClients.LEASE_MS), a.lease());
    assertEquals(Optional.of(new Leader("a", a.epoch())), await(elections.leader("e")));
    assertEquals(a.epoch(), await(elections.campaign("e", "a", Duration.ZERO)).epoch(), "a leader keeps its epoch");
    assertEquals(a, await(elections.heartbeat("e", "a", a.epoch())));
    failure(elections.campaign("e", "b", Duration.ZERO), 409, "timed_out");

    Future<Leadership> b = elections.campaign("e", "b", Duration.ofSeconds(20));
    Resignation r = await(elections.resign("e", "a", a.epoch()));
    assertEquals(new Resignation("e", "a", a.epoch(), r.next()), r);
    Leadership next = await(b);
    assertEquals(Optional.of(new Leader("b", next.epoch())), r.next(), "the next leader in the same transaction");
    assertTrue(next.epoch().isNewerThan(a.epoch()));
    failure(elections.heartbeat("e", "a", a.epoch()), 409, "not_owner");
    assertEquals(r, await(elections.resign("e", "a", a.epoch())),
        "a repeated resign answers the same, changes nothing");
    assertEquals(Optional.of(new Leader("b", next.epoch())), await(elections.leader("e")));
    await(elections.resign("e", "b", next.epoch()));
    failure(elections.heartbeat("e", "b", next.epoch()), 409, "not_held");
    assertEquals(Optional.empty(), await(elections.leader("e")));
  }

  @Test
  void abandonEndsAWaitingCampaign() throws Exception {
    Leadership holder = await(elections.campaign("ab", "holder", Duration.ofSeconds(5)));
    Future<Leadership> waiting = elections.campaign("ab", "w", Duration.ofSeconds(30));
    eventually("'w' is in line", Duration.ofSeconds(20), () -> queue("ab").contains("w"));
    assertEquals(1, await(elections.abandon("ab", "w")));
    failure(waiting, 409, "abandoned");
    eventually("'w' left the line", Duration.ofSeconds(20), () -> !queue("ab").contains("w"));
    await(elections.resign("ab", "holder", holder.epoch()));
  }

  private java.util.List<String> queue(String election) {
    return await(f.client.mutexState(election)).queue().stream().map(q -> q.owner()).toList();
  }

  @Test
  void badInputGetsTheDocumentedFailure() {
    failure(elections.campaign("", "a", Duration.ofSeconds(1)), 400, "bad_request");
    failure(elections.campaign("e", null, Duration.ofSeconds(1)), 400, "bad_request");
    failure(elections.campaign("e", "a", Duration.ofSeconds(51)), 400, "bad_request"); // over maxAcquireTimeoutMs
    failure(elections.heartbeat("e", "a", null), 400, "bad_request");
    failure(elections.resign("e", "a", null), 400, "bad_request");
    failure(elections.lead("", new LockOptions()), 400, "bad_request");
  }

  @Test
  void aLeadershipHeldLongerThanTheLeaseStaysAndResigns() throws Exception {
    ClientLeadership l = await(elections.lead("long", new LockOptions().setOwner("leader-1")));
    assertEquals("leader-1", l.candidate());
    // Two leases pass while the leadership is kept alive by its own heartbeats only.
    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2 * TypedClients.LEASE_MS);
    eventually("two leases passed", Duration.ofSeconds(30), () -> System.nanoTime() > end || !l.isLeading());
    assertTrue(l.isLeading(), "lost although it heartbeat");
    assertEquals(Optional.of(new Leader("leader-1", l.epoch())), await(elections.leader("long")));
    await(l.resign());
    assertFalse(l.isLeading());
    assertEquals(Optional.empty(), await(elections.leader("long")));
    assertFalse(l.lost().isComplete(), "a resignation is no loss");
  }

  @Test
  void aLeadershipEndedBehindItsBackIsReportedLost() {
    ClientLeadership l = await(elections.lead("taken"));
    await(elections.resign("taken", l.candidate(), l.epoch()));
    ClientLeadership next = await(elections.lead("taken"));
    assertEquals(l.epoch(), lost(l.lost(), "the leadership"));
    assertFalse(l.isLeading());
    assertTrue(next.epoch().isNewerThan(l.epoch()));
    failure(l.resign(), 409, "not_held");
    assertTrue(next.isLeading(), "the lost leadership's resign did not end the next one");
    await(next.resign());
  }

  @Test
  void undeployingTheVerticleThatLedResigns() throws Exception {
    AtomicReference<ClientLeadership> won = new AtomicReference<>();
    String id = await(vertx.deployVerticle(new VerticleBase() {
      @Override
      public Future<?> start() {
        return CoordinationClient.create(vertx).elections().lead("per-verticle").onSuccess(won::set);
      }
    }));
    assertEquals(won.get().epoch(), await(elections.leader("per-verticle")).orElseThrow().epoch());
    await(vertx.undeploy(id));
    assertEquals(Optional.empty(), await(elections.leader("per-verticle")), "resigned on undeploy, not reaped");
    assertFalse(won.get().isLeading());
  }

  /** Ten candidates lead five times each: never two at once, each epoch newer than every one resigned before. */
  @Test
  void manyCandidatesLeadOneAtATimeWithIncreasingEpochs() {
    int candidates = 10;
    int rounds = 5;
    AtomicInteger leading = new AtomicInteger();
    Set<FencingToken> epochs = new HashSet<>();
    AtomicReference<FencingToken> newestResigned = new AtomicReference<>();
    LockOptions options = new LockOptions().setTimeout(Duration.ofSeconds(45));
    TypedClients.runAll(vertx, candidates, c -> TypedClients.repeat(rounds, round -> {
      FencingToken before = newestResigned.get();
      return elections.lead("crowd", options).compose(l -> {
        int now = leading.incrementAndGet();
        synchronized (epochs) {
          assertTrue(epochs.add(l.epoch()), () -> "epoch " + l.epoch() + " led twice");
        }
        assertEquals(1, now, () -> now + " leaders at once");
        assertTrue(before == null || l.epoch().isNewerThan(before), () -> l.epoch() + " not newer than " + before);
        return TypedClients.briefly(vertx).compose(v -> {
          assertTrue(l.isLeading(), "lost during the round");
          newestResigned.accumulateAndGet(l.epoch(), (a, b) -> a == null || b.isNewerThan(a) ? b : a);
          leading.decrementAndGet();
          return l.resign();
        });
      });
    }));
    assertEquals(candidates * rounds, epochs.size());
    assertEquals(Optional.empty(), await(elections.leader("crowd")));
  }
}
