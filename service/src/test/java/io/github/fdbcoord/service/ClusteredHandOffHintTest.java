package io.github.fdbcoord.service;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.cluster.FdbClusterManager;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.mutex.MutexService;
import io.github.fdbcoord.client.wire.ReadWriteLockWire;
import io.github.fdbcoord.client.wire.SemaphoreWire;
import io.github.fdbcoord.rwlock.ReadWriteLockService;
import io.github.fdbcoord.semaphore.SemaphoreService;
import io.github.fdbcoord.service.eventbus.LayerVerticle;
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
 * node's mutex (semaphore, read-write lock) service, an acquire waiting on one node is granted when
 * a release on the other commits the hand-off, because the releasing node publishes a hint that the
 * waiter's node answers by reading the lock again.
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

  /** The node's layer service in field {@code field}, left without watches: its waiters learn of a grant only from a hint. */
  private static <S> S withoutWatches(ServiceFixture s, String field) throws Exception {
    Field f = CoordinationVerticle.class.getDeclaredField(field);
    f.setAccessible(true);
    @SuppressWarnings("unchecked")
    S service = (S) f.get(s.service);
    Field off = service.getClass().getDeclaredField("watchesDisabled");
    off.setAccessible(true);
    off.setBoolean(service, true);
    return service;
  }

  /**
   * Two clustered nodes serving {@code config}, each layer service in {@code field} without watches, and each node's
   * hint consumer of {@code address} known to the other; the services of the nodes, in order.
   */
  private <S> List<S> twoNodes(JsonObject config, String field, java.util.function.Function<CoordinationConfig, String> address)
      throws Exception {
    config.getJsonObject("http").put("enabled", false);
    JsonObject cluster = new JsonObject().put("enabled", true).put("nodeLeaseMs", 30_000)
        .put("heartbeatIntervalMs", 300).put("reaperIntervalMs", 100).put("logRetentionMs", 60_000);
    CoordinationConfig c = CoordinationConfig.from(config);
    List<S> stores = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      Vertx node = await(Vertx.builder().withClusterManager(new FdbClusterManager(CoordinationMain.clusterOptions(cluster, c, db)))
          .buildClustered());
      nodes.add(node);
      ServiceFixture s = ServiceFixture.start(node, config, db);
      services.add(s);
      stores.add(withoutWatches(s, field));
    }
    String hints = LayerVerticle.handOffAddress(address.apply(c));
    eventually("both nodes listen for hints", Duration.ofSeconds(30), () -> registrations(nodes.get(0), hints) == 2
        && registrations(nodes.get(1), hints) == 2);
    return stores;
  }

  @Test
  void anAcquireWaitingOnOneNodeIsGrantedByAHintFromTheReleasingNode() throws Exception {
    JsonObject config = ServiceFixture.baseConfig();
    // A lease far above the test: a hand-off nobody noticed could only come back through an expiry.
    config.getJsonObject("mutex").put("leaseMs", 60_000).put("heartbeatIntervalMs", 1000);
    CoordinationConfig c = CoordinationConfig.from(config);
    MutexService store = this.<MutexService>twoNodes(config, "mutexes", CoordinationConfig::mutexAddress).get(0);
    String address = c.mutexAddress();
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

  /**
   * A semaphore of one permit handed between requests served by either node: waits set no watch and heartbeat only
   * every 30 s, so a grant reaches a wait on the other node only through a hint.
   */
  @Test
  void aPermitWaitedForOnOneNodeIsGrantedByAHintFromTheReleasingNode() throws Exception {
    JsonObject config = ServiceFixture.baseConfig();
    config.put("semaphore", new JsonObject().put("leaseMs", 60_000).put("heartbeatIntervalMs", 30_000));
    CoordinationConfig c = CoordinationConfig.from(config);
    SemaphoreService store = this.<SemaphoreService>twoNodes(config, "semaphores", CoordinationConfig::semaphoreAddress)
        .get(0);
    String address = c.semaphoreAddress();
    JsonObject held = services.get(0).request(address, SemaphoreWire.ACQUIRE, new JsonObject().put("name", "s")
        .put("permits", 1).put("owner", "owner-0"));
    for (int i = 1; i <= 6; i++) {
      String next = "owner-" + i;
      Future<JsonObject> waiting = services.get(i % 2).client.request(address, SemaphoreWire.ACQUIRE,
          new JsonObject().put("name", "s").put("permits", 1).put("owner", next).put("timeoutMs", 20_000), 30_000);
      eventually(next + " queued", Duration.ofSeconds(20), () -> store.state("s").join().waiters().equals(List.of(next)));
      services.get(1 - i % 2).request(address, SemaphoreWire.RELEASE, grant(held));
      JsonObject granted = await(waiting);
      assertEquals(next, granted.getString("owner"), granted.encode());
      assertTrue(FencingToken.parse(granted.getString("token")).isNewerThan(FencingToken.parse(held.getString("token"))));
      held = granted;
    }
    services.get(0).request(address, SemaphoreWire.RELEASE, grant(held));
    assertEquals(List.of(), store.state("s").join().holders());
  }

  /** As the semaphore's, with a writer handing a read-write lock to two readers waiting on the other node at once. */
  @Test
  void readersWaitingOnOneNodeAreGrantedByAHintFromTheReleasingNode() throws Exception {
    JsonObject config = ServiceFixture.baseConfig();
    config.put("rwlock", new JsonObject().put("leaseMs", 60_000).put("heartbeatIntervalMs", 30_000));
    CoordinationConfig c = CoordinationConfig.from(config);
    ReadWriteLockService store = this.<ReadWriteLockService>twoNodes(config, "readWriteLocks",
        CoordinationConfig::readWriteLockAddress).get(0);
    String address = c.readWriteLockAddress();
    JsonObject writer = services.get(0).request(address, ReadWriteLockWire.ACQUIRE, new JsonObject().put("name", "l")
        .put("owner", "writer-0").put("mode", "write"));
    for (int i = 1; i <= 4; i++) {
      ServiceFixture waitingOn = services.get(i % 2);
      List<Future<JsonObject>> readers = new ArrayList<>();
      for (String reader : List.of("reader-" + i + "a", "reader-" + i + "b")) {
        readers.add(waitingOn.client.request(address, ReadWriteLockWire.ACQUIRE, new JsonObject().put("name", "l")
            .put("owner", reader).put("mode", "read").put("timeoutMs", 20_000), 30_000));
      }
      eventually("two readers queued", Duration.ofSeconds(20), () -> store.state("l").join().queue().size() == 2);
      services.get(1 - i % 2).request(address, ReadWriteLockWire.RELEASE, grant(writer));
      for (Future<JsonObject> r : readers) {
        JsonObject granted = await(r);
        assertEquals("read", granted.getString("mode").toLowerCase(), granted.encode());
        services.get(i % 2).request(address, ReadWriteLockWire.RELEASE, grant(granted));
      }
      Future<JsonObject> nextWriter = waitingOn.client.request(address, ReadWriteLockWire.ACQUIRE,
          new JsonObject().put("name", "l").put("owner", "writer-" + i).put("mode", "write").put("timeoutMs", 20_000),
          30_000);
      writer = await(nextWriter);
      assertEquals("writer-" + i, writer.getString("owner"));
    }
    services.get(0).request(address, ReadWriteLockWire.RELEASE, grant(writer));
    assertEquals(List.of(), store.state("l").join().holders());
  }

  private static JsonObject grant(JsonObject held) {
    return new JsonObject().put("name", held.getString("name")).put("owner", held.getString("owner"))
        .put("token", held.getString("token"));
  }

  private static int registrations(Vertx node, String address) {
    Promise<List<RegistrationInfo>> p = Promise.promise();
    ((VertxInternal) node).clusterManager().getRegistrations(address, p);
    return await(p.future()).size();
  }
}
