package io.github.fdbcoord.service;

import io.github.fdbcoord.cluster.FdbClusterManager;
import io.github.fdbcoord.cluster.FdbClusterManagerOptions;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.vertx.core.Vertx;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.Lock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.github.fdbcoord.service.ServiceFixture.await;
import static io.github.fdbcoord.service.WaiterLivenessTest.eventually;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The service clustered as {@code CoordinationMain} runs it with {@code cluster.enabled}: two nodes
 * on {@link FdbClusterManager} over the service's store; a SharedData lock taken on one node is a
 * mutex of the service, visible through its event-bus API on the other.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FdbClusteredServiceTest {
  private EmbeddedDatabase db;
  private Vertx nodeA;
  private Vertx nodeB;
  private ServiceFixture service;
  private JsonObject config;
  private JsonObject cluster;

  @BeforeEach
  void start() {
    db = EmbeddedDatabase.inMemory();
    config = ServiceFixture.baseConfig();
    config.getJsonObject("http").put("enabled", false);
    // A lease far above any pause a loaded machine gives a heartbeat: these tests expect both nodes
    // listed until one closes, and a close removes its node at once, so they never wait for a lease
    // (the membership log's retention must be at least twice the lease).
    cluster = new JsonObject().put("enabled", true).put("nodeLeaseMs", 30_000)
        .put("heartbeatIntervalMs", 300).put("reaperIntervalMs", 100).put("logRetentionMs", 60_000);
    CoordinationConfig c = CoordinationConfig.from(config);
    nodeA = await(Vertx.builder().withClusterManager(new FdbClusterManager(CoordinationMain.clusterOptions(cluster, c, db)))
        .buildClustered());
    nodeB = await(Vertx.builder().withClusterManager(new FdbClusterManager(CoordinationMain.clusterOptions(cluster, c, db)))
        .buildClustered());
    service = ServiceFixture.start(nodeA, config, db);
  }

  @AfterEach
  void stop() {
    service.close();
    if (nodeB != null) {
      await(nodeB.close());
    }
    await(nodeA.close());
    db.close();
  }

  @Test
  void aSharedDataLockOnOneNodeIsAMutexOfTheServiceOnTheOther() throws Exception {
    Lock lock = await(nodeB.sharedData().getLockWithTimeout("orders", 5000));
    String nodeBId = ((VertxInternal) nodeB).clusterManager().getNodeId();
    JsonObject state = service.request(service.client.mutexAddress(), "state", new JsonObject().put("name", "orders"));
    assertTrue(state.getBoolean("held"), state.encode());
    assertTrue(state.getJsonObject("owner").getString("owner").startsWith(nodeBId + "/"), state.encode());
    lock.release();
    eventually("the release reaches the service", Duration.ofSeconds(30),
        () -> !service.request(service.client.mutexAddress(), "state", new JsonObject().put("name", "orders")).getBoolean("held"));
    // Both stay members (none evicted); A may not have read B's join yet.
    eventually("node A lists both nodes", Duration.ofSeconds(30), () -> ((VertxInternal) nodeA).clusterManager().getNodes().size() == 2);
  }

  @Test
  void theNodesRouteListsTheClustersMembers() throws InterruptedException {
    await(nodeA.undeploy(service.deploymentId));
    config.getJsonObject("http").put("enabled", true).put("port", 0);
    service = ServiceFixture.start(nodeA, config, db);
    String a = ((VertxInternal) nodeA).clusterManager().getNodeId();
    String b = ((VertxInternal) nodeB).clusterManager().getNodeId();
    // Node A learns of B from the membership log, on a thread of its own, some time after B's join
    // returned: the route lists B once A has read that entry.
    eventually("node A lists node B", Duration.ofSeconds(30), () -> nodesListed().size() == 2);
    JsonArray nodes = nodesListed();
    assertEquals(2, nodes.size(), nodes.encode());
    assertEquals(a, nodes.getJsonObject(0).getString("id"));
    assertTrue(nodes.getJsonObject(0).getBoolean("self"));
    assertEquals("UP", nodes.getJsonObject(0).getString("status"));
    assertEquals(b, nodes.getJsonObject(1).getString("id"));
    assertEquals("MEMBER", nodes.getJsonObject(1).getString("status"));
    // B runs no service: what its node info says (the event bus's address) names it.
    eventually("node B's event-bus address", Duration.ofSeconds(30), () -> member(b).getString("eventBus") != null);
    assertEquals(member(b).getString("eventBus"), member(b).getString("name"));

    await(nodeB.close());
    nodeB = null;
    // Gone from the cluster manager's members, it stays listed, marked, for the retention.
    eventually("a node that left is listed as left", Duration.ofSeconds(30), () -> "LEFT".equals(member(b).getString("status")));
    assertEquals(1, nodesListed().size(), "the live nodes, as before");
    assertEquals(b, departedListed().getJsonObject(0).getString("id"));
  }

  /**
   * A member shows what a person maps it to (its configured name, host, process, uptime); once it
   * leaves it stays listed, marked, for the configured retention (docs/dashboard.md).
   */
  @Test
  void aMemberShowsItsNameHostAndProcessAndStaysListedAsLeftAfterItLeaves() throws InterruptedException {
    // Undeployed, not closed: the fixture's close removes the service's root directory, the cluster's
    // records with it, and both nodes then found themselves evicted and re-joined while the next
    // services started (a probe's reply to a node the other did not yet know again was lost: 5 s).
    await(nodeA.undeploy(service.deploymentId));
    config.getJsonObject("http").put("enabled", true).put("port", 0).put("departedRetentionMs", 60_000);
    service = ServiceFixture.start(nodeA, config, db);
    JsonObject configB = config.copy().put("nodeName", "node-b");
    ServiceFixture serviceB = ServiceFixture.start(nodeB, configB, db);
    String b = ((VertxInternal) nodeB).clusterManager().getNodeId();
    eventually("node A lists node B with its name", Duration.ofSeconds(30),
        () -> "node-b".equals(member(b).getString("name")));
    JsonObject member = member(b);
    assertEquals("MEMBER", member.getString("status"), member.encode());
    assertEquals(ProcessHandle.current().pid(), member.getLong("pid"), member.encode());
    assertFalse(member.getString("host", "").isEmpty(), member.encode());
    assertTrue(member.getLong("uptimeMs") >= 0, member.encode());
    assertEquals("127.0.0.1:" + serviceB.service.httpPort(), member.getString("http"), member.encode());

    // Closing B's Vert.x undeploys its service (the fixture's close would remove the shared root directory).
    await(nodeB.close());
    nodeB = null;
    eventually("node B is listed as left", Duration.ofSeconds(30), () -> "LEFT".equals(member(b).getString("status")));
    JsonObject left = member(b);
    assertEquals("node-b", left.getString("name"), left.encode());
    assertNotNull(java.time.Instant.parse(left.getString("departedAt")), left.encode());
    assertTrue(left.getLong("departedMs") >= 0, left.encode());
    assertFalse(left.getBoolean("self"), left.encode());
  }

  /** At most {@code http.maxDepartedNodes} members that went are listed (the latest), each for {@code http.departedRetentionMs}. */
  @Test
  void membersThatWentAreListedUpToTheBoundAndForTheRetention() throws InterruptedException {
    // Undeployed, not closed: the fixture's close removes the service's root directory, the cluster's
    // with it, and a node joining after that would be in a cluster of its own.
    await(nodeA.undeploy(service.deploymentId));
    config.getJsonObject("http").put("enabled", true).put("port", 0).put("maxDepartedNodes", 1);
    service = ServiceFixture.start(nodeA, config, db);
    Vertx nodeC = await(Vertx.builder().withClusterManager(new FdbClusterManager(CoordinationMain.clusterOptions(cluster,
        CoordinationConfig.from(config), db))).buildClustered());
    String b = ((VertxInternal) nodeB).clusterManager().getNodeId();
    String c = ((VertxInternal) nodeC).clusterManager().getNodeId();
    eventually("node A lists B and C", Duration.ofSeconds(30), () -> nodesListed().size() == 3, () -> nodesListed().encode());
    await(nodeB.close());
    nodeB = null;
    eventually("B is listed as left", Duration.ofSeconds(30), () -> "LEFT".equals(member(b).getString("status")));
    await(nodeC.close());
    eventually("C is listed as left", Duration.ofSeconds(30), () -> "LEFT".equals(member(c).getString("status")));
    eventually("B made room for C", Duration.ofSeconds(30), () -> member(b).isEmpty());
    assertEquals(1, departedListed().size(), departedListed().encode());

    await(nodeA.undeploy(service.deploymentId));
    config.getJsonObject("http").put("departedRetentionMs", 300);
    service = ServiceFixture.start(nodeA, config, db);
    nodeB = await(Vertx.builder().withClusterManager(new FdbClusterManager(CoordinationMain.clusterOptions(cluster,
        CoordinationConfig.from(config), db))).buildClustered());
    String b2 = ((VertxInternal) nodeB).clusterManager().getNodeId();
    eventually("node A lists the new B", Duration.ofSeconds(30), () -> !member(b2).isEmpty());
    await(nodeB.close());
    nodeB = null;
    eventually("past the retention, the new B is no longer listed", Duration.ofSeconds(30),
        () -> member(b2).isEmpty() && departedListed().isEmpty());
  }

  /** The entry of node {@code id} in node A's {@code /nodes}, live or departed, or an empty object. */
  private JsonObject member(String id) {
    JsonObject answer = await(service.web().get("/nodes").send()).bodyAsJsonObject();
    return java.util.stream.Stream.concat(answer.getJsonArray("nodes").stream(), answer.getJsonArray("departed").stream())
        .map(JsonObject.class::cast).filter(n -> id.equals(n.getString("id"))).findFirst().orElse(new JsonObject());
  }

  private JsonArray departedListed() {
    return await(service.web().get("/nodes").send()).bodyAsJsonObject().getJsonArray("departed");
  }

  private JsonArray nodesListed() {
    return await(service.web().get("/nodes").send()).bodyAsJsonObject().getJsonArray("nodes");
  }

  @Test
  void clusterOptionsDefaultToTheServicesDirectoriesAndRefuseAStoreOfTheirOwn() {
    CoordinationConfig c = CoordinationConfig.from(config);
    FdbClusterManagerOptions o = CoordinationMain.clusterOptions(new JsonObject().put("enabled", true), c, db);
    List<String> root = config.getJsonArray("rootDirectory").getList();
    assertEquals(List.of(root.get(0), root.get(1), "mutex"), o.lockDirectory());
    assertEquals(List.of(root.get(0), root.get(1), "cluster"), o.directory());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> CoordinationMain.clusterOptions(new JsonObject().put("clusterFile", "/etc/fdb.cluster"), c, db));
    assertTrue(e.getMessage().contains("service's store"), e.getMessage());
    assertThrows(IllegalArgumentException.class,
        () -> CoordinationMain.clusterOptions(new JsonObject().put("leaseMillis", 5), c, db));
    assertFalse(o.toJson().containsKey("enabled"));
    assertEquals(new JsonArray().add(root.get(0)).add(root.get(1)).add("cluster"), o.toJson().getJsonArray("directory"));
  }
}
