package io.github.fdbcoord.service;

import io.github.fdbcoord.client.CoordinationClient;
import io.github.fdbcoord.api.LockEvent;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.test.fakecluster.FakeClusterManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static io.github.fdbcoord.service.ServiceFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Two clustered nodes: a verticle on node B uses the service deployed on node A. */
class ClusteredServiceTest {
  private Vertx nodeA;
  private Vertx nodeB;
  private ServiceFixture service;

  @BeforeEach
  void start() {
    nodeA = await(Vertx.builder().withClusterManager(new FakeClusterManager()).buildClustered());
    nodeB = await(Vertx.builder().withClusterManager(new FakeClusterManager()).buildClustered());
    JsonObject config = ServiceFixture.baseConfig();
    config.getJsonObject("http").put("enabled", false);
    service = ServiceFixture.start(nodeA, config, null);
  }

  @AfterEach
  void stop() {
    service.close();
    await(nodeB.close());
    await(nodeA.close());
    FakeClusterManager.reset();
  }

  /** A user verticle on node B: interns, allocates, takes and hands off a mutex, through the client. */
  static final class UserVerticle extends VerticleBase {
    final BlockingQueue<Object> results = new LinkedBlockingQueue<>();

    @Override
    public Future<?> start() {
      CoordinationClient c = CoordinationClient.create(vertx);
      return c.lockEvents("cluster-lock", results::add)
          .compose(consumer -> c.intern("words", List.of("alpha", "beta", "alpha")))
          .compose(ids -> {
            results.add(ids);
            return c.lookup("words", ids);
          })
          .compose(strings -> {
            results.add(strings);
            return c.allocate("nodes");
          })
          .compose(v -> {
            results.add(v);
            return c.acquire("cluster-lock", "node-b", Duration.ofSeconds(5));
          })
          .compose(g -> c.tryAcquire("cluster-lock", "node-b-2").compose(q -> c.release("cluster-lock", "node-b",
              g.token().get())));
    }
  }

  @Test
  void aVerticleOnAnotherNodeUsesTheService() throws Exception {
    UserVerticle user = new UserVerticle();
    await(nodeB.deployVerticle(user));
    List<?> ids = (List<?>) poll(user);
    assertEquals(3, ids.size());
    assertEquals(ids.get(0), ids.get(2));
    assertEquals(List.of(Optional.of("alpha"), Optional.of("beta"), Optional.of("alpha")), poll(user));
    assertTrue(poll(user) instanceof Long);
    LockEvent acquired = (LockEvent) poll(user);
    assertEquals(LockEvent.Type.ACQUIRED, acquired.type());
    assertEquals(Optional.of("node-b"), acquired.owner());
    LockEvent handedOff = (LockEvent) poll(user);
    assertEquals(LockEvent.Type.HANDED_OFF, handedOff.type());
    assertEquals(Optional.of("node-b-2"), handedOff.owner());
    assertTrue(handedOff.sequence().isNewerThan(acquired.sequence()));
    // Node A sees the same state.
    assertEquals("node-b-2", await(service.client.mutexState("cluster-lock")).owner().get().owner());
  }

  private static Object poll(UserVerticle v) throws InterruptedException {
    Object o = v.results.poll(10, TimeUnit.SECONDS);
    assertNotNull(o, "nothing from node B within 10 s");
    return o;
  }
}
