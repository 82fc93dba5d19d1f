package io.github.fdbcoord.service;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.cluster.FdbClusterManager;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.mutex.MutexService;
import io.github.fdbcoord.service.eventbus.MutexVerticle;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.spi.cluster.RegistrationInfo;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.reflect.Field;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.github.fdbcoord.service.ServiceFixture.await;
import static io.github.fdbcoord.service.WaiterLivenessTest.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The service's hand-off hints between clustered nodes (issue 36): with no watch set on either
 * node's mutex service, an acquire waiting on one node is granted when a release on the other
 * commits the hand-off, because the releasing node publishes a hint that the waiter's node
 * answers by reading the mutex again.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class ClusteredHandOffHintTest {
  private final EmbeddedDatabase db = EmbeddedDatabase.inMemory();
  private final List<Vertx> nodes = new ArrayList<>();
  private final List<ServiceFixture> services = new ArrayList<>();

  @AfterEach
  void stop() {
    for (ServiceFixture s : services) {
      s.close();
    }
    for (Vertx v : nodes) {
      await(v.close());
    }
    db.close();
  }

  /** The node's mutex service, left without watches: its waiters learn of a grant only from a hint. */
  private static MutexService withoutWatches(ServiceFixture s) throws Exception {
    Field f = CoordinationVerticle.class.getDeclaredField("mutexes");
    f.setAccessible(true);
    MutexService mutexes = (MutexService) f.get(s.service);
    Field off = mutexes.getClass().getDeclaredField("watchesDisabled");
    off.setAccessible(true);
    off.setBoolean(mutexes, true);
    return mutexes;
  }

  @Test
  void anAcquireWaitingOnOneNodeIsGrantedByAHintFromTheReleasingNode() throws Exception {
    JsonObject config = ServiceFixture.baseConfig();
    config.getJsonObject("http").put("enabled", false);
    // A lease far above the test: a hand-off nobody noticed could only come back through an expiry.
    config.getJsonObject("mutex").put("leaseMs", 60_000).put("heartbeatIntervalMs", 1000);
    JsonObject cluster = new JsonObject().put("enabled", true).put("nodeLeaseMs", 30_000)
        .put("heartbeatIntervalMs", 300).put("reaperIntervalMs", 100).put("logRetentionMs", 60_000);
    CoordinationConfig c = CoordinationConfig.from(config);
    List<MutexService> stores = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      Vertx node = await(Vertx.builder().withClusterManager(new FdbClusterManager(CoordinationMain.clusterOptions(cluster, c, db)))
          .buildClustered());
      nodes.add(node);
      ServiceFixture s = ServiceFixture.start(node, config, db);
      services.add(s);
      stores.add(withoutWatches(s));
    }
    String hints = MutexVerticle.handOffAddress(c.mutexAddress());
    // Each node's hint consumer is known to the other before the hand-offs start.
    eventually("both nodes listen for hints", Duration.ofSeconds(30), () -> registrations(nodes.get(0), hints) == 2
        && registrations(nodes.get(1), hints) == 2);
    String address = c.mutexAddress();
    MutexService store = stores.get(0);
    String holder = "owner-0";
    assertTrue(services.get(0).request(address, "acquire", new JsonObject().put("name", "m").put("owner", holder))
        .getBoolean("held"));
    for (int i = 1; i <= 6; i++) {
      String next = "owner-" + i;
      // The request may be served by either node: either way, only a hint can tell that node.
      Future<JsonObject> waiting = services.get(i % 2).client.request(address, "acquire",
          new JsonObject().put("name", "m").put("owner", next).put("timeoutMs", 20_000), 30_000);
      eventually(next + " queued", Duration.ofSeconds(20), () -> store.state("m").join().queue().size() == 1);
      services.get(1 - i % 2).request(address, "release", new JsonObject().put("name", "m").put("owner", holder));
      JsonObject granted = await(waiting);
      assertTrue(granted.getBoolean("held"), granted.encode());
      assertEquals(next, granted.getString("owner"));
      holder = next;
    }
    services.get(0).request(address, "release", new JsonObject().put("name", "m").put("owner", holder));
    List<LockEvent.Type> types = store.events("m", FencingToken.of(new byte[FencingToken.LENGTH]), 100).join()
        .stream().map(LockEvent::type).toList();
    assertEquals(LockEvent.Type.ACQUIRED, types.get(0));
    assertEquals(List.of(LockEvent.Type.HANDED_OFF, LockEvent.Type.HANDED_OFF, LockEvent.Type.HANDED_OFF,
        LockEvent.Type.HANDED_OFF, LockEvent.Type.HANDED_OFF, LockEvent.Type.HANDED_OFF, LockEvent.Type.RELEASED),
        types.subList(1, types.size()), "every grant was a hand-off taken up, none expired");
  }

  private static int registrations(Vertx node, String address) {
    Promise<List<RegistrationInfo>> p = Promise.promise();
    ((VertxInternal) node).clusterManager().getRegistrations(address, p);
    return await(p.future()).size();
  }
}
