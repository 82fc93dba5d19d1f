package io.github.fdbcoord.cluster;

import static io.github.fdbcoord.fdb.FdbErrors.unwrap;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.directory.DirectoryLayer;
import com.apple.foundationdb.tuple.Versionstamp;
import io.github.fdbcoord.mutex.MutexHandle;
import io.github.fdbcoord.mutex.MutexOptions;
import io.github.fdbcoord.mutex.MutexService;
import io.github.fdbcoord.mutex.MutexTimeoutException;
import io.github.fdbcoord.store.Store;
import io.github.fdbcoord.store.StoreOptions;
import io.vertx.core.Completable;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxException;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.AsyncMap;
import io.vertx.core.shareddata.Counter;
import io.vertx.core.shareddata.Lock;
import io.vertx.core.spi.cluster.ClusterManager;
import io.vertx.core.spi.cluster.NodeInfo;
import io.vertx.core.spi.cluster.NodeListener;
import io.vertx.core.spi.cluster.RegistrationInfo;
import io.vertx.core.spi.cluster.RegistrationListener;
import io.vertx.core.spi.cluster.RegistrationUpdateEvent;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A Vert.x {@link ClusterManager} on FoundationDB (or the embedded engine): membership with leases
 * and heartbeats, a versionstamp-ordered membership log, event-bus registrations removed together
 * with their node, async maps with TTL, sync maps, locks on the mutex layer and atomic counters.
 *
 * <pre>
 * Vertx vertx = Vertx.builder()
 *     .withClusterManager(new FdbClusterManager(new FdbClusterManagerOptions().setStoreOptions(StoreOptions.cluster(file))))
 *     .buildClustered().await();
 * </pre>
 *
 * <p>Every store call runs on the store's executor, never on the caller's thread (an event loop);
 * node and registration listeners are called on two private threads, in log order.
 * See docs/cluster-manager.md.
 */
public class FdbClusterManager implements ClusterManager {
  /** System property naming a JSON options file for the no-argument constructor (the launcher's {@code -cluster}). */
  public static final String CONFIG_PROPERTY = "vertx.fdb.cluster.config";

  private static final Logger log = LoggerFactory.getLogger(FdbClusterManager.class);
  private static final AtomicInteger INSTANCES = new AtomicInteger();
  private static final Duration RETRY_DELAY = Duration.ofMillis(100);
  private static final int SWEEP_BATCH = 500;

  private enum State { NEW, JOINING, ACTIVE, LEAVING, LEFT, CRASHED }

  private final FdbClusterManagerOptions options;
  private final Object lifecycle = new Object();
  private volatile State state = State.NEW;

  private VertxInternal vertx;
  private Store ownedStore;
  private Database db;
  private Executor executor;
  private ClusterSchema schema;
  private MutexService mutexes;
  private ScheduledExecutorService scheduler;
  private ExecutorService membershipEvents;
  private ExecutorService registrationEvents;
  private final List<ScheduledFuture<?>> tasks = new ArrayList<>();

  private volatile String nodeId;
  private volatile NodeInfo nodeInfo;
  private volatile NodeListener nodeListener;
  private volatile RegistrationListener registrationListener;

  /**
   * The membership as this node's listener has seen it; changed only on {@link #membershipEvents}.
   * Sorted, because Vert.x HA picks the failover node by index into {@link #getNodes()}: every node
   * must list the same members in the same order after the same event.
   */
  private final Set<String> view = new TreeSet<>();
  private Versionstamp memberCursor;
  private Versionstamp registrationCursor;

  private final Map<String, Set<RegistrationInfo>> ownRegistrations = new ConcurrentHashMap<>();
  private final Set<FdbLock> heldLocks = ConcurrentHashMap.newKeySet();
  private final Set<CompletableFuture<MutexHandle>> pendingLocks = ConcurrentHashMap.newKeySet();
  private final Map<String, CompletableFuture<?>> releasesInFlight = new ConcurrentHashMap<>();
  private final AtomicLong lockSequence = new AtomicLong();

  private final AtomicLong heartbeats = new AtomicLong();
  private final AtomicBoolean heartbeatInFlight = new AtomicBoolean();
  private final AtomicBoolean reaperInFlight = new AtomicBoolean();
  /** Reaper's observations: node → (record bytes, when first seen unchanged, on this node's monotonic clock). */
  private final Map<String, Observation> observations = new HashMap<>();

  private record Observation(byte[] record, long sinceNanos) {}

  private record Poll<T>(List<T> changes, CompletableFuture<Void> watch) {}

  private record Snapshot(long readVersion, Set<String> nodes) {}

  /**
   * Options from the JSON file named by the system property {@value #CONFIG_PROPERTY}, else a real
   * cluster when the environment names a cluster file ({@code FDB_CLUSTER_FILE}), else the embedded
   * engine in memory (which only the nodes of one JVM can share, and only with a handed-in database).
   */
  public FdbClusterManager() {
    this(defaultOptions());
  }

  public FdbClusterManager(FdbClusterManagerOptions options) {
    this.options = new FdbClusterManagerOptions(Objects.requireNonNull(options, "options"));
    this.options.validate();
  }

  public FdbClusterManager(JsonObject options) {
    this(new FdbClusterManagerOptions(options));
  }

  private static FdbClusterManagerOptions defaultOptions() {
    String file = System.getProperty(CONFIG_PROPERTY);
    if (file != null) {
      try {
        return new FdbClusterManagerOptions(new JsonObject(Files.readString(Path.of(file))));
      } catch (IOException e) {
        throw new IllegalArgumentException("cannot read the cluster manager options file " + file + ": " + e.getMessage(), e);
      }
    }
    String clusterFile = System.getenv("FDB_CLUSTER_FILE");
    FdbClusterManagerOptions options = new FdbClusterManagerOptions();
    if (clusterFile != null && !clusterFile.isEmpty()) {
      options.setStoreOptions(StoreOptions.cluster(Path.of(clusterFile)));
    }
    return options;
  }

  public FdbClusterManagerOptions options() {
    return new FdbClusterManagerOptions(options);
  }

  /** The mutex service behind this node's SharedData locks (null before join). */
  public MutexService mutexService() {
    return mutexes;
  }

  // ================================================================== lifecycle

  @Override
  public void init(Vertx vertx) {
    this.vertx = (VertxInternal) vertx;
  }

  @Override
  public void join(Completable<Void> promise) {
    synchronized (lifecycle) {
      if (state != State.NEW) {
        promise.fail(new IllegalStateException("this cluster manager already joined (state " + state + "); use a new instance"));
        return;
      }
      state = State.JOINING;
    }
    int instance = INSTANCES.incrementAndGet();
    nodeId = UUID.randomUUID().toString();
    scheduler = Executors.newSingleThreadScheduledExecutor(daemon("fdb-cluster-" + instance + "-timer"));
    membershipEvents = Executors.newSingleThreadExecutor(daemon("fdb-cluster-" + instance + "-members"));
    registrationEvents = Executors.newSingleThreadExecutor(daemon("fdb-cluster-" + instance + "-registrations"));
    CompletableFuture<Void> joined = CompletableFuture.supplyAsync(this::openDatabase, scheduler)
        .thenCompose(database -> DirectoryLayer.getDefault().createOrOpen(database, options.getDirectory()))
        .thenCompose(dir -> {
          schema = new ClusterSchema(dir);
          return MutexService.open(db, MutexOptions.builder()
              .directory(options.getLockDirectory())
              .lease(options.getNodeLease())
              .heartbeatInterval(options.getHeartbeatInterval())
              .reaperInterval(options.getReaperInterval())
              .executor(executor)
              // The node's own timer drives the lock heartbeats too: whatever stalls the node
              // (a pause) stalls its locks' heartbeats with it, as it would in a real process.
              .scheduler(scheduler)
              .build());
        })
        .thenCompose(m -> {
          mutexes = m;
          return writeMembership();
        })
        .thenAcceptAsync(snapshot -> {
          synchronized (view) {
            view.clear();
            view.addAll(snapshot.nodes());
          }
          memberCursor = ClusterSchema.cursorAt(snapshot.readVersion());
          registrationCursor = memberCursor;
          state = State.ACTIVE;
          log.info("node " + nodeId + " joined the cluster " + options.getDirectory() + " with " + view.size() + " node(s)");
        }, membershipEvents)
        .whenComplete((v, err) -> {
          if (err != null) {
            state = State.LEFT;
            shutdown();
          } else {
            startBackgroundWork();
          }
        });
    completeOnVertxThread(joined, promise);
  }

  /**
   * Vert.x continues its start-up and shut-down on the thread that completes the join and leave
   * promises, and expects a Vert.x thread there (as the other managers give, via executeBlocking).
   */
  private void completeOnVertxThread(CompletableFuture<Void> done, Completable<Void> promise) {
    if (vertx == null) {
      done.whenComplete((v, err) -> promise.complete(null, err == null ? null : unwrap(err)));
      return;
    }
    vertx.<Void>executeBlocking(() -> {
      try {
        done.get();
        return null;
      } catch (java.util.concurrent.ExecutionException e) {
        Throwable cause = unwrap(e.getCause());
        throw cause instanceof Exception ? (Exception) cause : new VertxException(cause);
      }
    }, false).onSuccess(v -> promise.succeed()).onFailure(promise::fail);
  }

  private Database openDatabase() {
    if (options.getDatabase() != null) {
      db = options.getDatabase();
    } else {
      ownedStore = Store.open(options.getStoreOptions());
      db = ownedStore.database();
    }
    executor = db.getExecutor();
    return db;
  }

  private void startBackgroundWork() {
    long hb = options.getHeartbeatInterval().toMillis();
    long reaper = options.getReaperInterval().toMillis();
    synchronized (tasks) {
      tasks.add(scheduler.scheduleWithFixedDelay(this::heartbeat, hb, hb, TimeUnit.MILLISECONDS));
      tasks.add(scheduler.scheduleWithFixedDelay(this::reap, reaper, reaper, TimeUnit.MILLISECONDS));
    }
    membershipEvents.execute(this::pollMembership);
    registrationEvents.execute(this::pollRegistrations);
  }

  /**
   * Writes this node's record, info and registrations with an "added" entry in the membership
   * log, and reads the other nodes at the same read version: changes committed after it are in the
   * log after {@code cursorAt(readVersion)}, so none is missed or seen twice.
   */
  private CompletableFuture<Snapshot> writeMembership() {
    Map<String, Set<RegistrationInfo>> mine = new HashMap<>();
    ownRegistrations.forEach((address, infos) -> mine.put(address, Set.copyOf(infos)));
    NodeInfo info = nodeInfo;
    return run(tr -> tr.getReadVersion().thenCompose(rv -> schema.readNodes(tr, executor).thenApply(nodes -> {
      schema.writeNodeRecord(tr, nodeId, heartbeats.incrementAndGet());
      if (info != null) {
        schema.writeNodeInfo(tr, nodeId, info);
      }
      Set<String> addresses = new LinkedHashSet<>();
      mine.forEach((address, infos) -> {
        for (RegistrationInfo r : infos) {
          schema.writeRegistration(tr, address, r);
          addresses.add(address);
        }
      });
      schema.appendMemberChange(tr, ClusterSchema.ADDED, nodeId);
      schema.appendRegistrationChanges(tr, addresses);
      Set<String> all = new LinkedHashSet<>(nodes.keySet());
      all.add(nodeId);
      return new Snapshot(rv, all);
    })));
  }

  @Override
  public void leave(Completable<Void> promise) {
    synchronized (lifecycle) {
      if (state == State.CRASHED) {
        // A crashed node removes nothing (the others evict it); only its local resources go.
        state = State.LEFT;
        shutdown();
        promise.succeed();
        return;
      }
      if (state != State.ACTIVE) {
        // A second leave (Vert.x closes a node whose manager already left) has nothing to do.
        promise.succeed();
        return;
      }
      state = State.LEAVING;
    }
    synchronized (tasks) {
      tasks.forEach(t -> t.cancel(false));
      tasks.clear();
    }
    pendingLocks.forEach(f -> f.cancel(false));
    List<CompletableFuture<?>> releases = new ArrayList<>();
    for (FdbLock lock : heldLocks) {
      releases.add(lock.releaseAsync());
    }
    CompletableFuture<Void> left = CompletableFuture.allOf(releases.toArray(new CompletableFuture<?>[0]))
        .handle((v, e) -> null)
        .thenCompose(v -> run(tr -> schema.removeNode(tr, nodeId, null, executor)))
        .handle((removed, err) -> {
          state = State.LEFT;
          nodeListener = null;
          if (err != null) {
            log.warn("node " + nodeId + " could not remove its record on leave (its lease will expire): " + err);
          } else {
            log.info("node " + nodeId + " left the cluster");
          }
          shutdown();
          return null;
        });
    completeOnVertxThread(left, promise);
  }

  private void shutdown() {
    if (mutexes != null) {
      mutexes.close();
    }
    if (scheduler != null) {
      scheduler.shutdownNow();
    }
    if (membershipEvents != null) {
      membershipEvents.shutdown();
    }
    if (registrationEvents != null) {
      registrationEvents.shutdown();
    }
    if (ownedStore != null) {
      ownedStore.close();
    }
  }

  @Override
  public boolean isActive() {
    return state == State.ACTIVE;
  }

  private boolean stopped() {
    State s = state;
    return s == State.LEAVING || s == State.LEFT || s == State.CRASHED;
  }

  /**
   * Fault injection for tests and benchmarks: stops this node at once as a process crash would
   * (no heartbeats of the node or of its locks, no watches, nothing removed from the store). The
   * other nodes evict it after the node lease; its locks go to their next waiters after the lock lease.
   */
  public void simulateCrash() {
    synchronized (lifecycle) {
      if (state != State.ACTIVE) {
        return;
      }
      state = State.CRASHED;
    }
    synchronized (tasks) {
      tasks.forEach(t -> t.cancel(false));
      tasks.clear();
    }
    scheduler.shutdownNow();
    membershipEvents.shutdownNow();
    registrationEvents.shutdownNow();
  }

  /**
   * Fault injection for tests and benchmarks: blocks this node's timer for {@code pause}, so
   * neither the node nor its locks heartbeat, as if the process were stopped (SIGSTOP). Once the
   * pause ends the node finds out it was evicted, if it was, and re-joins; a lock it held that was
   * handed to another node reports {@link FdbLock#lost()} and its release is refused.
   */
  public void simulatePause(Duration pause) {
    scheduler.execute(() -> {
      try {
        Thread.sleep(pause.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
  }

  // ================================================================== membership

  @Override
  public String getNodeId() {
    return nodeId;
  }

  @Override
  public List<String> getNodes() {
    synchronized (view) {
      return new ArrayList<>(view); // sorted: the same order on every node
    }
  }

  @Override
  public void nodeListener(NodeListener listener) {
    this.nodeListener = listener;
  }

  @Override
  public void setNodeInfo(NodeInfo info, Completable<Void> promise) {
    this.nodeInfo = info;
    if (!isActive()) {
      promise.succeed();
      return;
    }
    String me = nodeId;
    complete(run(tr -> schema.readNodeRecord(tr, me).thenApply(record -> {
      if (record != null) {
        schema.writeNodeInfo(tr, me, info);
      }
      return (Void) null;
    })), promise);
  }

  @Override
  public NodeInfo getNodeInfo() {
    return nodeInfo;
  }

  @Override
  public void getNodeInfo(String id, Completable<NodeInfo> promise) {
    if (!isActive()) {
      promise.fail(new VertxException("the cluster manager is not active", true));
      return;
    }
    read(tr -> schema.readNodeInfo(tr, id)).whenComplete((info, err) -> {
      if (err != null) {
        promise.fail(unwrap(err));
      } else if (info == null) {
        promise.fail(new VertxException("Not a member of the cluster", true));
      } else {
        promise.succeed(info);
      }
    });
  }

  private void heartbeat() {
    if (!isActive() || !heartbeatInFlight.compareAndSet(false, true)) {
      return;
    }
    String me = nodeId;
    run(tr -> schema.readNodeRecord(tr, me).thenApply(record -> {
      if (record == null) {
        return false;
      }
      schema.writeNodeRecord(tr, me, heartbeats.incrementAndGet());
      return true;
    })).whenComplete((alive, err) -> {
      heartbeatInFlight.set(false);
      if (err != null) {
        log.warn("node " + me + ": heartbeat failed (the store may be unavailable): " + unwrap(err));
      } else if (!alive && isActive()) {
        log.warn("node " + me + " found itself evicted (its lease ran out): re-joining");
        membershipEvents.execute(this::rejoinIfEvicted);
      }
    });
  }

  /**
   * Called on {@link #membershipEvents}: when this node's record is gone (another node evicted it,
   * for example after a long pause), writes it again with the node info and every registration of
   * this node, and tells the listener what changed meanwhile.
   */
  private void rejoinIfEvicted() {
    if (!isActive()) {
      return;
    }
    try {
      byte[] record = read(tr -> schema.readNodeRecord(tr, nodeId)).join();
      if (record != null) {
        return;
      }
      Snapshot snapshot = writeMembership().join();
      Set<String> before;
      synchronized (view) {
        before = new LinkedHashSet<>(view);
        view.clear();
        view.addAll(snapshot.nodes());
      }
      memberCursor = ClusterSchema.cursorAt(snapshot.readVersion());
      log.info("node " + nodeId + " re-joined with " + snapshot.nodes().size() + " node(s) and re-published "
          + ownRegistrations.size() + " address(es)");
      for (String n : before) {
        if (!snapshot.nodes().contains(n)) {
          fireNodeLeft(n);
        }
      }
      for (String n : snapshot.nodes()) {
        if (!before.contains(n)) {
          fireNodeAdded(n);
        }
      }
    } catch (RuntimeException e) {
      log.warn("node " + nodeId + " could not re-join yet (will retry at the next heartbeat): " + unwrap(e));
    }
  }

  /** Follows the membership log from the cursor; runs on {@link #membershipEvents}. */
  private void pollMembership() {
    Versionstamp from = memberCursor;
    followLog("membership", membershipEvents, this::pollMembership, tr -> {
      CompletableFuture<Void> watch = schema.watchMemberGeneration(tr);
      return schema.readMemberChangesAfter(tr, from, executor).thenApply(list -> new Poll<>(list, watch));
    }, this::applyMemberChanges);
  }

  /**
   * One round of following a change log: read what follows the cursor with a watch on the log's
   * generation in the same transaction (so no change falls between the read and the watch), apply
   * it on {@code events}, then read again at once after a full page, or when the watch fires.
   */
  private <T> void followLog(String logName, ExecutorService events, Runnable again,
      Function<Transaction, CompletableFuture<Poll<T>>> read, Consumer<List<T>> apply) {
    if (stopped()) {
      return;
    }
    runUnbounded(read).whenCompleteAsync((poll, err) -> {
      if (stopped()) {
        return;
      }
      if (err != null) {
        log.warn("node " + nodeId + ": reading the " + logName + " log failed, retrying: " + unwrap(err));
        retryLater(events, again);
        return;
      }
      apply.accept(poll.changes());
      if (poll.changes().size() >= 1000) {
        again.run();
      } else {
        poll.watch().whenComplete((v, e) -> {
          if (e != null) {
            retryLater(events, again);
          } else {
            events.execute(again);
          }
        });
      }
    }, events);
  }

  private void applyMemberChanges(List<ClusterSchema.MemberChange> changes) {
    for (ClusterSchema.MemberChange c : changes) {
      if (stopped()) {
        return;
      }
      if (c.stamp().compareTo(memberCursor) <= 0) {
        continue; // already covered by a re-join's snapshot
      }
      memberCursor = c.stamp();
      if (c.nodeId().equals(nodeId)) {
        if (ClusterSchema.LEFT.equals(c.type()) && isActive()) {
          log.warn("node " + nodeId + " was evicted by another node: re-joining");
          rejoinIfEvicted();
        }
        continue;
      }
      boolean changed;
      synchronized (view) {
        changed = ClusterSchema.ADDED.equals(c.type()) ? view.add(c.nodeId()) : view.remove(c.nodeId());
      }
      if (changed) {
        if (ClusterSchema.ADDED.equals(c.type())) {
          fireNodeAdded(c.nodeId());
        } else {
          fireNodeLeft(c.nodeId());
        }
      }
    }
  }

  private void fireNodeAdded(String id) {
    NodeListener l = nodeListener;
    if (l != null && isActive()) {
      try {
        l.nodeAdded(id);
      } catch (Throwable t) {
        log.error("node listener failed on nodeAdded(" + id + ")", t);
      }
    }
  }

  private void fireNodeLeft(String id) {
    NodeListener l = nodeListener;
    if (l != null && isActive()) {
      try {
        l.nodeLeft(id);
      } catch (Throwable t) {
        log.error("node listener failed on nodeLeft(" + id + ")", t);
      }
    }
  }

  /**
   * Evicts nodes whose record did not change for a node lease, measured on this node's monotonic
   * clock from when it first saw that record; trims the logs and sweeps expired map entries.
   */
  private void reap() {
    if (!isActive() || !reaperInFlight.compareAndSet(false, true)) {
      return;
    }
    String me = nodeId;
    long leaseNanos = options.getNodeLease().toNanos();
    read(tr -> tr.getReadVersion().thenCompose(rv -> schema.readNodes(tr, executor)
        .thenApply(nodes -> Map.entry(rv, nodes))))
        .thenCompose(seen -> {
          long now = System.nanoTime();
          List<CompletableFuture<?>> work = new ArrayList<>();
          synchronized (observations) {
            observations.keySet().retainAll(seen.getValue().keySet());
            seen.getValue().forEach((id, record) -> {
              if (id.equals(me)) {
                return;
              }
              Observation o = observations.get(id);
              if (o == null || !Arrays.equals(o.record(), record)) {
                observations.put(id, new Observation(record, now));
              } else if (now - o.sinceNanos() >= leaseNanos) {
                work.add(evict(id, record));
              }
            });
          }
          long cutoff = seen.getKey() - options.getLogRetention().toMillis() * ClusterSchema.VERSIONS_PER_MILLI;
          if (cutoff > 0) {
            work.add(run(tr -> {
              schema.trimLogs(tr, cutoff);
              return CompletableFuture.completedFuture(null);
            }));
          }
          work.add(run(tr -> tr.getReadVersion().thenCompose(rv -> schema.sweepExpired(tr, rv, SWEEP_BATCH, executor))));
          return CompletableFuture.allOf(work.toArray(new CompletableFuture<?>[0]));
        })
        .whenComplete((v, err) -> {
          reaperInFlight.set(false);
          if (err != null && !stopped()) {
            log.warn("node " + me + ": reaper pass failed: " + unwrap(err));
          }
        });
  }

  private CompletableFuture<Boolean> evict(String id, byte[] record) {
    return run(tr -> schema.removeNode(tr, id, record, executor)).thenApply(removed -> {
      if (removed) {
        log.warn("node " + nodeId + " evicted node " + id + ": no heartbeat for " + options.getNodeLease());
      }
      synchronized (observations) {
        observations.remove(id);
      }
      return removed;
    });
  }

  // ================================================================== registrations

  @Override
  public void registrationListener(RegistrationListener listener) {
    this.registrationListener = listener;
  }

  @Override
  public void addRegistration(String address, RegistrationInfo info, Completable<Void> promise) {
    ownRegistrations.computeIfAbsent(address, a -> ConcurrentHashMap.newKeySet()).add(info);
    if (!isActive()) {
      promise.succeed();
      return;
    }
    String me = nodeId;
    // The registration is written only while this node's record exists (read with conflict), so
    // an eviction that removes the node's registrations can never leave one behind.
    complete(run(tr -> schema.readNodeRecord(tr, me).thenApply(record -> {
      if (record != null) {
        schema.writeRegistration(tr, address, info);
        schema.appendRegistrationChanges(tr, Set.of(address));
      }
      return (Void) null;
    })), promise);
  }

  @Override
  public void removeRegistration(String address, RegistrationInfo info, Completable<Void> promise) {
    ownRegistrations.computeIfPresent(address, (a, infos) -> {
      infos.remove(info);
      return infos.isEmpty() ? null : infos;
    });
    if (!isActive()) {
      promise.succeed();
      return;
    }
    complete(run(tr -> {
      schema.clearRegistration(tr, address, info);
      schema.appendRegistrationChanges(tr, Set.of(address));
      return CompletableFuture.completedFuture((Void) null);
    }), promise);
  }

  @Override
  public void getRegistrations(String address, Completable<List<RegistrationInfo>> promise) {
    if (!isActive()) {
      promise.fail(new VertxException("the cluster manager is not active", true));
      return;
    }
    complete(read(tr -> schema.readRegistrations(tr, address, executor)), promise);
  }

  /** Follows the registration log from the cursor and tells the listener about wanted addresses; runs on {@link #registrationEvents}. */
  private void pollRegistrations() {
    Versionstamp from = registrationCursor;
    followLog("registration", registrationEvents, this::pollRegistrations, tr -> {
      CompletableFuture<Void> watch = schema.watchRegistrationGeneration(tr);
      return schema.readRegistrationChangesAfter(tr, from, executor).thenApply(list -> new Poll<>(list, watch));
    }, this::applyRegistrationChanges);
  }

  private void applyRegistrationChanges(List<ClusterSchema.RegistrationChange> changes) {
    Set<String> addresses = new LinkedHashSet<>();
    for (ClusterSchema.RegistrationChange c : changes) {
      if (c.stamp().compareTo(registrationCursor) > 0) {
        registrationCursor = c.stamp();
        addresses.add(c.address());
      }
    }
    try {
      deliverRegistrations(addresses);
    } catch (RuntimeException e) {
      log.warn("node " + nodeId + ": delivering registration updates failed: " + unwrap(e));
    }
  }

  private void deliverRegistrations(Set<String> addresses) {
    RegistrationListener listener = registrationListener;
    if (listener == null || addresses.isEmpty()) {
      return;
    }
    List<String> wanted = new ArrayList<>();
    for (String a : addresses) {
      if (listener.wantsUpdatesFor(a)) {
        wanted.add(a);
      }
    }
    if (wanted.isEmpty()) {
      return;
    }
    Map<String, List<RegistrationInfo>> current = read(tr -> {
      Map<String, CompletableFuture<List<RegistrationInfo>>> reads = new LinkedHashMap<>();
      for (String a : wanted) {
        reads.put(a, schema.readRegistrations(tr, a, executor));
      }
      return CompletableFuture.allOf(reads.values().toArray(new CompletableFuture<?>[0])).thenApply(v -> {
        Map<String, List<RegistrationInfo>> out = new LinkedHashMap<>();
        reads.forEach((a, f) -> out.put(a, f.join()));
        return out;
      });
    }).join();
    current.forEach((address, list) -> {
      if (!stopped()) {
        listener.registrationsUpdated(new RegistrationUpdateEvent(address, list));
      }
    });
  }

  // ================================================================== shared data

  @Override
  public <K, V> void getAsyncMap(String name, Completable<AsyncMap<K, V>> promise) {
    promise.succeed(new FdbAsyncMap<>(this, name));
  }

  @Override
  public <K, V> Map<K, V> getSyncMap(String name) {
    return new FdbSyncMap<>(this, name);
  }

  /**
   * The shortest wait for a lock. A release reaches the next waiter through the store (the release's
   * commit, then the waiter's watch): a few milliseconds, more on a loaded machine, so a shorter wait
   * would give up on grants already on their way (vertx-core's {@code testReleaseTwice} waits 10 ms and
   * failed about one run in four on two busy cores).
   */
  static final long MIN_LOCK_WAIT_MILLIS = 100;

  @Override
  public void getLockWithTimeout(String name, long timeout, Completable<Lock> promise) {
    if (!isActive()) {
      promise.fail(new VertxException("the cluster manager is not active", true));
      return;
    }
    String owner = nodeId + "/" + lockSequence.incrementAndGet();
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.max(MIN_LOCK_WAIT_MILLIS, timeout));
    // A release of the same lock by this node still in flight would make this acquire queue behind
    // it and wait for the hand-off: start after it instead (remote waiters keep their place in the
    // FIFO either way). The wait counts against the timeout.
    CompletableFuture<?> before = releasesInFlight.getOrDefault(name, CompletableFuture.completedFuture(null));
    before.handle((v, e) -> null).thenApplyAsync(ignored -> {
      Duration wait = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
      CompletableFuture<MutexHandle> acquire = mutexes.acquire(name, owner, wait);
      pendingLocks.add(acquire);
      if (stopped()) {
        acquire.cancel(false); // leave() may have run between the check above and the add
      }
      return acquire;
    }, executor).thenCompose(acquire -> acquire.whenComplete((h, e) -> pendingLocks.remove(acquire)))
        .whenComplete((handle, err) -> {
          if (err != null) {
            Throwable cause = unwrap(err);
            if (cause instanceof MutexTimeoutException) {
              promise.fail(new VertxException("Timed out waiting to get lock", true));
            } else {
              promise.fail(cause);
            }
            return;
          }
          FdbLock lock = new FdbLock(this, handle);
          heldLocks.add(lock);
          if (stopped()) {
            lock.releaseAsync();
            promise.fail(new VertxException("the cluster manager left the cluster", true));
          } else {
            promise.succeed(lock);
          }
        });
  }

  void forget(FdbLock lock) {
    heldLocks.remove(lock);
  }

  /** Records a release in flight until it completes (see {@link #getLockWithTimeout}). */
  void releasing(String name, CompletableFuture<?> release) {
    releasesInFlight.put(name, release);
    release.whenComplete((v, e) -> releasesInFlight.remove(name, release));
  }

  @Override
  public void getCounter(String name, Completable<Counter> promise) {
    promise.succeed(new FdbCounter(this, name));
  }

  // ================================================================== helpers for the shared-data classes

  ClusterSchema schema() {
    return schema;
  }

  Executor executor() {
    return executor;
  }

  /**
   * A transaction (retry loop) started on the store's executor, never on the calling thread,
   * bounded by {@link FdbClusterManagerOptions#getOperationTimeout()}: while the store is
   * unavailable, operations fail with FoundationDB's {@code transaction_timed_out} (1031) instead of
   * waiting for ever.
   */
  <T> CompletableFuture<T> run(Function<Transaction, CompletableFuture<T>> body) {
    long timeout = options.getOperationTimeout().toMillis();
    return runUnbounded(tr -> {
      tr.options().setTimeout(timeout);
      return body.apply(tr);
    });
  }

  <T> CompletableFuture<T> read(Function<ReadTransaction, CompletableFuture<T>> body) {
    return run(body::apply);
  }

  /** A transaction without a time limit: the watch loops, whose watches must outlive any timeout. */
  private <T> CompletableFuture<T> runUnbounded(Function<Transaction, CompletableFuture<T>> body) {
    Database database = db;
    if (database == null) {
      return CompletableFuture.failedFuture(new VertxException("the cluster manager has not joined", true));
    }
    return CompletableFuture.supplyAsync(() -> database.runAsync(body, executor), executor).thenCompose(f -> f);
  }

  /** A Vert.x future of the caller's context, completed from {@code op} run on the store's executor. */
  <T> Future<T> future(Supplier<CompletableFuture<T>> op) {
    Promise<T> promise = vertx.getOrCreateContext().promise();
    CompletableFuture.supplyAsync(op, executor).thenCompose(f -> f).whenComplete((r, e) -> {
      if (e != null) {
        promise.fail(unwrap(e));
      } else {
        promise.complete(r);
      }
    });
    return promise.future();
  }

  private static <T> void complete(CompletableFuture<T> f, Completable<T> promise) {
    f.whenComplete((r, e) -> {
      if (e != null) {
        promise.fail(unwrap(e));
      } else {
        promise.succeed(r);
      }
    });
  }

  private void retryLater(ExecutorService events, Runnable task) {
    if (!stopped()) {
      try {
        scheduler.schedule(() -> events.execute(task), RETRY_DELAY.toMillis(), TimeUnit.MILLISECONDS);
      } catch (RuntimeException e) {
        // shut down meanwhile: nothing to retry
      }
    }
  }

  private static java.util.concurrent.ThreadFactory daemon(String name) {
    return r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      return t;
    };
  }

  @Override
  public String toString() {
    return "FdbClusterManager(node " + nodeId + ", " + state + ", " + options + ")";
  }
}
