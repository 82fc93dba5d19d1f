package io.github.fdbcoord.service;

import io.github.fdbcoord.api.DirectoryInfo;
import io.github.fdbcoord.api.DirectoryPage;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.InternedPage;
import io.github.fdbcoord.api.InternerStats;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.api.MutexInspection;
import io.github.fdbcoord.api.MutexOwner;
import io.github.fdbcoord.api.MutexState;
import io.github.fdbcoord.client.CoordinationClient;
import io.github.fdbcoord.client.CoordinationClient.Grant;
import io.github.fdbcoord.service.eventbus.FailureCodes;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static io.github.fdbcoord.service.ServiceFixture.await;
import static io.github.fdbcoord.service.ServiceFixture.failure;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every public method of {@link CoordinationClient}, against the service's verticles on an
 * in-memory embedded store: the typed results and the failure codes they surface.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CoordinationClientTest {
  private Vertx vertx;
  private ServiceFixture f;
  private CoordinationClient client;

  @BeforeEach
  void start() {
    // Its own Vert.x per test: liveness registrations of one test must not serve another.
    vertx = Vertx.vertx();
    f = ServiceFixture.start(vertx);
    client = CoordinationClient.create(vertx);
  }

  @AfterEach
  void stop() {
    f.close();
    await(vertx.close());
  }

  @Test
  void addressesFollowThePrefix() {
    CoordinationClient other = CoordinationClient.create(vertx, "other");
    assertEquals("other.directory", other.directoryAddress());
    assertEquals("other.allocator", other.allocatorAddress());
    assertEquals("other.interner", other.internerAddress());
    assertEquals("other.mutex", other.mutexAddress());
    assertEquals("fdb.mutex", client.mutexAddress());
    assertEquals("other.election", other.elections().address());
    assertEquals("other.semaphore", other.semaphores().address());
    assertEquals("other.rwlock", other.readWriteLocks().address());
    assertEquals("other.rwlock", other.withSendTimeout(Duration.ofSeconds(1)).readWriteLocks().address());
  }

  @Test
  void timeoutsMustBePositive() {
    assertThrows(IllegalArgumentException.class, () -> client.withSendTimeout(Duration.ZERO));
    assertThrows(IllegalArgumentException.class, () -> client.withSendTimeout(null));
    assertThrows(IllegalArgumentException.class, () -> client.withReplyGrace(Duration.ofMillis(-1)));
    // A valid copy still talks to the same service.
    assertEquals(List.of(), await(client.withSendTimeout(Duration.ofSeconds(3)).withReplyGrace(Duration.ofSeconds(1))
        .heldMutexes(null, 10)));
  }

  @Test
  void untypedRequestsAndTheirFailures() {
    JsonObject reply = await(client.request(client.allocatorAddress(), "allocate", new JsonObject().put("name", "u")));
    assertTrue(reply.getLong("value") >= 0);
    failure(client.request(client.allocatorAddress(), "nope", new JsonObject()), FailureCodes.NOT_FOUND,
        "unknown_action");
    ReplyException none = failure(client.request("nobody.home", "x", new JsonObject(), 500),
        CoordinationClient.HOST_UNAVAILABLE, "no_handlers");
    assertEquals(io.vertx.core.eventbus.ReplyFailure.NO_HANDLERS, none.failureType());
  }

  @Test
  void directories() {
    List<String> a = f.dir("a");
    DirectoryInfo created = await(client.createDirectory(a, "docs"));
    assertEquals(a, created.path());
    assertEquals("docs", created.layer());
    assertFalse(created.isPartition());
    assertTrue(created.prefix().length > 0);
    failure(client.createDirectory(a, "docs"), FailureCodes.CONFLICT, "already_exists");

    assertEquals(created, await(client.openDirectory(a, "docs")));
    assertEquals(created, await(client.openDirectory(a, null)));
    failure(client.openDirectory(a, "other"), FailureCodes.CONFLICT, "layer_mismatch");
    failure(client.openDirectory(f.dir("missing"), null), FailureCodes.NOT_FOUND, "not_found");

    assertEquals(created, await(client.createOrOpenDirectory(a, "docs")));
    DirectoryInfo b = await(client.createOrOpenDirectory(f.dir("b"), ""));
    assertNotEquals(created.prefixHex(), b.prefixHex());

    DirectoryInfo p = await(client.createPartition(f.dir("p")));
    assertTrue(p.isPartition());
    assertEquals(DirectoryInfo.PARTITION_LAYER, p.layer());

    assertTrue(await(client.directoryExists(a)));
    assertFalse(await(client.directoryExists(f.dir("nope"))));

    DirectoryPage first = await(client.listDirectory(f.dir(), null, 2));
    assertEquals(new DirectoryPage(List.of("a", "b"), true), first);
    assertEquals(new DirectoryPage(List.of("p"), false), await(client.listDirectory(f.dir(), first.nextStartAfter(), 2)));
    failure(client.listDirectory(f.dir(), null, 0), FailureCodes.BAD_REQUEST, "bad_request");

    DirectoryInfo moved = await(client.moveDirectory(a, f.dir("c")));
    assertEquals(f.dir("c"), moved.path());
    assertArrayEquals(created.prefix(), moved.prefix());
    assertFalse(await(client.directoryExists(a)));
    failure(client.moveDirectory(a, f.dir("d")), FailureCodes.NOT_FOUND, "not_found");

    await(client.removeDirectory(f.dir("c")));
    assertFalse(await(client.directoryExists(f.dir("c"))));
    failure(client.removeDirectory(f.dir("c")), FailureCodes.NOT_FOUND, "not_found");
    assertTrue(await(client.removeDirectoryIfExists(f.dir("b"))));
    assertFalse(await(client.removeDirectoryIfExists(f.dir("b"))));
    failure(client.createDirectory(f.root, null), FailureCodes.BAD_REQUEST, "reserved");
  }

  @Test
  void allocator() {
    long one = await(client.allocate("ids"));
    long two = await(client.allocate("ids"));
    assertNotEquals(one, two);
    byte[] p = await(client.allocatePrefix("ids"));
    byte[] q = await(client.allocatePrefix("ids"));
    assertTrue(p.length > 0);
    assertFalse(java.util.Arrays.equals(p, q));
    failure(client.allocate(""), FailureCodes.BAD_REQUEST, "bad_request");
  }

  @Test
  void interner() {
    List<Long> ids = await(client.intern("uris", List.of("a", "b", "a")));
    assertEquals(3, ids.size());
    assertEquals(ids.get(0), ids.get(2));
    assertNotEquals(ids.get(0), ids.get(1));
    assertEquals(List.of(OptionalLong.of(ids.get(1)), OptionalLong.empty()),
        await(client.resolve("uris", List.of("b", "zzz"))));
    assertEquals(List.of(Optional.of("a"), Optional.of("b")), await(client.lookup("uris", List.of(ids.get(0), ids.get(1)))));
    assertEquals(List.of(Optional.empty()), await(client.lookup("uris", List.of(Long.MAX_VALUE))));
    failure(client.resolve("missing", List.of("a")), FailureCodes.NOT_FOUND, "not_found");
    failure(client.lookup("missing", List.of(1L)), FailureCodes.NOT_FOUND, "not_found");

    await(client.intern("paths", List.of("x")));
    assertEquals(List.of("paths", "uris"), await(client.listNamespaces()));
    assertTrue(await(client.removeNamespace("paths")));
    assertFalse(await(client.removeNamespace("paths")));
    assertEquals(List.of("uris"), await(client.listNamespaces()));
  }

  @Test
  void mutexHoldHeartbeatRelease() {
    Grant grant = await(client.tryAcquire("m", "a"));
    assertTrue(grant.held());
    assertEquals("m", grant.name());
    assertEquals("a", grant.owner());
    FencingToken token = grant.token().orElseThrow();

    Grant queued = await(client.tryAcquire("m", "b"));
    assertFalse(queued.held());
    assertEquals(Optional.empty(), queued.token());
    assertEquals(1, queued.position());
    Grant stillQueued = await(client.heartbeatWaiter("m", "b"));
    assertFalse(stillQueued.held());

    MutexOwner beat = await(client.heartbeat("m", "a", token));
    assertEquals(new MutexOwner("a", token, beat.heartbeats()), beat);
    assertTrue(beat.heartbeats() >= 1);
    failure(client.heartbeat("m", "b", token), FailureCodes.CONFLICT, "not_owner");

    MutexState state = await(client.mutexState("m"));
    assertEquals("m", state.name());
    assertEquals("a", state.owner().orElseThrow().owner());
    assertEquals(token, state.owner().get().token());
    assertEquals(1, state.queue().size());
    assertEquals("b", state.queue().get(0).owner());
    assertEquals(List.of("m"), await(client.heldMutexes(null, 10)));
    assertEquals(List.of(), await(client.heldMutexes("m", 10)));

    LockEvent handOff = await(client.release("m", "a", token));
    assertEquals(LockEvent.Type.HANDED_OFF, handOff.type());
    assertEquals(Optional.of("a"), handOff.previousOwner());
    assertEquals(Optional.of(token), handOff.previousToken());
    assertEquals(Optional.of("b"), handOff.owner());

    Grant granted = await(client.heartbeatWaiter("m", "b"));
    assertTrue(granted.held());
    assertEquals(handOff.token(), granted.token());
    assertFalse(await(client.leave("m", "nobody")));
    LockEvent released = await(client.release("m", "b", null));
    assertEquals(LockEvent.Type.RELEASED, released.type());
    failure(client.heartbeatWaiter("m", "b"), FailureCodes.CONFLICT, "not_held");
  }

  @Test
  void leaveTakesAWaiterOutOfTheQueue() {
    await(client.tryAcquire("q", "a"));
    await(client.tryAcquire("q", "b"));
    assertTrue(await(client.leave("q", "b")));
    assertEquals(List.of(), await(client.mutexState("q")).queue());
  }

  @Test
  void acquireWaitsForTheHandOffAndTimesOut() throws Exception {
    FencingToken first = await(client.tryAcquire("w", "a")).token().orElseThrow();
    Future<Grant> waiting = client.acquire("w", "b", Duration.ofSeconds(10));
    Thread.sleep(200);
    await(client.release("w", "a", first));
    Grant grant = await(waiting);
    assertTrue(grant.held());
    assertTrue(grant.token().orElseThrow().isNewerThan(first));

    failure(client.acquire("w", "c", Duration.ofMillis(300)), FailureCodes.CONFLICT, "timed_out");
    assertEquals(List.of(), await(client.mutexState("w")).queue());
  }

  @Test
  void lockEventsAreDeliveredInOrder() throws Exception {
    List<LockEvent> events = new CopyOnWriteArrayList<>();
    List<CoordinationClient.EventGap> gaps = new CopyOnWriteArrayList<>();
    MessageConsumer<JsonObject> consumer = await(client.lockEvents("e", events::add, gaps::add));
    List<LockEvent> plain = new CopyOnWriteArrayList<>();
    MessageConsumer<JsonObject> second = await(client.lockEvents("e", plain::add));

    FencingToken token = await(client.tryAcquire("e", "a")).token().orElseThrow();
    await(client.release("e", "a", token));
    WaiterLivenessTest.eventually("two events", Duration.ofSeconds(10), () -> events.size() == 2 && plain.size() == 2);
    assertEquals(List.of(LockEvent.Type.ACQUIRED, LockEvent.Type.RELEASED), events.stream().map(LockEvent::type).toList());
    assertEquals(Optional.of(token), events.get(0).token());
    assertEquals(events, plain);
    assertEquals(List.of(), gaps);
    await(consumer.unregister());
    await(second.unregister());
  }

  /**
   * The liveness address answers for every waiting acquire of the Vert.x instance, whoever asked
   * first: a verticle that acquired and was undeployed must not take it down with it (issue 21: a
   * later acquire was answered 409 abandoned at the first liveness ping).
   */
  @Test
  void acquireSurvivesTheUndeployOfTheVerticleThatAcquiredFirst() throws Exception {
    String first = await(vertx.deployVerticle(new VerticleBase() {
      @Override
      public Future<?> start() {
        CoordinationClient own = CoordinationClient.create(vertx);
        return own.acquire("l1", "first", Duration.ofSeconds(5))
            .compose(g -> own.release("l1", "first", g.token().orElseThrow()));
      }
    }));
    await(vertx.undeploy(first));

    FencingToken holder = await(client.tryAcquire("l2", "holder")).token().orElseThrow();
    long start = System.nanoTime();
    Future<Grant> waiting = client.acquire("l2", "waiter", Duration.ofSeconds(8));
    // Several liveness pings (heartbeat interval 300 ms) while the holder keeps the mutex.
    for (int i = 0; i < 4; i++) {
      Thread.sleep(300);
      await(client.heartbeat("l2", "holder", holder));
      assertFalse(waiting.failed(), () -> "failed after " + (System.nanoTime() - start) / 1_000_000 + " ms: "
          + waiting.cause());
    }
    await(client.release("l2", "holder", holder));
    assertTrue(await(waiting).held());
  }

  @Test
  void internerStatsAndListing() {
    List<Long> ids = await(client.intern("browse", List.of("x", "y", "z")));
    InternerStats stats = await(client.internerStats("browse"));
    assertEquals("browse", stats.namespace());
    assertEquals(3, stats.strings());
    assertTrue(stats.sequenceBits() > 0);
    InternedPage first = await(client.listInterned("browse", 0, 2));
    assertEquals(2, first.entries().size());
    assertTrue(first.nextAfter().isPresent());
    InternedPage rest = await(client.listInterned("browse", first.nextAfter().getAsLong(), 2));
    assertEquals(1, rest.entries().size());
    assertTrue(rest.nextAfter().isEmpty());
    java.util.Map<Long, String> listed = new java.util.HashMap<>();
    first.entries().forEach(e -> listed.put(e.id(), e.string()));
    rest.entries().forEach(e -> listed.put(e.id(), e.string()));
    assertEquals(java.util.Map.of(ids.get(0), "x", ids.get(1), "y", ids.get(2), "z"), listed);
    failure(client.internerStats("absent-namespace"), 404, "not_found");
  }

  @Test
  void inspectAndAbandon() throws Exception {
    assertTrue(await(client.inspect("inspected")).heldFor().isEmpty());
    Grant g = await(client.tryAcquire("inspected", "holder"));
    MutexInspection held = await(client.inspect("inspected"));
    assertEquals("holder", held.state().owner().orElseThrow().owner());
    assertEquals(g.token(), held.state().owner().map(MutexOwner::token));
    assertTrue(held.leaseLeft().isPresent());
    // A waiter whose requester went away: abandon ends its wait.
    Future<Grant> waiting = client.acquire("inspected", "gone", Duration.ofSeconds(15));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (await(client.mutexState("inspected")).queue().isEmpty() && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertEquals(1, await(client.abandon("inspected", "gone")));
    failure(waiting, 409, "abandoned");
    assertTrue(await(client.mutexState("inspected")).queue().isEmpty());
    await(client.release("inspected", "holder", g.token().get()));
  }
}
