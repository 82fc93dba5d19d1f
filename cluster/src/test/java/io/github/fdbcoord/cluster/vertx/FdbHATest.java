package io.github.fdbcoord.cluster.vertx;

import io.vertx.core.spi.cluster.ClusterManager;
import org.junit.experimental.categories.Category;

/** vertx-core's {@code HATest} on {@link io.github.fdbcoord.cluster.FdbClusterManager}, all nodes on one embedded database. */
@Category(Slow.class)
public class FdbHATest extends io.vertx.tests.ha.HATest {
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
