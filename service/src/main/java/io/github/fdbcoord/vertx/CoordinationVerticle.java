package io.github.fdbcoord.vertx;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.directory.DirectoryLayer;
import io.github.fdbcoord.allocator.AllocatorService;
import io.github.fdbcoord.allocator.AllocatorServiceOptions;
import io.github.fdbcoord.directory.DirectoryService;
import io.github.fdbcoord.directory.DirectoryServiceOptions;
import io.github.fdbcoord.interner.InternerOptions;
import io.github.fdbcoord.interner.InternerService;
import io.github.fdbcoord.mutex.MutexOptions;
import io.github.fdbcoord.mutex.MutexService;
import io.github.fdbcoord.store.Store;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The whole coordination service as one verticle: reads a {@link CoordinationConfig}, opens the
 * store on worker threads, and deploys the four layer verticles and (unless disabled) the HTTP
 * server. Undeploying it releases the mutexes held through this node, stops the reaper and closes
 * the store it opened.
 *
 * <pre>
 * vertx.deployVerticle(new CoordinationVerticle(new JsonObject().put("http", ...)));
 * </pre>
 *
 * <p>With a {@link Database} given to the constructor, the service uses it (several Vert.x
 * instances may share one) and leaves it open on stop.
 */
public final class CoordinationVerticle extends VerticleBase {
  private static final Logger LOG = Logger.getLogger(CoordinationVerticle.class.getName());

  private final JsonObject explicitConfig;
  private final Database sharedDatabase;
  private final Metrics metrics;
  private CoordinationConfig config;
  private StoreWorkers workers;
  private Store store;
  private Database database;
  private MutexService mutexes;
  private HttpVerticle http;
  private MutexVerticle mutexVerticle;
  private final List<String> deployments = new ArrayList<>();

  /** Configured by the deployment's config (DeploymentOptions.setConfig). */
  public CoordinationVerticle() {
    this(null, null, new Metrics());
  }

  public CoordinationVerticle(JsonObject config) {
    this(config, null, new Metrics());
  }

  /** Uses {@code database} instead of opening the configured store (its "store" section is ignored). */
  public CoordinationVerticle(JsonObject config, Database database) {
    this(config, database, new Metrics());
  }

  public CoordinationVerticle(JsonObject config, Database database, Metrics metrics) {
    this.explicitConfig = config;
    this.sharedDatabase = database;
    this.metrics = metrics;
  }

  @Override
  public Future<?> start() {
    try {
      config = CoordinationConfig.from(explicitConfig != null ? explicitConfig : config());
    } catch (IllegalArgumentException e) {
      return Future.failedFuture(new IllegalArgumentException("invalid coordination config: " + e.getMessage(), e));
    }
    workers = new StoreWorkers(config.workerPoolSize());
    Future<Database> db = sharedDatabase != null ? Future.succeededFuture(sharedDatabase)
        : workers.blocking(context, () -> {
          store = Store.open(config.store(), workers.executor());
          return store.database();
        });
    return db.compose(database -> {
      this.database = database;
      return workers.call(context, () -> openLayers(database));
    }).compose(layers -> deployAll(layers)).onFailure(e -> {
      LOG.log(Level.SEVERE, "coordination service failed to start", e);
      closeResources();
    });
  }

  private record Layers(DirectoryService directories, AllocatorService allocators, InternerService interners,
      MutexService mutexes) {}

  private CompletableFuture<Layers> openLayers(Database db) {
    var exec = workers.executor();
    DirectoryService directories = DirectoryService.create(db, new DirectoryServiceOptions()
        .setCacheSize(config.directoryCacheSize()).setMaxPageSize(config.maxPageSize()).setExecutor(exec));
    InternerService interners = InternerService.create(db, InternerOptions.builder()
        .rootPath(child("interner")).maxBatchSize(config.maxBatchSize())
        .cacheMaxBytes(config.internerCacheMaxBytes()).executor(exec).build());
    MutexOptions mutexOptions = MutexOptions.builder().directory(child("mutex"))
        .lease(config.lease()).heartbeatInterval(config.heartbeatInterval()).reaperInterval(config.reaperInterval())
        .eventRetention(config.eventRetention()).maxQueueLength(config.maxQueueLength()).hostId(config.hostId())
        .executor(exec).build();
    return DirectoryLayer.getDefault().createOrOpen(db, child("allocator"))
        .thenApplyAsync(dir -> AllocatorService.create(db, new AllocatorServiceOptions().setRoot(dir).setExecutor(exec)),
            exec)
        .thenCombine(MutexService.open(db, mutexOptions),
            (allocators, mutexes) -> new Layers(directories, allocators, interners, mutexes));
  }

  private List<String> child(String name) {
    List<String> p = new ArrayList<>(config.rootDirectory());
    p.add(name);
    return p;
  }

  private Future<?> deployAll(Layers layers) {
    this.mutexes = layers.mutexes();
    mutexVerticle = new MutexVerticle(config.mutexAddress(), config.addressPrefix(), layers.mutexes(),
        config.maxAcquireTimeout(), config.maxWatched(), config.watchLease(), workers, metrics);
    List<io.vertx.core.Deployable> verticles = new ArrayList<>(List.of(
        new DirectoryVerticle(config.directoryAddress(), layers.directories(), config.maxPageSize(), workers, metrics),
        new AllocatorVerticle(config.allocatorAddress(), layers.allocators(), workers, metrics),
        new InternerVerticle(config.internerAddress(), layers.interners(), config.maxBatchSize(), workers, metrics),
        mutexVerticle));
    if (config.httpEnabled()) {
      http = new HttpVerticle(config, metrics, this::health);
      verticles.add(http);
    }
    Future<?> chain = Future.succeededFuture();
    for (io.vertx.core.Deployable v : verticles) {
      chain = chain.compose(x -> vertx.deployVerticle(v).onSuccess(deployments::add));
    }
    return chain;
  }

  /** Whether the store answers a read within 2 seconds. */
  Future<JsonObject> health() {
    long start = System.nanoTime();
    return workers.call(context, () -> database.readAsync(tr -> tr.get(new byte[] {0x00}), workers.executor())
        .orTimeout(2, TimeUnit.SECONDS))
        .map(v -> new JsonObject().put("status", "UP")
            .put("store", sharedDatabase != null ? "shared" : config.store().toString())
            .put("readMs", (System.nanoTime() - start) / 1_000_000.0))
        .recover(e -> Future.failedFuture(new IllegalStateException("store unreachable: "
            + (e instanceof java.util.concurrent.TimeoutException ? "no answer within 2 s" : e.getMessage()), e)));
  }

  @Override
  public Future<?> stop() {
    // Layer verticles first (the mutex verticle releases this node's grants while the store is open).
    List<String> ids = new ArrayList<>(deployments);
    java.util.Collections.reverse(ids);
    Future<?> chain = Future.succeededFuture();
    for (String id : ids) {
      chain = chain.transform(x -> vertx.deploymentIDs().contains(id) ? vertx.undeploy(id) : Future.succeededFuture());
    }
    deployments.clear();
    return chain.transform(x -> workers.blocking(context, () -> {
      closeResources();
      return null;
    })).recover(e -> Future.succeededFuture());
  }

  private void closeResources() {
    try {
      if (mutexes != null) {
        mutexes.close();
      }
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "closing the mutex service failed", e);
    }
    try {
      if (store != null) {
        store.close();
      }
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "closing the store failed", e);
    }
    if (workers != null) {
      workers.close();
    }
  }

  /** The configuration in effect (after start). */
  public CoordinationConfig coordinationConfig() {
    return config;
  }

  /** The port the HTTP server listens on, or -1 when HTTP is disabled. */
  public int httpPort() {
    return http == null ? -1 : http.actualPort();
  }

  public Metrics metrics() {
    return metrics;
  }

  /** A client of this service's addresses. */
  public CoordinationClient client() {
    return CoordinationClient.create(vertx, config.addressPrefix());
  }

  /** How many mutexes this node publishes lock events of (each holds one of {@code mutex.maxWatched} slots). */
  public int watchedMutexCount() {
    return mutexVerticle == null ? 0 : mutexVerticle.watchedCount();
  }

  /** How many grants obtained through this node are believed held (released on stop). */
  public int heldMutexCount() {
    return mutexVerticle == null ? 0 : mutexVerticle.heldCount();
  }
}
