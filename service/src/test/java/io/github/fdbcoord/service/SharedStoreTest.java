package io.github.fdbcoord.service;

import io.github.fdbcoord.client.CoordinationClient;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.service.eventbus.FailureCodes;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static io.github.fdbcoord.service.ServiceFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Two Vert.x instances in one JVM, each with its own service over one shared store. */
class SharedStoreTest {
  private Vertx v1;
  private Vertx v2;
  private EmbeddedDatabase db;
  private ServiceFixture s1;
  private ServiceFixture s2;

  @BeforeEach
  void start() {
    v1 = Vertx.vertx();
    v2 = Vertx.vertx();
    db = EmbeddedDatabase.inMemory();
    JsonObject config = ServiceFixture.baseConfig();
    config.getJsonObject("http").put("enabled", false);
    // A long lease: a hand-off seen in these tests cannot come from the reaper.
    config.getJsonObject("mutex").put("leaseMs", 60_000).put("heartbeatIntervalMs", 1000);
    s1 = ServiceFixture.start(v1, config.copy(), db);
    s2 = ServiceFixture.start(v2, config.copy(), db);
  }

  @AfterEach
  void stop() {
    s1.close();
    s2.close();
    await(v1.close());
    await(v2.close());
    db.close();
  }

  @Test
  void contendersOnTwoInstancesNeverHoldTheMutexTogether() {
    AtomicInteger holders = new AtomicInteger();
    AtomicInteger maxHolders = new AtomicInteger();
    List<FencingToken> grants = Collections.synchronizedList(new ArrayList<>());
    List<Future<?>> all = new ArrayList<>();
    int perInstance = 4;
    int rounds = 4;
    for (int i = 0; i < perInstance; i++) {
      all.add(contender(v1, s1.client, "v1-" + i, rounds, holders, maxHolders, grants));
      all.add(contender(v2, s2.client, "v2-" + i, rounds, holders, maxHolders, grants));
    }
    await(Future.all(all));
    assertEquals(1, maxHolders.get(), "two holders at once");
    assertEquals(2 * perInstance * rounds, grants.size());
    for (int i = 1; i < grants.size(); i++) {
      assertTrue(grants.get(i).isNewerThan(grants.get(i - 1)), "fencing tokens grow with each grant");
    }
    assertTrue(await(s1.client.mutexState("shared")).owner().isEmpty());
  }

  private Future<Void> contender(Vertx vertx, CoordinationClient client, String owner, int rounds,
      AtomicInteger holders, AtomicInteger maxHolders, List<FencingToken> grants) {
    Future<Void> chain = Future.succeededFuture();
    for (int r = 0; r < rounds; r++) {
      chain = chain.compose(x -> client.acquire("shared", owner, Duration.ofSeconds(15)).compose(grant -> {
        int now = holders.incrementAndGet();
        maxHolders.accumulateAndGet(now, Math::max);
        grants.add(grant.token().get());
        Promise<Void> held = Promise.promise();
        vertx.setTimer(5, id -> held.complete());
        return held.future().compose(v -> {
          holders.decrementAndGet();
          return client.release("shared", owner, grant.token().get());
        });
      }).mapEmpty());
    }
    return chain;
  }

  @Test
  void stoppingAServiceReleasesTheLocksHeldThroughIt() {
    var a = await(s1.client.tryAcquire("job", "a"));
    assertTrue(a.held());
    assertTrue(!await(s2.client.tryAcquire("job", "b")).held());
    assertEquals(1, s1.service.heldMutexCount());

    // c waits through node 1: stopping node 1 fails its acquire and takes it out of the queue.
    var waitingC = s1.client.acquire("job", "c", Duration.ofSeconds(15));
    long deadline = System.currentTimeMillis() + 5000;
    while (await(s2.client.mutexState("job")).queue().size() < 2 && System.currentTimeMillis() < deadline) {
      Thread.onSpinWait();
    }
    assertEquals(2, await(s2.client.mutexState("job")).queue().size(), "b and c queued");

    await(v1.undeploy(s1.deploymentId));

    var state = await(s2.client.mutexState("job"));
    assertEquals("b", state.owner().get().owner(), "handed to the next waiter at once, not after the 60 s lease");
    assertTrue(state.owner().get().token().isNewerThan(a.token().get()));
    assertTrue(state.queue().isEmpty(), "the waiter of the stopped node left the queue: " + state.queue());
    Throwable failed = org.junit.jupiter.api.Assertions.assertThrows(Throwable.class, () -> await(waitingC));
    io.vertx.core.eventbus.ReplyException r = (io.vertx.core.eventbus.ReplyException)
        (failed instanceof io.vertx.core.eventbus.ReplyException ? failed : failed.getCause());
    assertEquals(FailureCodes.UNAVAILABLE, r.failureCode());
    assertTrue(r.getMessage().startsWith("closed: "), r.getMessage());
  }
}
