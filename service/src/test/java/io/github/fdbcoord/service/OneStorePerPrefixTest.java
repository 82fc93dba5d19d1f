package io.github.fdbcoord.service;

import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.test.fakecluster.FakeClusterManager;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.github.fdbcoord.service.ServiceFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One store per event-bus prefix: a host whose store differs from the one already served on its
 * prefix refuses to start and names both stores; hosts over the same store are allowed, and the
 * same store keeps its id across restarts.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class OneStorePerPrefixTest {

  private static JsonObject config(String prefix, List<String> root) {
    JsonObject c = ServiceFixture.baseConfig().put("addressPrefix", prefix);
    if (root != null) {
      c.put("rootDirectory", new io.vertx.core.json.JsonArray(root));
    }
    c.getJsonObject("http").put("enabled", false);
    return c;
  }

  @Test
  void secondStoreOnOneVertxIsRefusedAndSameStoreIsAllowed() {
    Vertx vertx = Vertx.vertx();
    EmbeddedDatabase shared = EmbeddedDatabase.inMemory();
    try {
      String prefix = "p" + System.nanoTime();
      JsonObject cfg = config(prefix, List.of("root"));
      CoordinationVerticle first = new CoordinationVerticle(cfg, shared);
      String firstDeployment = await(vertx.deployVerticle(first));

      // Another (in-memory) store on the same prefix: refused, saying which store serves the prefix.
      CoordinationVerticle other = new CoordinationVerticle(cfg.copy());
      Throwable e = assertThrows(Throwable.class, () -> await(vertx.deployVerticle(other)));
      String m = e.getMessage();
      assertTrue(m.contains("another host already serves event-bus prefix '" + prefix + "'"), m);
      assertTrue(m.contains(first.storeId()), m);
      assertTrue(m.contains("embedded(in memory)"), m);
      assertEquals(List.of(first.storeId()), storeIds(vertx, prefix), "the refused host answers nothing");

      // The same database under another root is other data too.
      Throwable e2 = assertThrows(Throwable.class, () -> await(vertx.deployVerticle(
          new CoordinationVerticle(config(prefix, List.of("other-root")), shared))));
      assertTrue(e2.getMessage().contains("different store"), e2.getMessage());

      // The same store (shared Database, same root): allowed, same id.
      CoordinationVerticle second = new CoordinationVerticle(cfg.copy(), shared);
      await(vertx.deployVerticle(second));
      assertEquals(first.storeId(), second.storeId());
      List<Long> ids = await(second.client().intern("words", List.of("a", "b")));
      assertEquals(ids, await(first.client().intern("words", List.of("a", "b"))));

      // Another prefix with another store: no conflict.
      CoordinationVerticle elsewhere = new CoordinationVerticle(config(prefix + "-2", List.of("root")));
      await(vertx.deployVerticle(elsewhere));
      assertNotEquals(first.storeId(), elsewhere.storeId());

      // The id is the store's, not the process's: a restart over the same store finds it again.
      String id = first.storeId();
      await(vertx.undeploy(firstDeployment));
      CoordinationVerticle restarted = new CoordinationVerticle(cfg.copy(), shared);
      await(vertx.deployVerticle(restarted));
      assertEquals(id, restarted.storeId());
    } finally {
      await(vertx.close());
      shared.close();
    }
  }

  @Test
  void secondStoreOnAnotherClusteredNodeIsRefused() {
    Vertx nodeA = await(Vertx.builder().withClusterManager(new FakeClusterManager()).buildClustered());
    Vertx nodeB = await(Vertx.builder().withClusterManager(new FakeClusterManager()).buildClustered());
    EmbeddedDatabase shared = EmbeddedDatabase.inMemory();
    try {
      String prefix = "c" + System.nanoTime();
      JsonObject cfg = config(prefix, List.of("root"));
      CoordinationVerticle a = new CoordinationVerticle(cfg, shared);
      await(nodeA.deployVerticle(a));

      Throwable e = assertThrows(Throwable.class, () -> await(nodeB.deployVerticle(new CoordinationVerticle(cfg.copy()))));
      assertTrue(e.getMessage().contains("another host already serves event-bus prefix '" + prefix + "'"),
          e.getMessage());
      assertTrue(e.getMessage().contains(a.storeId()), e.getMessage());

      // Node B over the same store (as two nodes over one real cluster would be): allowed.
      CoordinationVerticle b = new CoordinationVerticle(cfg.copy(), shared);
      await(nodeB.deployVerticle(b));
      assertEquals(a.storeId(), b.storeId());
      for (int i = 0; i < 10; i++) {
        // Requests round-robin between the two hosts: every answer is the same store's.
        assertEquals(a.storeId(), storeIds(nodeB, prefix).get(0));
      }
    } finally {
      await(nodeB.close());
      await(nodeA.close());
      FakeClusterManager.reset();
      shared.close();
    }
  }

  /** The store id a host on {@code prefix} answers with. */
  private static List<String> storeIds(Vertx vertx, String prefix) {
    JsonObject reply = await(vertx.eventBus().<JsonObject>request(prefix + ".store", new JsonObject())).body();
    return List.of(reply.getString("storeId"));
  }
}
