package io.github.fdbcoord.cluster.vertx;

import io.vertx.core.spi.cluster.ClusterManager;

/** vertx-core's {@code NodeInfoTest} on {@link io.github.fdbcoord.cluster.FdbClusterManager}, all nodes on one embedded database. */
public class FdbNodeInfoTest extends io.vertx.tests.eventbus.NodeInfoTest {
  private SharedStore store;

  @Override
  public void setUp() throws Exception {
    store = new SharedStore();
    super.setUp();
  }

  @Override
  protected void tearDown() throws Exception {
    try {
      super.tearDown();
    } finally {
      store.close();
    }
  }

  @Override
  protected ClusterManager getClusterManager() {
    return store.newManager();
  }
}
