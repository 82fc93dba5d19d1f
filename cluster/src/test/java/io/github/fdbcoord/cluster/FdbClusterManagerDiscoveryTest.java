package io.github.fdbcoord.cluster;

import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VerticleBase;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.spi.cluster.ClusterManager;
import io.vertx.launcher.application.HookContext;
import io.vertx.launcher.application.VertxApplication;
import io.vertx.launcher.application.VertxApplicationHooks;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * How Vert.x 5 finds the manager when none is given (the {@code VertxServiceProvider} services
 * file, as {@code Vertx.builder().buildClustered()} and the launcher's {@code -cluster} look), and
 * the warning of a node that opens a store no other JVM can reach.
 *
 * <p>The test classpath also registers vertx-core's FakeClusterManager and HazelcastClusterManager;
 * Vert.x takes the first provider found, and this module's classes come first on surefire's
 * classpath, so without this module's services file these tests get FakeClusterManager and fail.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FdbClusterManagerDiscoveryTest {

  /** Idles once deployed: what the launcher test deploys. */
  public static class IdleVerticle extends VerticleBase {
    @Override
    public Future<?> start() {
      return Future.succeededFuture();
    }
  }

  @Test
  void buildClusteredWithoutAManagerFormsAClusterOnFdbClusterManager() throws Exception {
    Vertx vertx = Vertx.builder().buildClustered().await(60, TimeUnit.SECONDS);
    try {
      ClusterManager manager = ((VertxInternal) vertx).clusterManager();
      FdbClusterManager fdb = assertInstanceOf(FdbClusterManager.class, manager);
      assertTrue(fdb.isActive());
      assertEquals(List.of(fdb.getNodeId()), fdb.getNodes());
      assertEquals(1L, vertx.sharedData().getCounter("discovered").compose(c -> c.incrementAndGet()).await(30, TimeUnit.SECONDS));
    } finally {
      vertx.close().await(60, TimeUnit.SECONDS);
    }
  }

  @Test
  void launcherWithClusterRunsOnFdbClusterManager() throws Exception {
    AtomicReference<Vertx> started = new AtomicReference<>();
    VertxApplicationHooks hooks = new VertxApplicationHooks() {
      @Override
      public void afterVerticleDeployed(HookContext context) {
        started.set(context.vertx());
      }
    };
    int exit = new VertxApplication(new String[] {"-cluster", IdleVerticle.class.getName()}, hooks).launch();
    Vertx vertx = started.get();
    try {
      assertEquals(0, exit);
      assertNotNull(vertx, "the verticle was deployed");
      FdbClusterManager fdb = assertInstanceOf(FdbClusterManager.class, ((VertxInternal) vertx).clusterManager());
      assertTrue(fdb.isActive());
    } finally {
      if (vertx != null) {
        vertx.close().await(60, TimeUnit.SECONDS);
      }
    }
  }

  @Test
  void aNodeOnAPrivateInMemoryStoreWarnsThatNoOtherJvmCanJoin() throws Exception {
    List<LogRecord> warnings = capture(() -> {
      Vertx vertx = Vertx.builder().withClusterManager(new FdbClusterManager(FdbClusterManagerOptions.defaults()))
          .buildClustered().await(60, TimeUnit.SECONDS);
      vertx.close().await(60, TimeUnit.SECONDS);
    });
    assertTrue(warnings.stream().anyMatch(r -> r.getMessage().contains("private embedded store (in memory)")
        && r.getMessage().contains("no node of another JVM can join") && r.getMessage().contains("clusterFile")),
        "warnings: " + warnings.stream().map(LogRecord::getMessage).toList());
  }

  @Test
  void aNodeOnAHandedInDatabaseDoesNotWarn() throws Exception {
    try (EmbeddedDatabase db = EmbeddedDatabase.inMemory()) {
      List<LogRecord> warnings = capture(() -> {
        Vertx vertx = Vertx.builder().withClusterManager(new FdbClusterManager(FdbClusterManagerOptions.builder().database(db).build()))
            .buildClustered().await(60, TimeUnit.SECONDS);
        assertTrue(((VertxInternal) vertx).clusterManager().isActive());
        vertx.close().await(60, TimeUnit.SECONDS);
      });
      assertTrue(warnings.stream().noneMatch(r -> r.getMessage().contains("private embedded store")),
          "warnings: " + warnings.stream().map(LogRecord::getMessage).toList());
    }
  }

  private interface Body {
    void run() throws Exception;
  }

  /** The WARNING records of the manager's logger while {@code body} runs (vertx-core-logging writes to java.util.logging here). */
  private static List<LogRecord> capture(Body body) throws Exception {
    Logger logger = Logger.getLogger(FdbClusterManager.class.getName());
    List<LogRecord> records = new CopyOnWriteArrayList<>();
    Handler handler = new Handler() {
      @Override
      public void publish(LogRecord record) {
        if (record.getLevel().intValue() >= Level.WARNING.intValue()) {
          records.add(record);
        }
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    };
    logger.addHandler(handler);
    try {
      body.run();
    } finally {
      logger.removeHandler(handler);
    }
    return records;
  }
}
