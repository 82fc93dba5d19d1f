package io.github.fdbcoord.cluster.vertx;

import io.vertx.core.spi.cluster.ClusterManager;
import org.junit.Test;

/** vertx-core's {@code ClusteredAsynchronousLockTest} on {@link io.github.fdbcoord.cluster.FdbClusterManager}, all nodes on one embedded database. */
public class FdbClusteredAsynchronousLockTest extends io.vertx.tests.shareddata.ClusteredAsynchronousLockTest {
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

  /** Ignored in the base class (the fake manager cannot release a closed node's locks); this one does. */
  @Override
  @Test
  public void testLockReleasedForClosedNode() throws Exception {
    super.testLockReleasedForClosedNode();
  }

  /** Ignored in the base class; a node that leaves releases its locks (handed to the next waiter). */
  @Override
  @Test
  public void testLockReleasedForKilledNode() throws Exception {
    super.testLockReleasedForKilledNode();
  }
}
