package io.github.fdbcoord.cluster.vertx;

import io.github.fdbcoord.cluster.FdbClusterManager;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.spi.cluster.ClusterManager;
import org.junit.Assume;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * vertx-core's {@code FaultToleranceTest}: nodes in separate JVMs, killed with the process. They
 * can share a store only through a real FoundationDB cluster, so it runs where
 * {@code FDB_CLUSTER_FILE} names one (and libfdb_c is installed) and is skipped otherwise
 * (docs/cluster-manager.md). Every JVM reads the same options file: the cluster and a fresh directory.
 */
public class FdbFaultToleranceTest extends io.vertx.tests.eventbus.FaultToleranceTest {
  private static final String CLUSTER_FILE = System.getenv("FDB_CLUSTER_FILE");
  private Path config;
  private String originalClassPath;

  @Override
  public void setUp() throws Exception {
    Assume.assumeTrue("FaultToleranceTest runs nodes in separate JVMs, which share a store only through a real"
        + " FoundationDB cluster: set FDB_CLUSTER_FILE to run it", CLUSTER_FILE != null && !CLUSTER_FILE.isEmpty());
    config = Files.createTempFile("fdb-cluster-", ".json");
    Files.writeString(config, new JsonObject()
        .put("store", "cluster")
        .put("clusterFile", CLUSTER_FILE)
        .put("directory", new JsonArray().add("fdb-coord-test").add("fault-tolerance-" + UUID.randomUUID()))
        .encode());
    System.setProperty(FdbClusterManager.CONFIG_PROPERTY, config.toString());
    // The external nodes start with Vertx.clusteredVertx(), which takes the first ClusterManager the
    // service loader finds: keep the benchmark's Hazelcast peer off their class path.
    String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    originalClassPath = System.getProperty("java.class.path");
    System.setProperty("java.class.path", java.util.Arrays.stream(classPath.split(java.io.File.pathSeparator))
        .filter(entry -> !entry.contains("hazelcast"))
        .collect(java.util.stream.Collectors.joining(java.io.File.pathSeparator)));
    super.setUp();
  }

  @Override
  protected void tearDown() throws Exception {
    if (config == null) {
      return; // skipped before anything was started
    }
    try {
      super.tearDown();
    } finally {
      System.clearProperty(FdbClusterManager.CONFIG_PROPERTY);
      System.setProperty("java.class.path", originalClassPath);
      if (config != null) {
        Files.deleteIfExists(config);
      }
    }
  }

  @Override
  protected ClusterManager getClusterManager() {
    return new FdbClusterManager();
  }

  @Override
  protected List<String> getExternalNodeSystemProperties() {
    List<String> props = new ArrayList<>(super.getExternalNodeSystemProperties());
    props.add("-D" + FdbClusterManager.CONFIG_PROPERTY + "=" + config);
    return props;
  }
}
