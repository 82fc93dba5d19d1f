package io.github.fdbcoord.service;

import static io.github.fdbcoord.service.ServiceFixture.await;
import static io.github.fdbcoord.service.WaiterLivenessTest.eventually;
import static io.github.fdbcoord.service.eventbus.FailureCodes.BAD_REQUEST;
import static io.github.fdbcoord.service.eventbus.FailureCodes.CONFLICT;
import static io.github.fdbcoord.service.eventbus.FailureCodes.NOT_FOUND;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.QueueEntry;
import io.github.fdbcoord.client.wire.ElectionWire;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Leader election on {@code <prefix>.election}, through the service on the embedded engine: campaign, leader,
 * heartbeat and resign; FIFO order and strictly increasing epochs; a silent leader replaced by the next candidate
 * and a waiting candidate whose requester went away taken out of the line, as the mutex's waiters are; timeouts,
 * refusals and malformed requests with their documented codes; 12 candidates campaigning at once.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ElectionEventBusTest {
  /** Far longer than a test: a leader the test does not heartbeat keeps its leadership on a loaded machine. */
  private static final long LONG_LEASE_MS = 60_000;

  private Vertx vertx;
  private ServiceFixture f;
  private String election;

  private void start(long leaseMs) {
    vertx = Vertx.vertx();
    JsonObject config = ServiceFixture.baseConfig();
    // Campaigns of many candidates may wait long on a loaded machine: up to 50 s.
    config.getJsonObject("mutex").put("leaseMs", leaseMs).put("maxAcquireTimeoutMs", 50_000);
    f = ServiceFixture.start(vertx, config, null);
    election = f.client.electionAddress();
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

  private Future<JsonObject> campaign(String name, String candidate, long timeoutMs) {
    return f.client.request(election, ElectionWire.CAMPAIGN, new JsonObject().put("election", name)
        .put("candidate", candidate).put("timeoutMs", timeoutMs), timeoutMs + 10_000);
  }

  private JsonObject leader(String name) {
    JsonObject reply = f.request(election, ElectionWire.LEADER, new JsonObject().put("election", name));
    assertEquals(name, reply.getString("election"), reply::encode);
    assertTrue(reply.containsKey("leader"), reply::encode);
    return reply.getJsonObject("leader");
  }

  private static JsonObject leadership(String name, String candidate, String epoch) {
    return new JsonObject().put("election", name).put("candidate", candidate).put("epoch", epoch);
  }

  private List<String> line(String name) {
    return await(f.client.mutexState(name)).queue().stream().map(QueueEntry::owner).toList();
  }

  private static FencingToken epoch(JsonObject reply) {
    return FencingToken.parse(reply.getString("epoch"));
  }

  @Test
  void campaignLeaderHeartbeatAndResign() {
    start(LONG_LEASE_MS);
    assertNull(leader("e"), "nobody leads a new election");

    JsonObject won = await(campaign("e", "a", 5_000));
    assertEquals("e", won.getString("election"));
    assertEquals("a", won.getString("candidate"));
    assertEquals(LONG_LEASE_MS, won.getLong("leaseMs"));
    assertEquals(20, won.getString("epoch").length(), won::encode);
    assertEquals(new JsonObject().put("candidate", "a").put("epoch", won.getString("epoch")), leader("e"));
    // The election is the mutex of the same name.
    assertEquals(epoch(won), await(f.client.mutexState("e")).owner().orElseThrow().token());

    JsonObject again = await(campaign("e", "a", 0));
    assertEquals(won.getString("epoch"), again.getString("epoch"), "a leader campaigning again keeps its epoch");

    JsonObject beat = f.request(election, ElectionWire.HEARTBEAT, leadership("e", "a", won.getString("epoch")));
    assertEquals(won.getString("epoch"), beat.getString("epoch"));
    assertEquals(LONG_LEASE_MS, beat.getLong("leaseMs"));

    JsonObject resigned = f.request(election, ElectionWire.RESIGN, leadership("e", "a", won.getString("epoch")));
    assertTrue(resigned.getBoolean("resigned"), resigned::encode);
    assertTrue(resigned.containsKey("leader") && resigned.getValue("leader") == null, resigned::encode);
    assertNull(leader("e"));
    // The leadership is over: a heartbeat of it is refused.
    f.failure(election, ElectionWire.HEARTBEAT, leadership("e", "a", won.getString("epoch")), CONFLICT, "not_held");
  }

  @Test
  void aHandOverMakesTheNamedCandidateLeaderAndTheOthersKeepTheirPlaces() throws Exception {
    start(LONG_LEASE_MS);
    JsonObject a = await(campaign("h", "a", 5_000));
    List<Future<JsonObject>> waiting = new ArrayList<>();
    for (String c : List.of("b", "c", "d")) {
      waiting.add(campaign("h", c, 30_000));
      eventually("'" + c + "' is in line", Duration.ofSeconds(20), () -> line("h").contains(c), () -> "line " + line("h"));
    }
    JsonObject request = leadership("h", "a", a.getString("epoch")).put("successor", "c");
    JsonObject handedOver = f.request(election, ElectionWire.HANDOVER, request);
    assertTrue(handedOver.getBoolean("handedOver"), handedOver::encode);
    assertEquals("a", handedOver.getString("candidate"));
    JsonObject c = await(waiting.get(1));
    assertEquals("c", c.getString("candidate"));
    assertEquals(new JsonObject().put("candidate", "c").put("epoch", c.getString("epoch")),
        handedOver.getJsonObject("leader"), "the hand-over names the new leader, made so in the same transaction");
    assertTrue(epoch(c).isNewerThan(epoch(a)));
    assertEquals(handedOver.getJsonObject("leader"), leader("h"));
    assertEquals(List.of("b", "d"), line("h"), "b and d keep their places");
    assertFalse(waiting.get(0).isComplete());
    // A repeat whose answer was lost answers the same and changes nothing.
    assertEquals(handedOver, f.request(election, ElectionWire.HANDOVER, request));
    assertEquals(List.of("b", "d"), line("h"));

    JsonObject cLeads = leadership("h", "c", c.getString("epoch"));
    ReplyException notQueued = f.failure(election, ElectionWire.HANDOVER, cLeads.copy().put("successor", "zed"),
        CONFLICT, "not_queued");
    assertTrue(notQueued.getMessage().contains("'zed'"), notQueued.getMessage());
    assertEquals(handedOver.getJsonObject("leader"), leader("h"), "a refused hand-over leaves the leader as it was");
    f.request(election, ElectionWire.HEARTBEAT, cLeads);
    ReplyException self = f.failure(election, ElectionWire.HANDOVER, cLeads.copy().put("successor", "c"), BAD_REQUEST,
        "bad_request");
    assertTrue(self.getMessage().contains("'successor'"), self.getMessage());
    ReplyException missing = f.failure(election, ElectionWire.HANDOVER, cLeads, BAD_REQUEST, "bad_request");
    assertTrue(missing.getMessage().contains("'successor'"), missing.getMessage());
    // The old leader's epoch is over: it cannot hand over again, to anyone else.
    f.failure(election, ElectionWire.HANDOVER, leadership("h", "a", a.getString("epoch")).put("successor", "b"),
        CONFLICT, "not_owner");
    assertEquals(List.of("b", "d"), line("h"));

    JsonObject resigned = f.request(election, ElectionWire.RESIGN, cLeads);
    assertEquals("b", resigned.getJsonObject("leader").getString("candidate"), "FIFO among the rest");
    JsonObject b = await(waiting.get(0));
    f.request(election, ElectionWire.RESIGN, leadership("h", "b", b.getString("epoch")));
    JsonObject d = await(waiting.get(2));
    f.request(election, ElectionWire.RESIGN, leadership("h", "d", d.getString("epoch")));
    assertNull(leader("h"));
  }

  @Test
  void candidatesLeadInTheOrderTheyCampaignedWithIncreasingEpochs() throws Exception {
    start(LONG_LEASE_MS);
    JsonObject first = await(campaign("fifo", "c0", 5_000));
    List<Future<JsonObject>> waiting = new ArrayList<>();
    List<String> expectedLine = new ArrayList<>();
    for (int i = 1; i <= 4; i++) {
      String candidate = "c" + i;
      waiting.add(campaign("fifo", candidate, 20_000));
      expectedLine.add(candidate);
      List<String> expected = List.copyOf(expectedLine);
      eventually(candidate + " is in line", Duration.ofSeconds(20), () -> line("fifo").equals(expected),
          () -> "line " + line("fifo"));
    }
    JsonObject current = first;
    for (int i = 1; i <= 4; i++) {
      JsonObject resigned = f.request(election, ElectionWire.RESIGN,
          leadership("fifo", current.getString("candidate"), current.getString("epoch")));
      JsonObject next = await(waiting.get(i - 1));
      assertEquals("c" + i, next.getString("candidate"), next::encode);
      assertEquals(new JsonObject().put("candidate", "c" + i).put("epoch", next.getString("epoch")),
          resigned.getJsonObject("leader"), "the resign names the next leader, made so in the same transaction");
      assertTrue(epoch(next).isNewerThan(epoch(current)), () -> next + " after " + resigned);
      assertEquals(new JsonObject().put("candidate", "c" + i).put("epoch", next.getString("epoch")), leader("fifo"));
      for (int j = i; j < 4; j++) {
        assertFalse(waiting.get(j).isComplete(), "c" + (j + 1) + " leads out of turn");
      }
      current = next;
    }
    f.request(election, ElectionWire.RESIGN, leadership("fifo", "c4", current.getString("epoch")));
    assertNull(leader("fifo"));
  }

  @Test
  void aSilentLeaderIsReplacedByTheNextCandidate() {
    // The leader never heartbeats, as a requester that went away: after a lease, the next candidate leads. The
    // lease is short enough for that and long enough for the checks after it on a loaded machine.
    start(5_000);
    JsonObject silent = await(campaign("s", "silent", 5_000));
    JsonObject next = await(campaign("s", "next", 30_000));
    assertEquals("next", next.getString("candidate"));
    assertTrue(epoch(next).isNewerThan(epoch(silent)));
    f.request(election, ElectionWire.HEARTBEAT, leadership("s", "next", next.getString("epoch")));
    assertEquals("next", leader("s").getString("candidate"));
    // The replaced leader learns it at its next heartbeat, and cannot resign the leadership it lost.
    f.failure(election, ElectionWire.HEARTBEAT, leadership("s", "silent", silent.getString("epoch")), CONFLICT,
        "not_owner");
    f.failure(election, ElectionWire.RESIGN, leadership("s", "silent", silent.getString("epoch")), CONFLICT,
        "not_owner");
    f.request(election, ElectionWire.RESIGN, leadership("s", "next", next.getString("epoch")));
    assertNull(leader("s"));
  }

  @Test
  void aCandidateWhoseRequesterIsGoneLeavesTheLine() throws Exception {
    start(LONG_LEASE_MS);
    JsonObject holder = await(campaign("g", "holder", 5_000));
    // The requester's liveness address: the service pings it while the campaign waits.
    MessageConsumer<JsonObject> liveness = vertx.eventBus().consumer("test.liveness.gone", m -> m.reply(new JsonObject()));
    await(liveness.completion());
    Future<JsonObject> gone = f.client.request(election, ElectionWire.CAMPAIGN, new JsonObject().put("election", "g")
        .put("candidate", "gone").put("timeoutMs", 20_000).put("liveness", "test.liveness.gone"), 30_000);
    eventually("'gone' is in line", Duration.ofSeconds(20), () -> line("g").equals(List.of("gone")));
    Future<JsonObject> live = campaign("g", "live", 20_000);
    eventually("'live' is in line", Duration.ofSeconds(20), () -> line("g").equals(List.of("gone", "live")));

    await(liveness.unregister());
    ReplyException abandoned = assertInstanceOf(ReplyException.class, failureOf(gone));
    assertEquals(CONFLICT, abandoned.failureCode());
    assertTrue(abandoned.getMessage().startsWith("abandoned: "), abandoned.getMessage());
    eventually("'gone' left the line", Duration.ofSeconds(20), () -> line("g").equals(List.of("live")));

    JsonObject resigned = f.request(election, ElectionWire.RESIGN, leadership("g", "holder", holder.getString("epoch")));
    assertEquals("live", resigned.getJsonObject("leader").getString("candidate"));
    assertEquals("live", await(live).getString("candidate"));
  }

  /**
   * Two nodes on one store: a leader that won through a node loses nothing to the lease when that node stops, its
   * leadership is resigned and the candidate waiting through the other node leads at once.
   */
  @Test
  void aStoppingNodeResignsTheLeadershipsWonThroughIt() throws Exception {
    vertx = Vertx.vertx();
    Vertx other = Vertx.vertx();
    EmbeddedDatabase db = EmbeddedDatabase.inMemory();
    try {
      JsonObject config = ServiceFixture.baseConfig();
      config.getJsonObject("http").put("enabled", false);
      config.getJsonObject("mutex").put("leaseMs", LONG_LEASE_MS).put("maxAcquireTimeoutMs", 50_000);
      ServiceFixture first = ServiceFixture.start(other, config.copy(), db);
      ServiceFixture second = ServiceFixture.start(vertx, config.copy(), db);
      try {
        JsonObject won = first.request(first.client.electionAddress(), ElectionWire.CAMPAIGN, new JsonObject()
            .put("election", "n").put("candidate", "first"));
        Future<JsonObject> waiting = second.client.request(second.client.electionAddress(), ElectionWire.CAMPAIGN,
            new JsonObject().put("election", "n").put("candidate", "second").put("timeoutMs", 40_000), 50_000);
        eventually("'second' is in line", Duration.ofSeconds(20), () -> await(second.client.mutexState("n")).queue()
            .stream().map(QueueEntry::owner).toList().equals(List.of("second")));
        await(other.undeploy(first.deploymentId));
        JsonObject next = await(waiting);
        assertEquals("second", next.getString("candidate"));
        assertTrue(epoch(next).isNewerThan(epoch(won)));
        second.request(second.client.electionAddress(), ElectionWire.RESIGN, leadership("n", "second",
            next.getString("epoch")));
      } finally {
        second.close();
        first.close();
      }
    } finally {
      await(other.close());
      db.close();
    }
  }

  @Test
  void anAbandonedCampaignLeavesTheLine() throws Exception {
    start(LONG_LEASE_MS);
    await(campaign("ab", "holder", 5_000));
    Future<JsonObject> waiting = campaign("ab", "w", 20_000);
    eventually("'w' is in line", Duration.ofSeconds(20), () -> line("ab").equals(List.of("w")));
    JsonObject reply = f.request(election, ElectionWire.ABANDON, new JsonObject().put("election", "ab")
        .put("candidate", "w"));
    assertEquals(1, reply.getInteger("abandoned"), reply::encode);
    ReplyException e = assertInstanceOf(ReplyException.class, failureOf(waiting));
    assertTrue(e.getMessage().startsWith("abandoned: "), e.getMessage());
    eventually("'w' left the line", Duration.ofSeconds(20), () -> line("ab").isEmpty());
  }

  @Test
  void aCampaignTimesOutAndWithdraws() {
    start(LONG_LEASE_MS);
    await(campaign("t", "leader", 5_000));
    f.failure(election, ElectionWire.CAMPAIGN, new JsonObject().put("election", "t").put("candidate", "c")
        .put("timeoutMs", 0), CONFLICT, "timed_out");
    f.failure(election, ElectionWire.CAMPAIGN, new JsonObject().put("election", "t").put("candidate", "c")
        .put("timeoutMs", 300), CONFLICT, "timed_out");
    assertEquals(List.of(), line("t"), "a candidate that timed out left the line");
    assertEquals("leader", leader("t").getString("candidate"));
  }

  @Test
  void onlyTheLeaderResigns() {
    start(LONG_LEASE_MS);
    f.failure(election, ElectionWire.RESIGN, leadership("r", "a", "00000000000000000001"), CONFLICT, "not_held");
    JsonObject a = await(campaign("r", "a", 5_000));
    f.failure(election, ElectionWire.RESIGN, leadership("r", "b", a.getString("epoch")), CONFLICT, "not_owner");
    f.failure(election, ElectionWire.RESIGN, leadership("r", "a", "00000000000000000001"), CONFLICT, "not_owner");
    f.failure(election, ElectionWire.HEARTBEAT, leadership("r", "b", a.getString("epoch")), CONFLICT, "not_owner");
    assertEquals("a", leader("r").getString("candidate"));
    JsonObject resigned = f.request(election, ElectionWire.RESIGN, leadership("r", "a", a.getString("epoch")));
    // Repeated (its answer lost, say), the resign answers the same and changes nothing.
    assertEquals(resigned, f.request(election, ElectionWire.RESIGN, leadership("r", "a", a.getString("epoch"))));
    assertNull(leader("r"));
  }

  @Test
  void malformedRequestsAreBadRequestsNamingTheField() {
    start(LONG_LEASE_MS);
    String big = "x".repeat(1_025);
    List<List<Object>> cases = List.of(
        List.of(ElectionWire.CAMPAIGN, new JsonObject().put("candidate", "a"), "'election'"),
        List.of(ElectionWire.CAMPAIGN, new JsonObject().put("election", "e"), "'candidate'"),
        List.of(ElectionWire.CAMPAIGN, new JsonObject().put("election", "e").put("candidate", 5), "'candidate'"),
        List.of(ElectionWire.CAMPAIGN, new JsonObject().put("election", "").put("candidate", "a"), "election"),
        List.of(ElectionWire.CAMPAIGN, new JsonObject().put("election", big).put("candidate", "a"), "election"),
        List.of(ElectionWire.CAMPAIGN, new JsonObject().put("election", "e").put("candidate", "a")
            .put("timeoutMs", "soon"), "'timeoutMs'"),
        List.of(ElectionWire.CAMPAIGN, new JsonObject().put("election", "e").put("candidate", "a")
            .put("timeoutMs", -1), "'timeoutMs'"),
        List.of(ElectionWire.CAMPAIGN, new JsonObject().put("election", "e").put("candidate", "a")
            .put("timeoutMs", 50_001), "'timeoutMs'"),
        List.of(ElectionWire.CAMPAIGN, new JsonObject().put("election", "e").put("candidate", "a")
            .put("liveness", 3), "'liveness'"),
        List.of(ElectionWire.LEADER, new JsonObject(), "'election'"),
        List.of(ElectionWire.RESIGN, new JsonObject().put("election", "e").put("candidate", "a"), "'epoch'"),
        List.of(ElectionWire.RESIGN, new JsonObject().put("election", "e").put("candidate", "a")
            .put("epoch", "not hex"), "'epoch'"),
        List.of(ElectionWire.HEARTBEAT, new JsonObject().put("election", "e").put("candidate", "a"), "'epoch'"),
        List.of(ElectionWire.ABANDON, new JsonObject().put("election", "e"), "'candidate'"));
    for (List<Object> c : cases) {
      ReplyException e = f.failure(election, (String) c.get(0), (JsonObject) c.get(1), BAD_REQUEST, "bad_request");
      assertTrue(e.getMessage().contains((String) c.get(2)), () -> c + ": " + e.getMessage());
      assertFalse(e.getMessage().contains("Exception"), () -> c + ": " + e.getMessage());
    }
    ReplyException unknown = f.failure(election, "elect", new JsonObject(), NOT_FOUND, "unknown_action");
    assertTrue(unknown.getMessage().contains(ElectionWire.CAMPAIGN), unknown.getMessage());
    assertEquals(List.of(), line("e"), "no malformed campaign queued anyone");
  }

  /**
   * 12 candidates campaign at once, twice each; each leader checks that nobody else believes it leads and that its
   * epoch is newer than every earlier one, heartbeats a random number of times and resigns.
   */
  @Test
  void manyCandidatesAtOnceNeverTwoLeaders() throws Exception {
    start(LONG_LEASE_MS);
    int candidates = 12;
    int rounds = 2;
    AtomicReference<String> leading = new AtomicReference<>();
    ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
    List<FencingToken> epochs = new ArrayList<>();
    List<Future<Void>> done = new ArrayList<>();
    for (int i = 0; i < candidates; i++) {
      String candidate = "c" + i;
      Random random = new Random(i);
      Promise<Void> finished = Promise.promise();
      done.add(finished.future());
      runRounds(candidate, rounds, random, leading, violations, epochs, finished);
    }
    // Longer than ServiceFixture.await's 20 s: 24 leaderships one after the other on a loaded machine.
    Future.all(done).await(50, TimeUnit.SECONDS);
    assertEquals(List.of(), List.copyOf(violations));
    assertEquals(candidates * rounds, epochs.size());
    for (int i = 1; i < epochs.size(); i++) {
      assertTrue(epochs.get(i).isNewerThan(epochs.get(i - 1)), "epoch " + i + " of " + epochs);
    }
    assertNull(leader("many"));
  }

  private void runRounds(String candidate, int rounds, Random random, AtomicReference<String> leading,
      ConcurrentLinkedQueue<String> violations, List<FencingToken> epochs, Promise<Void> finished) {
    if (rounds == 0) {
      finished.complete();
      return;
    }
    campaign("many", candidate, 45_000).compose(won -> {
      if (!leading.compareAndSet(null, candidate)) {
        violations.add(candidate + " leads while " + leading.get() + " does");
      }
      FencingToken epoch = epoch(won);
      synchronized (epochs) {
        if (!epochs.isEmpty() && !epoch.isNewerThan(epochs.get(epochs.size() - 1))) {
          violations.add(candidate + "'s epoch " + epoch + " is not newer than " + epochs.get(epochs.size() - 1));
        }
        epochs.add(epoch);
      }
      JsonObject mine = leadership("many", candidate, won.getString("epoch"));
      Future<?> chain = f.client.request(election, ElectionWire.LEADER, new JsonObject().put("election", "many"))
          .onSuccess(r -> {
            if (!ElectionWire.leader(candidate, epoch).equals(r.getJsonObject("leader"))) {
              violations.add(candidate + " at " + epoch + " was told the leader is " + r.getValue("leader"));
            }
          });
      for (int beats = random.nextInt(3); beats > 0; beats--) {
        chain = chain.compose(x -> f.client.request(election, ElectionWire.HEARTBEAT, mine));
      }
      // Not leading any more before the resign is sent: the resign makes the next leader.
      return chain.compose(x -> {
        leading.compareAndSet(candidate, null);
        return f.client.request(election, ElectionWire.RESIGN, mine);
      });
    }).onComplete(ar -> {
      if (ar.failed()) {
        finished.fail(new AssertionError(candidate + " failed: " + ar.cause(), ar.cause()));
      } else {
        runRounds(candidate, rounds - 1, random, leading, violations, epochs, finished);
      }
    });
  }

  private static Throwable failureOf(Future<?> f) {
    try {
      await(f);
    } catch (RuntimeException e) {
      return e instanceof ReplyException ? e : e.getCause() != null ? e.getCause() : e;
    }
    throw new AssertionError("expected a failure, got " + f.result());
  }
}
