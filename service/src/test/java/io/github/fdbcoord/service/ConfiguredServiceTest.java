package io.github.fdbcoord.service;

import com.apple.foundationdb.directory.DirectoryLayer;
import io.github.fdbcoord.store.StoreOptions;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;

import static io.github.fdbcoord.service.ServiceFixture.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The service as shipped: started from conf/config.json (data directory and port overridden), it answers /health. */
@ExtendWith(VertxExtension.class)
class ConfiguredServiceTest {

  /** The example docs/real-foundationdb.md starts a service with: read as the service reads it, without a cluster. */
  @Test
  void theClusterExampleServesHttpOnAFoundationDbCluster() throws Exception {
    CoordinationConfig example = CoordinationConfig.from(new JsonObject(Files.readString(Path.of("../conf/cluster-example.json"))));
    assertEquals(StoreOptions.Engine.CLUSTER, example.store().engine());
    assertEquals(Path.of("/etc/foundationdb/fdb.cluster"), example.store().clusterFile());
    assertTrue(example.httpEnabled(), "the recipe's service answers HTTP");
    assertEquals("0.0.0.0", example.httpHost());
    assertEquals(List.of("coord.example.internal"), example.httpOptions().getAllowedHosts());
  }

  @Test
  void serviceFromConfAnswersHealthAndKeepsDataAcrossRestarts(Vertx vertx, @TempDir Path data) throws Exception {
    JsonObject config = new JsonObject(Files.readString(Path.of("../conf/config.json")));
    assertEquals("127.0.0.1", config.getJsonObject("http").getString("host"));
    assertEquals(8080, config.getJsonObject("http").getInteger("port"));
    assertEquals("embedded", config.getJsonObject("store").getString("engine"));
    config.getJsonObject("store").put("dataDirectory", data.toString());
    config.getJsonObject("http").put("port", 0);
    config.put("rootDirectory", new JsonArray().add("test").add(UUID.randomUUID().toString()));

    String first;
    {
      CoordinationVerticle service = new CoordinationVerticle(config);
      String id = await(vertx.deployVerticle(service));
      WebClient web = WebClient.create(vertx);
      var health = await(web.get(service.httpPort(), "127.0.0.1", "/health").send());
      assertEquals(200, health.statusCode(), health.bodyAsString());
      assertEquals("UP", health.bodyAsJsonObject().getString("status"));
      assertTrue(health.bodyAsJsonObject().getString("store").contains(data.toString()), health.bodyAsString());
      first = await(service.client().intern("durable", List.of("kept"))).get(0).toString();
      web.close();
      await(vertx.undeploy(id));
    }
    CoordinationVerticle again = new CoordinationVerticle(config);
    String id = await(vertx.deployVerticle(again));
    assertEquals(first, await(again.client().resolve("durable", List.of("kept"))).get(0).getAsLong() + "",
        "the interned id survived a restart of the service on the same data directory");
    List<String> root = config.getJsonArray("rootDirectory").getList();
    again.database().runAsync(tr -> DirectoryLayer.getDefault().removeIfExists(tr, root)).join();
    await(vertx.undeploy(id));
  }

  @Test
  void invalidConfigurationIsRefusedWithTheKey(Vertx vertx) {
    for (JsonObject bad : List.of(
        new JsonObject().put("http", new JsonObject().put("port", "80")),
        new JsonObject().put("store", new JsonObject().put("engine", "rocks")),
        new JsonObject().put("mutex", new JsonObject().put("leaseMs", 100).put("heartbeatIntervalMs", 200)),
        new JsonObject().put("workerPoolSize", 0),
        new JsonObject().put("rootDirectory", new JsonArray()))) {
      Throwable e = assertThrows(Throwable.class, () -> await(vertx.deployVerticle(new CoordinationVerticle(bad))));
      assertTrue(e.getMessage().startsWith("invalid coordination config"), e.getMessage());
    }
  }
}
