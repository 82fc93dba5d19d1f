package io.github.fdbcoord.cluster;

import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.eventbus.impl.clustered.ClusteredEventBus;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.json.JsonObject;
import io.vertx.core.spi.cluster.NodeInfo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Where the clustered event bus listens: loopback unless told otherwise, since whoever reaches it
 * can send to every address of the cluster without authenticating.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class EventBusHostTest {

  private static Vertx clustered(FdbClusterManagerOptions options, EventBusOptions eventBus) throws Exception {
    return Vertx.builder().with(new VertxOptions().setEventBusOptions(eventBus))
        .withClusterManager(new FdbClusterManager(options)).buildClustered().await(60, TimeUnit.SECONDS);
  }

  private static NodeInfo nodeInfo(Vertx vertx) {
    return ((VertxInternal) vertx).clusterManager().getNodeInfo();
  }

  @Test
  void theEventBusListensOnLoopbackByDefault() throws Exception {
    Vertx vertx = clustered(FdbClusterManagerOptions.defaults(), new EventBusOptions());
    try {
      NodeInfo info = nodeInfo(vertx);
      assertEquals("127.0.0.1", info.host());
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress("127.0.0.1", info.port()), 2000); // it listens there
      }
      // Vert.x's own default: the machine's first network address. Not bound there.
      String external = ClusteredEventBus.defaultAddress();
      if (external != null && !external.startsWith("127.")) {
        assertThrows(IOException.class, () -> {
          try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(external, info.port()), 2000);
          }
        }, "the event bus answers on " + external);
      }
    } finally {
      vertx.close().await(60, TimeUnit.SECONDS);
    }
  }

  @Test
  void theConfiguredHostIsWhereItListens() throws Exception {
    FdbClusterManagerOptions options = new FdbClusterManagerOptions(new JsonObject().put("eventBusHost", "localhost"));
    assertEquals("localhost", options.eventBusHost());
    assertEquals("localhost", options.toJson().getString("eventBusHost"));
    Vertx vertx = clustered(options, new EventBusOptions());
    try {
      assertEquals("localhost", nodeInfo(vertx).host());
    } finally {
      vertx.close().await(60, TimeUnit.SECONDS);
    }
    // Vert.x's own EventBusOptions win over the manager's default, as with every cluster manager.
    vertx = clustered(FdbClusterManagerOptions.defaults(), new EventBusOptions().setHost("localhost"));
    try {
      assertEquals("localhost", nodeInfo(vertx).host());
    } finally {
      vertx.close().await(60, TimeUnit.SECONDS);
    }
  }
}
