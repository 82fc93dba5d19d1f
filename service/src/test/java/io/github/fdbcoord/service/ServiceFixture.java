package io.github.fdbcoord.service;

import io.github.fdbcoord.cluster.FdbClusterManager;
import io.vertx.core.internal.VertxInternal;
import io.github.fdbcoord.client.CoordinationClient;
import com.apple.foundationdb.Database;
import com.apple.foundationdb.directory.DirectoryLayer;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;

import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A deployed coordination service for one test: in-memory embedded store (or a shared database),
 * layers under a random root directory removed on close, HTTP on a free loopback port, short
 * mutex leases.
 */
final class ServiceFixture implements AutoCloseable {
  final Vertx vertx;
  final CoordinationVerticle service;
  final String deploymentId;
  final List<String> root;
  final String testDirectory;
  final CoordinationClient client;
  private WebClient web;

  private ServiceFixture(Vertx vertx, CoordinationVerticle service, String deploymentId, List<String> root,
      String testDirectory) {
    this.vertx = vertx;
    this.service = service;
    this.deploymentId = deploymentId;
    this.root = root;
    this.testDirectory = testDirectory;
    this.client = service.client();
  }

  static JsonObject baseConfig() {
    String id = UUID.randomUUID().toString();
    return new JsonObject()
        .put("rootDirectory", new JsonArray().add("test").add(id))
        .put("workerPoolSize", 4)
        .put("http", new JsonObject().put("enabled", true).put("port", 0).put("bodyLimit", 64 * 1024))
        .put("mutex", new JsonObject().put("leaseMs", 1500).put("heartbeatIntervalMs", 300)
            .put("reaperIntervalMs", 100).put("maxAcquireTimeoutMs", 20_000))
        .put("interner", new JsonObject().put("maxBatchSize", 200));
  }

  static ServiceFixture start(Vertx vertx) {
    return start(vertx, baseConfig(), null);
  }

  static ServiceFixture start(Vertx vertx, JsonObject config, Database shared) {
    CoordinationVerticle service = new CoordinationVerticle(config, shared);
    String id = await(vertx.deployVerticle(service));
    List<String> root = config.getJsonArray("rootDirectory").getList();
    return new ServiceFixture(vertx, service, id, root, root.get(1));
  }

  /**
   * A random directory path for this test's own directories: outside the service's root
   * ({@code ["test", id]}), which the directory API refuses.
   */
  List<String> dir(String... rest) {
    List<String> p = new java.util.ArrayList<>(List.of("test-dirs", testDirectory));
    p.addAll(List.of(rest));
    return p;
  }

  WebClient web() {
    if (web == null) {
      web = WebClient.create(vertx, new WebClientOptions().setDefaultHost("127.0.0.1")
          .setDefaultPort(service.httpPort()));
    }
    return web;
  }

  JsonObject request(String address, String action, JsonObject body) {
    return await(client.request(address, action, body));
  }

  /** Asserts that the request fails with {@code code} and the failure message starts with {@code reason}. */
  ReplyException failure(String address, String action, JsonObject body, int code, String reason) {
    try {
      JsonObject ok = await(client.request(address, action, body));
      fail("expected failure " + code + "/" + reason + " from " + action + " " + body + ", got " + ok);
      return null;
    } catch (RuntimeException e) {
      Throwable t = e instanceof ReplyException ? e : e.getCause() != null ? e.getCause() : e;
      ReplyException r = assertInstanceOf(ReplyException.class, t, () -> "not a ReplyException: " + e);
      assertEquals(code, r.failureCode(), () -> "failure code of " + action + " " + body + ": " + r.getMessage());
      assertTrue(r.getMessage().startsWith(reason + ": "), () -> "reason of " + r.getMessage());
      return r;
    }
  }

  /** Asserts that {@code future} fails with {@code code} and a message starting with {@code reason}. */
  static ReplyException failure(io.vertx.core.Future<?> future, int code, String reason) {
    Throwable t = org.junit.jupiter.api.Assertions.assertThrows(RuntimeException.class, () -> await(future));
    ReplyException r = assertInstanceOf(ReplyException.class, t instanceof ReplyException ? t : t.getCause(),
        () -> "not a ReplyException: " + t);
    assertEquals(code, r.failureCode(), r::getMessage);
    assertTrue(r.getMessage().startsWith(reason + ": "), r::getMessage);
    return r;
  }

  static <T> T await(io.vertx.core.Future<T> f) {
    try {
      return f.await(20, TimeUnit.SECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      throw new AssertionError("timed out waiting for " + f, e);
    }
  }

  /**
   * Removes this test's directories and the service's root, then undeploys. Not the directories on a
   * node of an {@link FdbClusterManager}: its cluster's records live under the service's root, and
   * removing them under running nodes evicts them all (they re-join, and requests sent meanwhile are
   * lost); such a test owns its database and discards it whole.
   */
  @Override
  public void close() {
    try {
      boolean clusterUnderRoot = ((VertxInternal) vertx).clusterManager() instanceof FdbClusterManager;
      if (vertx.deploymentIDs().contains(deploymentId) && !clusterUnderRoot) {
        await(client.removeDirectoryIfExists(List.of("test-dirs", testDirectory)));
        // The service's own root is out of the directory API's reach: remove it directly.
        service.database().runAsync(tr -> DirectoryLayer.getDefault().removeIfExists(tr, root)).join();
      }
    } finally {
      if (web != null) {
        web.close();
      }
      if (vertx.deploymentIDs().contains(deploymentId)) {
        await(vertx.undeploy(deploymentId));
      }
    }
  }
}
