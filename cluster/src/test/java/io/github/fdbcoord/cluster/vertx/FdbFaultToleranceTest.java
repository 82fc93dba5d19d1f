package io.github.fdbcoord.cluster.vertx;

import io.github.fdbcoord.cluster.FdbClusterManager;
import io.github.fdbcoord.testing.NativeClient;
import io.github.fdbcoord.testing.SharedFdb;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.internal.VertxBootstrap;
import io.vertx.core.spi.VertxServiceProvider;
import io.vertx.core.spi.cluster.ClusterManager;
import io.vertx.tests.eventbus.FaultToleranceVerticle;
import org.junit.Assume;
import org.junit.experimental.categories.Category;

import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * vertx-core's {@code FaultToleranceTest}: nodes in separate JVMs, killed with the process. They
 * can share a store only through a real FoundationDB, so it runs against the test JVM's
 * {@link SharedFdb} (an fdbserver started from local binaries, FDB_CLUSTER_FILE, or Docker) and is
 * skipped, saying why, where there is none (docs/real-foundationdb.md). Every JVM reads the same
 * options file: that cluster and a fresh directory.
 */
@Category(Slow.class)
public class FdbFaultToleranceTest extends io.vertx.tests.eventbus.FaultToleranceTest {
  private Path config;
  private String originalClassPath;
  private Path verticleClasses;

  @Override
  public void setUp() throws Exception {
    String reason = SharedFdb.unavailableReason();
    Assume.assumeTrue("FaultToleranceTest runs nodes in separate JVMs, which share a store only through a real"
        + " FoundationDB: " + reason, reason == null);
    String run = "fault-tolerance-" + UUID.randomUUID();
    config = Files.createTempFile("fdb-cluster-", ".json");
    // Leases as SharedStore's: the survivors must see the killed nodes leave within the suite's waits.
    Files.writeString(config, new JsonObject()
        .put("store", new JsonObject().put("engine", "cluster").put("clusterFile", SharedFdb.clusterFile().toString()))
        .put("directory", new JsonArray().add("fdb-coord-test").add(run))
        .put("lockDirectory", new JsonArray().add("fdb-coord-test").add(run + "-locks"))
        .put("nodeLeaseMs", SharedStore.LEASE.toMillis())
        .put("heartbeatIntervalMs", 500)
        .put("reaperIntervalMs", 250)
        .encode());
    System.setProperty(FdbClusterManager.CONFIG_PROPERTY, config.toString());
    // The external nodes start with Vertx.clusteredVertx(), which on Vert.x 5 takes the cluster
    // manager a VertxServiceProvider sets: vertx-core's tests jar registers its FakeClusterManager
    // that way, Hazelcast (the benchmark's peer) too, and FdbClusterManager is not one. So their
    // class path holds neither jar (the node's verticle is copied out of the tests jar), and a
    // provider of this test's sets FdbClusterManager.
    verticleClasses = copyVerticleClasses();
    String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    Path testsJar = Path.of(FaultToleranceVerticle.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    originalClassPath = System.getProperty("java.class.path");
    System.setProperty("java.class.path", Stream.concat(Stream.of(verticleClasses.toString()),
            Arrays.stream(classPath.split(File.pathSeparator))
                .filter(entry -> !entry.contains("hazelcast") && !Path.of(entry).equals(testsJar)))
        .collect(Collectors.joining(File.pathSeparator)));
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
      Files.deleteIfExists(config);
      deleteRecursively(verticleClasses);
    }
  }

  /** FaultToleranceVerticle's classes (the external node's main class and its lambdas), in a folder of their own. */
  private static Path copyVerticleClasses() throws IOException, URISyntaxException {
    Path folder = Files.createTempDirectory("fault-tolerance-verticle-");
    Path source = Path.of(FaultToleranceVerticle.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    String packagePath = FaultToleranceVerticle.class.getPackageName().replace('.', '/');
    String prefix = FaultToleranceVerticle.class.getSimpleName();
    try (FileSystem jar = FileSystems.newFileSystem(source);
         Stream<Path> classes = Files.list(jar.getPath(packagePath))) {
      Path target = Files.createDirectories(folder.resolve(packagePath));
      for (Path c : (Iterable<Path>) classes.filter(c -> c.getFileName().toString().startsWith(prefix))::iterator) {
        Files.copy(c, target.resolve(c.getFileName().toString()));
      }
    }
    Path services = Files.createDirectories(folder.resolve("META-INF/services"));
    Files.writeString(services.resolve(VertxServiceProvider.class.getName()), NodeClusterManager.class.getName() + "\n");
    return folder;
  }

  /**
   * Makes an external node's {@code Vertx.clusteredVertx()} use FdbClusterManager (configured by the
   * options file the node's system property names), as vertx-hazelcast's manager does for itself.
   */
  public static final class NodeClusterManager implements VertxServiceProvider {
    @Override
    public void init(VertxBootstrap bootstrap) {
      if (bootstrap.clusterManager() == null) {
        bootstrap.clusterManager(new FdbClusterManager());
      }
    }
  }

  private static void deleteRecursively(Path folder) throws IOException {
    if (folder == null) {
      return;
    }
    try (Stream<Path> paths = Files.walk(folder)) {
      for (Path p : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
        Files.deleteIfExists(p);
      }
    }
  }

  @Override
  protected ClusterManager getClusterManager() {
    return new FdbClusterManager();
  }

  /**
   * The options file, and the native client this JVM loaded (the child JVMs also inherit
   * surefire's LD_LIBRARY_PATH through ProcessBuilder's environment; the property makes them load
   * the same file when the library was found another way, e.g. FDB_CLIENT_LIB).
   */
  @Override
  protected List<String> getExternalNodeSystemProperties() {
    List<String> props = new ArrayList<>(super.getExternalNodeSystemProperties());
    props.add("-D" + FdbClusterManager.CONFIG_PROPERTY + "=" + config);
    String nativeClient = NativeClient.jvmProperty();
    if (nativeClient != null) {
      props.add(nativeClient);
    }
    return props;
  }
}
