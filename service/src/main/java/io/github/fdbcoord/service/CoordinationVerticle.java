package io.github.fdbcoord.service;

import com.apple.foundationdb.FDBException;
import io.github.fdbcoord.client.CoordinationClient;
import com.apple.foundationdb.Database;
import com.apple.foundationdb.directory.DirectoryLayer;
import com.apple.foundationdb.subspace.Subspace;
import io.github.fdbcoord.allocator.AllocatorService;
import io.github.fdbcoord.allocator.AllocatorServiceOptions;
import io.github.fdbcoord.directory.DirectoryService;
import io.github.fdbcoord.directory.DirectoryServiceOptions;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.fdb.FdbErrors;
import io.github.fdbcoord.interner.InternerOptions;
import io.github.fdbcoord.interner.InternerService;
import io.github.fdbcoord.mutex.MutexOptions;
import io.github.fdbcoord.mutex.MutexService;
import io.github.fdbcoord.semaphore.SemaphoreService;
import io.github.fdbcoord.rwlock.ReadWriteLockService;
import io.github.fdbcoord.service.eventbus.AllocatorVerticle;
import io.github.fdbcoord.service.eventbus.DirectoryVerticle;
import io.github.fdbcoord.service.eventbus.ElectionVerticle;
import io.github.fdbcoord.service.eventbus.FailureCodes;
import io.github.fdbcoord.service.eventbus.InternerVerticle;
import io.github.fdbcoord.service.eventbus.LocalLayers;
import io.github.fdbcoord.service.eventbus.Metrics;
import io.github.fdbcoord.service.eventbus.MutexVerticle;
import io.github.fdbcoord.service.eventbus.SemaphoreVerticle;
import io.github.fdbcoord.service.eventbus.ReadWriteLockVerticle;
import io.github.fdbcoord.service.eventbus.StoreWorkers;
import io.github.fdbcoord.service.http.HttpVerticle;
import io.github.fdbcoord.store.Store;
import io.micrometer.core.instrument.Gauge;
import io.vertx.core.Deployable;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;

/**
 * The whole coordination service as one verticle: reads a {@link CoordinationConfig}, opens the
 * store on worker threads, checks that no other host on the event-bus prefix serves another store,
 * and deploys the layer verticles (directory, allocator, interner, mutex, election, semaphore, read-write lock) and (when {@code http.enabled}) the HTTP server. Undeploying it releases the mutexes held through this node, stops the reaper and closes
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
  private static final Logger LOG = LoggerFactory.getLogger(CoordinationVerticle.class);

  private final JsonObject explicitConfig;
  private final Database sharedDatabase;
  private final Metrics metrics;
  /** The store's held-commits gauge, removed at stop (null before the store opens). */
  private Gauge heldGauge;
  private Gauge damageGauge;
  private CoordinationConfig config;
  private StoreWorkers workers;
  private Store store;
  private Database database;
  private MutexService mutexes;
  private SemaphoreService semaphores;
  private ReadWriteLockService readWriteLocks;
  private HttpVerticle http;
  private MutexVerticle mutexVerticle;
  private final List<String> deployments = new ArrayList<>();
  private Subspace rootSubspace;
  private String storeId;
  private MessageConsumer<Object> identityConsumer;
  private static final long PROBE_TIMEOUT_MS = 5_000;
  private static final String HOST = ManagementFactory.getRuntimeMXBean().getName();

  /** Configured by the deployment's config (DeploymentOptions.setConfig). */
  public CoordinationVerticle() {
    this(null, null, new Metrics());
  }

  /** Configured by {@code config} (null: the deployment's config), opening its own store. */
  public CoordinationVerticle(JsonObject config) {
    this(config, null, new Metrics());
  }

  /** Uses {@code database} instead of opening the configured store (its "store" section is ignored). */
  public CoordinationVerticle(JsonObject config, Database database) {
    this(config, database, new Metrics());
  }

  /**
   * Uses {@code database} when not null (as {@link #CoordinationVerticle(JsonObject, Database)}) and records
   * its meters in {@code metrics} (the stand-alone main shares that registry with Vert.x's own metrics).
   */
  public CoordinationVerticle(JsonObject config, Database database, Metrics metrics) {
    this.explicitConfig = config;
    this.sharedDatabase = database;
    this.metrics = metrics;
  }

  /**
   * Reads the configuration, opens the store, claims the event-bus prefix and deploys the layer verticles
   * and the HTTP server; on failure, closes what it opened and fails with the cause.
   */
  @Override
  public Future<?> start() {
    try {
      config = CoordinationConfig.from(explicitConfig != null ? explicitConfig : config());
    } catch (IllegalArgumentException e) {
      return Future.failedFuture(new IllegalArgumentException("invalid coordination config: " + e.getMessage(), e));
    }
    workers = new StoreWorkers(config.workerPoolSize());
    long started = System.nanoTime();
    LOG.debug("coordination service starting: store " + storeDescription() + ", event-bus prefix '"
        + config.addressPrefix() + "', root directory " + config.rootDirectory()
        + (config.httpEnabled() ? ", HTTP on " + config.httpHost() + ":" + config.httpPort() : ", no HTTP"));
    Future<Database> db = sharedDatabase != null ? Future.succeededFuture(sharedDatabase)
        : workers.blocking(context, () -> {
          String recovering = recoveryDescription(config.store().dataDirectory());
          if (recovering != null) {
            // Recovery of a large data directory takes seconds: say so before, and how long after.
            LOG.info("opening store " + storeDescription() + ": recovering " + recovering);
          }
          store = Store.open(config.store(), workers.executor());
          String opened = "store " + storeDescription() + " open after "
              + (System.nanoTime() - started) / 1_000_000 + " ms" + (recovering == null ? "" : " (recovered " + recovering + ")");
          if (recovering == null) {
            LOG.debug(opened);
          } else {
            LOG.info(opened);
          }
          return store.database();
        });
    return db.compose(database -> {
      this.database = database;
      workers.startCallsOnCallerThread(neverBlocksCaller(database));
      heldGauge = metrics.storeCommitsHeld(() -> heldCommits(database) != null);
      damageGauge = metrics.storeCorruptionDetected(() -> storageDamage(database) != null);
      String held = heldCommits(database);
      if (held != null) {
        // Starting writes to the store: say why it cannot, rather than wait for space to come back.
        return Future.failedFuture(new IllegalStateException("store " + storeDescription()
            + " refuses writes: commits are held: " + held + " (free disk space, or lower store.minFreeSpaceBytes)"));
      }
      return workers.call(context, () -> DirectoryLayer.getDefault().createOrOpen(database, config.rootDirectory())
          .thenComposeAsync(dir -> {
            rootSubspace = dir;
            return StoreIdentity.readOrCreate(database, dir);
          }, workers.executor())
          .orTimeout(START_STORE_TIMEOUT_MS, TimeUnit.MILLISECONDS)
          .exceptionallyCompose(e -> CompletableFuture.failedFuture(
              FdbErrors.unwrap(e) instanceof TimeoutException
                  ? new IllegalStateException("store " + storeDescription() + " did not open the root directory "
                      + config.rootDirectory() + " within " + START_STORE_TIMEOUT_MS / 1000 + " s"
                      + heldSuffix(database))
                  : e)));
    }).compose(id -> {
      storeId = id;
      return claimAddressPrefix();
    }).compose(x -> workers.call(context, () -> openLayers(database)))
        .compose(layers -> deployAll(layers))
        .onSuccess(x -> LOG.info("coordination service started in "
            + (System.nanoTime() - started) / 1_000_000 + " ms: store " + storeDescription() + " (id " + storeId
            + "), event-bus prefix '" + config.addressPrefix() + "'"
            + (http == null ? "" : ", HTTP on " + config.httpHost() + ":" + http.actualPort())))
        .onFailure(e -> {
          // The cause goes back to the deployer, which decides how loud to be; a stack trace here
          // would only repeat it.
          LOG.warn("coordination service failed to start: " + e.getMessage());
          if (identityConsumer != null) {
            identityConsumer.unregister();
          }
          closeResources();
        });
  }

  /** "N files, M MiB" in the data directory that the embedded engine is about to recover, or null. */
  private static String recoveryDescription(Path dataDirectory) {
    if (dataDirectory == null || !Files.isDirectory(dataDirectory)) {
      return null;
    }
    try (var files = Files.list(dataDirectory)) {
      long[] countAndBytes = new long[2];
      files.filter(Files::isRegularFile).forEach(f -> {
        countAndBytes[0]++;
        countAndBytes[1] += f.toFile().length();
      });
      return countAndBytes[0] + " files, " + String.format(Locale.ROOT, "%.1f", countAndBytes[1] / 1048576.0)
          + " MiB";
    } catch (IOException | UncheckedIOException e) {
      return null;
    }
  }

  /** What the store is, for logs and the identity probe: engine and where its data lives. */
  String storeDescription() {
    if (sharedDatabase != null) {
      return "shared " + (sharedDatabase instanceof EmbeddedDatabase e
          ? (e.embeddedOptions().dataDirectory() == null ? "embedded(in memory)"
              : "embedded(" + e.embeddedOptions().dataDirectory() + ")")
          : sharedDatabase.getClass().getSimpleName());
    }
    return config.store().toString();
  }

  /**
   * Asks whoever already answers on {@code <prefix>.store} which store it serves, and refuses to
   * start when it is another one: two hosts with different stores behind one address would split
   * the data (the event bus round-robins between them). Then answers that question itself.
   *
   * <p>Two hosts starting at the same instant may both find no one; the window is the probe's
   * round trip (see docs/vertx.md).
   */
  private Future<?> claimAddressPrefix() {
    String address = config.storeAddress();
    JsonObject mine = new JsonObject().put("storeId", storeId).put("store", storeDescription())
        .put("rootDirectory", new JsonArray(config.rootDirectory())).put("host", HOST);
    return vertx.eventBus().<JsonObject>request(address, mine, new DeliveryOptions().setSendTimeout(PROBE_TIMEOUT_MS))
        .transform(ar -> {
          if (ar.succeeded()) {
            JsonObject theirs = ar.result().body();
            if (!storeId.equals(theirs.getString("storeId"))) {
              return Future.failedFuture(new IllegalStateException("another host already serves event-bus prefix '"
                  + config.addressPrefix() + "' with a different store: " + describe(theirs) + "; this host has "
                  + describe(mine) + ". Point both at the same store (same cluster file, data directory or"
                  + " shared Database, same rootDirectory) or give this one another addressPrefix"));
            }
            return Future.succeededFuture();
          }
          if (ar.cause() instanceof ReplyException r && r.failureType() == ReplyFailure.NO_HANDLERS) {
            return Future.succeededFuture();
          }
          return Future.failedFuture(new IllegalStateException("cannot check which store the other hosts on"
              + " event-bus prefix '" + config.addressPrefix() + "' serve: " + ar.cause().getMessage(), ar.cause()));
        })
        .compose(x -> {
          identityConsumer = vertx.eventBus().consumer(address, message -> {
            if (message.body() != null && !(message.body() instanceof JsonObject)) {
              // Cast unchecked, a foreign body threw in the handler: no reply, the asker waited out its timeout.
              ReplyException malformed = FailureCodes.badRequest("the body must be a JSON object, got "
                  + message.body().getClass().getSimpleName());
              message.fail(malformed.failureCode(), malformed.getMessage());
              return;
            }
            JsonObject asking = (JsonObject) message.body();
            if (asking != null && asking.getString("storeId") != null && !storeId.equals(asking.getString("storeId"))) {
              LOG.warn("refused a host on event-bus prefix '" + config.addressPrefix() + "' with another store: "
                  + describe(asking));
            }
            message.reply(mine);
          });
          return identityConsumer.completion();
        });
  }

  private static String describe(JsonObject host) {
    return "store " + host.getString("store") + " (id " + host.getString("storeId") + ", root directory "
        + host.getValue("rootDirectory") + ") on " + host.getString("host");
  }

  private record Layers(DirectoryService directories, AllocatorService allocators, InternerService interners,
      MutexService mutexes, SemaphoreService semaphores,
      ReadWriteLockService readWriteLocks) {}

  private CompletableFuture<Layers> openLayers(Database db) {
    var exec = workers.executor();
    // One more than the largest page: DirectoryVerticle reads one extra name to leave out the root.
    DirectoryService directories = DirectoryService.create(db, DirectoryServiceOptions.builder()
        .cacheSize(config.directoryCacheSize()).maxPageSize(config.maxPageSize() + 1).executor(exec).build());
    InternerService interners = InternerService.create(db, InternerOptions.builder()
        .rootPath(child("interner")).maxBatchSize(config.maxBatchSize())
        .cacheMaxBytes(config.internerCacheMaxBytes()).executor(exec)
        .batchWindow(StoreWorkers.BEHIND_EVENT_LOOP_WORK).build());
    MutexOptions mutexOptions = MutexOptions.builder().directory(child("mutex"))
        .lease(config.lease()).heartbeatInterval(config.heartbeatInterval()).reaperInterval(config.reaperInterval())
        .eventRetention(config.eventRetention()).maxQueueLength(config.maxQueueLength()).hostId(config.hostId())
        .handOffNotifier(MutexVerticle.handOffNotifier(vertx, config.mutexAddress()))
        .executor(exec).build();
    CompletableFuture<MutexService> mutexesOpened = MutexService.open(db, mutexOptions);
    CompletableFuture<SemaphoreService> semaphoresOpened = SemaphoreService.open(db,
        config.semaphoreOptions(child("semaphore")).executor(exec)
            .grantNotifier(SemaphoreVerticle.grantNotifier(vertx, config.semaphoreAddress())).build());
    CompletableFuture<ReadWriteLockService> readWriteLocksOpened = ReadWriteLockService.open(db,
        config.readWriteLockOptions().directory(child("rwlock")).executor(exec)
            .grantNotifier(ReadWriteLockVerticle.grantNotifier(vertx, config.readWriteLockAddress())).build());
    return DirectoryLayer.getDefault().createOrOpen(db, child("allocator"))
        .thenApplyAsync(dir -> AllocatorService.create(db, AllocatorServiceOptions.builder().root(dir).executor(exec)
            .batchWindow(StoreWorkers.BEHIND_EVENT_LOOP_WORK).build()),
            exec)
        .thenCompose(allocators -> CompletableFuture.allOf(mutexesOpened, semaphoresOpened, readWriteLocksOpened)
            .thenApply(v -> new Layers(directories, allocators, interners, mutexesOpened.join(), semaphoresOpened.join(),
                readWriteLocksOpened.join())))
        .whenComplete((layers, failed) -> {
          if (failed != null) {
            // The services that did open run reapers and heartbeats of their own: a failed start stops them.
            for (CompletableFuture<? extends AutoCloseable> opened : List.of(mutexesOpened, semaphoresOpened,
                readWriteLocksOpened)) {
              opened.thenAccept(service -> closeQuietly(service, "a layer service of a failed start"));
            }
          }
        });
  }

  private List<String> child(String name) {
    List<String> p = new ArrayList<>(config.rootDirectory());
    p.add(name);
    return p;
  }

  private Future<?> deployAll(Layers layers) {
    this.mutexes = layers.mutexes();
    this.semaphores = layers.semaphores();
    this.readWriteLocks = layers.readWriteLocks();
    LocalLayers local = new LocalLayers();
    mutexVerticle = new MutexVerticle(config.mutexAddress(), config.addressPrefix(), layers.mutexes(),
        config.maxAcquireTimeout(), config.maxWatched(), config.watchLease(), workers, metrics);
    mutexVerticle.boundedBy(config.requestTimeout());
    List<Deployable> verticles = new ArrayList<>(List.of(
        new DirectoryVerticle(config.directoryAddress(), layers.directories(), config.maxPageSize(),
            config.rootDirectory(), workers, metrics).servedLocally(local).boundedBy(config.requestTimeout()),
        new AllocatorVerticle(config.allocatorAddress(), layers.allocators(), workers, metrics).servedLocally(local)
            .boundedBy(config.requestTimeout()),
        new InternerVerticle(config.internerAddress(), layers.interners(), config.maxBatchSize(), workers, metrics)
            .servedLocally(local).boundedBy(config.requestTimeout()),
        // The mutex routes keep the event bus: an acquire's wait is bounded by its send timeout.
        mutexVerticle,
        // After the mutex verticle, whose waits and grants it uses: undeployed before it (stop runs in reverse).
        new ElectionVerticle(config.electionAddress(), mutexVerticle, layers.mutexes(), workers, metrics)
            .boundedBy(config.requestTimeout()),
        // Not served locally, as the mutex: the HTTP routes bound an acquire's wait by its send timeout.
        new SemaphoreVerticle(config.semaphoreAddress(), layers.semaphores(), config.maxAcquireTimeout(), workers,
            metrics).publishing(config.maxWatched(), config.watchLease()).boundedBy(config.requestTimeout()),
        new ReadWriteLockVerticle(config.readWriteLockAddress(), layers.readWriteLocks(), config.maxAcquireTimeout(),
            workers, metrics).publishing(config.maxWatched(), config.watchLease()).boundedBy(config.requestTimeout())));
    if (config.httpEnabled()) {
      http = new HttpVerticle(config.httpOptions(), metrics, this::health, local, this::backup);
      verticles.add(http);
    }
    Future<?> chain = Future.succeededFuture();
    for (Deployable v : verticles) {
      chain = chain.compose(x -> vertx.deployVerticle(v).onSuccess(deployments::add));
    }
    return chain;
  }

  /** How long starting may wait for the store to open (or create) the root directory and its identity. */
  private static final long START_STORE_TIMEOUT_MS = 30_000;

  /**
   * Whether a layer call may start on an event loop: fdb-java's client never blocks its caller, nor
   * does the in-memory engine (its reads are CPU work that completes at once); the durable engine
   * reads its storage on the calling thread, so its calls start on a store worker.
   */
  private static boolean neverBlocksCaller(Database database) {
    return !(database instanceof EmbeddedDatabase embedded)
        || embedded.embeddedOptions().dataDirectory() == null;
  }

  /** Why the embedded engine holds commits back (its disk is low on space), or null. */
  private static String heldCommits(Database database) {
    return database instanceof EmbeddedDatabase embedded
        ? embedded.commitsHeldBecause().orElse(null) : null;
  }

  /** The damage the embedded engine found in its storage's files (naming the first damaged file), or null. */
  private static String storageDamage(Database database) {
    return database instanceof EmbeddedDatabase embedded
        ? embedded.storageDamage().orElse(null) : null;
  }

  /** " (commits are held: why)" while the embedded engine holds commits back, else "". */
  private static String heldSuffix(Database database) {
    String held = heldCommits(database);
    return held == null ? "" : " (commits are held: " + held + ")";
  }

  /**
   * Backs the store up into {@code target} on a store worker (see {@code EmbeddedDatabase.backup}):
   * the backup's version, size, file count and duration. Only the durable embedded engine has backups.
   */
  Future<JsonObject> backup(Path target) {
    if (!(database instanceof EmbeddedDatabase embedded)
        || embedded.embeddedOptions().dataDirectory() == null) {
      return Future.failedFuture(new IllegalStateException("the store " + storeDescription() + " has no online backup"
          + " here: only the durable embedded engine (store.dataDirectory) has one; back FoundationDB up with"
          + " fdbbackup"));
    }
    return workers.call(context, () -> embedded.backup(target, workers.executor()))
        .map(info -> new JsonObject().put("directory", info.directory().toString()).put("version", info.version())
            .put("bytes", info.bytes()).put("files", info.files()).put("durationMs", info.duration().toMillis()));
  }

  /** How long the health probe's write may take. */
  private static final long HEALTH_TIMEOUT_MS = 2000;

  /**
   * Whether the store accepts a write within 2 seconds: a blind write of one key in the root
   * directory. A read alone would pass while commits fail (a full heap, a failed log, a cluster
   * that lost its logs).
   */
  Future<JsonObject> health() {
    String damage = storageDamage(database);
    if (damage != null) {
      // Writes may still succeed, but some stored data cannot be read: the node must not look healthy.
      return Future.failedFuture(new IllegalStateException("store is damaged: " + damage
          + " (restore the data directory from a backup; `verify` lists every damaged file)"));
    }
    long start = System.nanoTime();
    return workers.call(context, () -> StoreIdentity.writeHealth(database, rootSubspace, System.currentTimeMillis(),
            HEALTH_TIMEOUT_MS)
        .orTimeout(HEALTH_TIMEOUT_MS + 500, TimeUnit.MILLISECONDS))
        .map(v -> new JsonObject().put("status", "UP")
            .put("store", storeDescription())
            .put("writeMs", (System.nanoTime() - start) / 1_000_000.0))
        .recover(failure -> {
          Throwable e = FdbErrors.unwrap(failure);
          boolean timedOut = e instanceof TimeoutException
              || e instanceof FDBException f && f.getCode() == FdbErrors.TRANSACTION_TIMED_OUT;
          // The embedded engine knows why it holds commits back: say it rather than only "no commit".
          return Future.failedFuture(new IllegalStateException("store refuses writes: "
              + (timedOut ? "no commit within " + HEALTH_TIMEOUT_MS / 1000 + " s" : String.valueOf(e))
              + heldSuffix(database), e));
        });
  }

  /** Undeploys the verticles (releasing this node's grants while the store is open), then closes the store. */
  @Override
  public Future<?> stop() {
    // Layer verticles first (the mutex verticle releases this node's grants while the store is open).
    List<String> ids = new ArrayList<>(deployments);
    Collections.reverse(ids);
    Future<?> chain = identityConsumer == null ? Future.succeededFuture() : identityConsumer.unregister();
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
    if (heldGauge != null) {
      metrics.registry().remove(heldGauge);
      heldGauge = null;
    }
    if (damageGauge != null) {
      metrics.registry().remove(damageGauge);
      damageGauge = null;
    }
    closeQuietly(mutexes, "the mutex service");
    closeQuietly(semaphores, "the semaphore service");
    closeQuietly(readWriteLocks, "the read-write lock service");
    closeQuietly(store, "the store");
    if (workers != null) {
      workers.close();
    }
  }

  private static void closeQuietly(AutoCloseable closeable, String what) {
    try {
      if (closeable != null) {
        closeable.close();
      }
    } catch (Exception e) {
      LOG.warn("closing " + what + " failed", e);
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

  /** The database the service uses (tests clean up the service's root directory through it). */
  Database database() {
    return database;
  }

  /** The id of the store this service serves (see {@link StoreIdentity}). */
  public String storeId() {
    return storeId;
  }

  /** The meters of this service (served at {@code /metrics}). */
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

  /** The mutex grants this node's stop could not release (the store did not answer): their leases end them. */
  public List<String> unreleasedAtStop() {
    return mutexVerticle == null ? List.of() : mutexVerticle.unreleasedAtStop();
  }

  /** How many grants obtained through this node are believed held (released on stop). */
  public int heldMutexCount() {
    return mutexVerticle == null ? 0 : mutexVerticle.heldCount();
  }
}
