package io.github.fdbcoord.cluster;

import io.github.fdbcoord.fdb.FdbErrors;
import com.apple.foundationdb.Database;
import io.github.fdbcoord.cluster.impl.ClusterStore;
import io.github.fdbcoord.cluster.impl.FailureDetector;
import io.github.fdbcoord.cluster.impl.FdbAsyncMap;
import io.github.fdbcoord.cluster.impl.FdbCounter;
import io.github.fdbcoord.cluster.impl.FdbSyncMap;
import io.github.fdbcoord.cluster.impl.Locks;
import io.github.fdbcoord.cluster.impl.Membership;
import io.github.fdbcoord.cluster.impl.NodeSettings;
import io.github.fdbcoord.cluster.impl.NodeState;
import io.github.fdbcoord.cluster.impl.NodeState.State;
import io.github.fdbcoord.cluster.impl.NodeThreads;
import io.github.fdbcoord.cluster.impl.Registrations;
import io.github.fdbcoord.cluster.impl.RequestDrain;
import io.github.fdbcoord.store.Store;
import io.github.fdbcoord.store.StoreOptions;
import io.vertx.core.Completable;
import io.vertx.core.Context;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxException;
import io.vertx.core.eventbus.impl.EventBusInternal;
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

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.Set;
import java.util.concurrent.ExecutionException;

/**
 * A Vert.x {@link ClusterManager} on FoundationDB (or the embedded engine): membership with leases
 * and heartbeats, a versionstamp-ordered membership log, event-bus registrations removed together
 * with their node, async maps with TTL, sync maps, locks on the mutex layer and atomic counters.
 *
 * <pre>
 * Vertx vertx = Vertx.builder()
 *     .withClusterManager(new FdbClusterManager(FdbClusterManagerOptions.builder().storeOptions(StoreOptions.cluster(file)).build()))
 *     .buildClustered().await();
 * </pre>
 *
 * <p>Vert.x also finds it by itself ({@code Vertx.builder().buildClustered()}, the launcher's
 * {@code -cluster}): the jar registers it in {@code META-INF/services/io.vertx.core.spi.VertxServiceProvider},
 * where Vert.x 5 looks, and Vert.x then uses the no-argument constructor.
 *
 * <p>This class is the façade of the SPI; the work is done in {@code io.github.fdbcoord.cluster.impl}
 * (membership, registrations, one class per shared-data primitive), which is internal. Every store
 * call runs on the store's executor, never on the caller's thread (an event loop); node and
 * registration listeners are called on two private threads, in log order. See docs/cluster-manager.md.
 */
public class FdbClusterManager implements ClusterManager {
  /** System property naming a JSON options file for the no-argument constructor (the launcher's {@code -cluster}). */
  public static final String CONFIG_PROPERTY = "vertx.fdb.cluster.config";

  private static final Logger log = LoggerFactory.getLogger(FdbClusterManager.class);

  private final FdbClusterManagerOptions options;
  private final NodeState state = new NodeState();
  private final Registrations registrations = new Registrations(state);
  private final RequestDrain drain = new RequestDrain();
  private final Membership membership;

  private VertxInternal vertx;
  private volatile String nodeId;
  private volatile NodeThreads threads;
  private volatile Store ownedStore;
  private volatile ClusterStore store;
  private volatile Locks locks;
  private volatile FailureDetector detector;
  /** Fault injection: crash once the join has written the node's record, before the node starts. */
  private volatile boolean crashDuringJoin;

  /**
   * Options from the JSON file named by the system property {@value #CONFIG_PROPERTY}, else a real
   * cluster when the environment names a cluster file ({@code FDB_CLUSTER_FILE}), else the embedded
   * engine in memory (which only the nodes of one JVM can share, and only with a handed-in database).
   */
  public FdbClusterManager() {
    this(defaultOptions());
  }

  /** A manager with these options. */
  public FdbClusterManager(FdbClusterManagerOptions options) {
    this.options = Objects.requireNonNull(options, "options");
    this.membership = new Membership(settings(options), state, registrations);
  }

  /** A manager with options of the JSON form (see {@link FdbClusterManagerOptions}). */
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
    FdbClusterManagerOptions.Builder options = FdbClusterManagerOptions.builder();
    if (clusterFile != null && !clusterFile.isEmpty()) {
      options.storeOptions(StoreOptions.cluster(Path.of(clusterFile)));
    }
    return options.build();
  }

  /**
   * Where the clustered event bus listens when Vert.x's {@code EventBusOptions} names no host:
   * {@link FdbClusterManagerOptions#eventBusHost()}, loopback unless configured (Vert.x's own
   * default would be the machine's first network address).
   */
  @Override
  public String clusterHost() {
    return options.eventBusHost();
  }

  /** The options of this manager. */
  public FdbClusterManagerOptions options() {
    return options;
  }

  // ================================================================== lifecycle

  /** Keeps the Vert.x instance: the join and leave promises complete on its threads. */
  @Override
  public void init(Vertx vertx) {
    this.vertx = (VertxInternal) vertx;
  }

  /** Opens the store, joins the membership (a node record with a lease, heartbeated) and starts following registrations; one join per instance. */
  @Override
  public void join(Completable<Void> promise) {
    if (!state.move(State.NEW, State.JOINING)) {
      promise.fail(new IllegalStateException("this cluster manager already joined (state " + state + "); use a new instance"));
      return;
    }
    nodeId = UUID.randomUUID().toString();
    threads = new NodeThreads();
    CompletableFuture<Void> joined = CompletableFuture.supplyAsync(this::openDatabase, threads.timer())
        .thenCompose(db -> ClusterStore.open(db, options.directory(), options.operationTimeout(), vertx))
        .thenCompose(s -> {
          store = s;
          return startDetector();
        })
        .thenComposeAsync(d -> Locks.open(store, threads, nodeId, settings(options)), threads.timer())
        .thenCompose(l -> {
          locks = l;
          return membership.join(nodeId, store, threads, locks, detector);
        })
        .thenCompose(cursor -> crashDuringJoin ? crashedDuringJoin() : CompletableFuture.completedFuture(cursor))
        .whenComplete((cursor, err) -> {
          if (err != null) {
            state.set(State.LEFT);
            shutdown();
          } else {
            membership.start();
            registrations.start(nodeId, store, threads, cursor);
            drainWhenVertxCloses();
          }
        }).thenApply(cursor -> null);
    completeOnVertxThread(joined, promise);
  }

  /**
   * When this manager is its Vert.x's own: Vert.x runs close hooks first when it closes, before it
   * undeploys and closes the event bus (and calls {@link #leave}), so the hook is where the node
   * can still answer the requests already on their way to it. It withdraws the node's
   * registrations of the addresses other nodes also serve (see
   * {@link Registrations#withdrawServedElsewhere()}), then waits (see
   * {@link FdbClusterManagerOptions#drainTimeout()}) for the requests delivered to it to be
   * answered and for senders to turn to the other nodes.
   */
  private void drainWhenVertxCloses() {
    if (vertx == null || vertx.clusterManager() != this) {
      return;
    }
    drain.attach(vertx.eventBus());
    vertx.addCloseHook(completion -> {
      if (!state.isActive()) {
        completion.succeed();
        return;
      }
      // Bounded by the drain timeout: during a store outage the withdrawal cannot commit, and the
      // rest of the stop (undeploy, leave) must still fit a deployment's grace period.
      registrations.withdrawServedElsewhere()
          .completeOnTimeout(Set.of(), options.drainTimeout().toMillis(), TimeUnit.MILLISECONDS)
          .thenCompose(withdrawn -> withdrawn.isEmpty()
              ? CompletableFuture.completedFuture((RequestDrain.Outcome) null)
              : drain.await(threads.timer(), System.nanoTime(), options.drainTimeout()))
          .whenComplete((outcome, err) -> {
            if (outcome != null) {
              log.info("node " + nodeId + " withdrew its registrations served elsewhere and drained its requests in "
                  + outcome.tookMillis() + " ms" + (outcome.unanswered() == 0 ? ""
                  : " (" + outcome.unanswered() + " still unanswered after the drain timeout)"));
            }
            completion.succeed();
          });
    });
  }

  /** The failure detector, when enabled. */
  private CompletableFuture<FailureDetector> startDetector() {
    if (!options.failureDetection()) {
      return CompletableFuture.completedFuture(null);
    }
    FailureDetector d = new FailureDetector(options.suspicionWindow(), state);
    d.attach(nodeId, store, threads, membership);
    detector = d;
    // The event bus's host unless Vert.x's EventBusOptions name another, which the node info then
    // tells: the detector moves there (Membership.setNodeInfo).
    return d.listen(clusterHost());
  }

  private Database openDatabase() {
    if (options.database() != null) {
      return options.database();
    }
    StoreOptions storeOptions = options.storeOptions();
    if (storeOptions.engine() == StoreOptions.Engine.EMBEDDED) {
      String where = storeOptions.dataDirectory() == null ? "in memory" : "on " + storeOptions.dataDirectory();
      log.warn("node " + nodeId + " opens a private embedded store (" + where + "): no node of another JVM can join"
          + " this cluster. To form a cluster across processes, give a FoundationDB cluster file (options"
          + " {\"store\": {\"engine\": \"cluster\", \"clusterFile\": ...}}, or FDB_CLUSTER_FILE), or hand one database to the nodes of one JVM.");
    }
    ownedStore = Store.open(storeOptions);
    return ownedStore.database();
  }

  /**
   * Vert.x continues its start-up and shut-down on the thread that completes the join and leave
   * promises, and expects a Vert.x thread there (as the other managers give, via executeBlocking).
   */
  private void completeOnVertxThread(CompletableFuture<Void> done, Completable<Void> promise) {
    if (vertx == null) {
      done.whenComplete((v, err) -> promise.complete(null, err == null ? null : FdbErrors.unwrap(err)));
      return;
    }
    vertx.<Void>executeBlocking(() -> {
      try {
        done.get();
        return null;
      } catch (ExecutionException e) {
        Throwable cause = FdbErrors.unwrap(e.getCause());
        throw cause instanceof Exception ? (Exception) cause : new VertxException(cause);
      }
    }, false).onSuccess(v -> promise.succeed()).onFailure(promise::fail);
  }

  /** Releases this node's locks, removes its node record and closes the store it opened; a second leave does nothing. */
  @Override
  public void leave(Completable<Void> promise) {
    if (state.move(State.CRASHED, State.LEFT)) {
      // A crashed node removes nothing (the others evict it); only its local resources go.
      shutdown();
      promise.succeed();
      return;
    }
    if (!state.move(State.ACTIVE, State.LEAVING)) {
      // A second leave (Vert.x closes a node whose manager already left) has nothing to do.
      promise.succeed();
      return;
    }
    threads.cancelPeriodic();
    // Registrations first, so senders stop choosing this node; then the locks go to their next
    // waiters; the record last, so no peer suspects a node that is still handing over.
    CompletableFuture<Void> left = registrations.removeOwn()
        .thenCompose(v -> locks.releaseAll())
        .thenCompose(v -> membership.remove())
        .handle((removed, err) -> {
          state.set(State.LEFT);
          membership.forgetListener();
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
    if (detector != null) {
      detector.close();
    }
    if (locks != null) {
      locks.close();
    }
    if (threads != null) {
      threads.shutdown();
    }
    if (ownedStore != null) {
      ownedStore.close();
    }
  }

  /** Whether this node joined and has neither left nor crashed. */
  @Override
  public boolean isActive() {
    return state.isActive();
  }

  /**
   * Fault injection for tests and benchmarks (not API; reached from tests through their
   * {@code FaultInjection}): stops this node at once as a process crash would. Its heartbeats,
   * reaper, membership, registration and suspicion watches stop with its threads, its mutex
   * service stops the heartbeats of its locks, their waiters' heartbeats, its mutex reaper and its
   * mutex watchers, and its failure detector's sockets close (as the kernel closes a dead
   * process's); nothing is removed from the store. The other nodes notice the closed connections
   * and evict it after the suspicion window (after the node lease without failure detection); the
   * eviction hands its locks to their next waiters.
   */
  CompletableFuture<Void> simulateCrash() {
    if (!state.move(State.ACTIVE, State.CRASHED)) {
      return CompletableFuture.completedFuture(null);
    }
    threads.shutdownNow();
    locks.close();
    // A dead process's sockets are gone at once; these close asynchronously, and the returned future
    // says when (a caller that sends to the node right after the crash waits for it).
    CompletableFuture<Void> detectorClosed = detector == null ? CompletableFuture.completedFuture(null)
        : detector.close().toCompletionStage().toCompletableFuture();
    CompletableFuture<Void> busClosed = CompletableFuture.completedFuture(null);
    // The clustered event bus of this node's Vert.x dies with the process too (its server and its
    // connections); a Vert.x instance shared with other managers (tests) keeps its local bus.
    if (vertx != null && vertx.clusterManager() == this
        && vertx.eventBus() instanceof EventBusInternal bus) {
      Promise<Void> closed = Promise.promise();
      bus.close(closed);
      busClosed = closed.future().toCompletionStage().toCompletableFuture();
    }
    return CompletableFuture.allOf(detectorClosed, busClosed);
  }

  /** For fault injection: whether {@link #simulateCrash()} closes the event bus (this node's Vert.x is its own). */
  boolean crashClosesEventBus() {
    return vertx != null && vertx.clusterManager() == this;
  }

  /**
   * Fault injection for tests (not API): the next join crashes this node (as {@link #simulateCrash()})
   * right after its record is in the store, before it heartbeats, watches or answers anything; the
   * join then fails, where a crashed process would never answer at all.
   */
  void simulateCrashDuringJoin() {
    crashDuringJoin = true;
  }

  private <T> CompletableFuture<T> crashedDuringJoin() {
    simulateCrash();
    return CompletableFuture.failedFuture(new VertxException("node " + nodeId + " crashed during its join (fault injection)", true));
  }

  /**
   * Fault injection for tests and benchmarks (not API): blocks this node's timer, membership and
   * registration threads for {@code pause}, so neither the node nor its locks heartbeat, and it
   * neither follows the logs nor answers suspicions, as if the process were stopped (SIGSTOP). Its
   * sockets stay open, as a stopped process's do, so no peer suspects it: only the lease evicts it.
   * Once the pause ends the node finds out it was evicted, if it was, and re-joins; a lock it held
   * that was handed to another node reports {@link FdbLock#lost()} and its release fails.
   */
  void simulatePause(Duration pause) {
    threads.pause(pause);
  }

  // ================================================================== membership

  /** This node's id, a random UUID chosen at join. */
  @Override
  public String getNodeId() {
    return nodeId;
  }

  /** The ids of the live members, as this node last read the membership. */
  @Override
  public List<String> getNodes() {
    return membership.nodes();
  }

  /**
   * How member {@code id} went, when this node saw it go (one of its recent departures):
   * {@code "evicted"} when another node's reaper removed it (its lease ran out, or its failure
   * detector's connection closed), {@code "left"} when it left by itself; empty for a member this
   * node did not see go. With {@link #departedAt}, what a dashboard shows of a member that is gone.
   */
  public Optional<String> departureCause(String id) {
    return membership.departure(id).map(d -> d.evicted() ? "evicted" : "left");
  }

  /** When this node saw member {@code id} go (see {@link #departureCause}). */
  public Optional<Instant> departedAt(String id) {
    return membership.departure(id).map(Membership.Departure::at);
  }

  /** Sets the listener told of members that join and leave (evicted after their lease). */
  @Override
  public void nodeListener(NodeListener listener) {
    membership.listener(listener);
  }

  /** Stores this node's event-bus host and port in its node record. */
  @Override
  public void setNodeInfo(NodeInfo info, Completable<Void> promise) {
    membership.setNodeInfo(info, promise);
  }

  /** This node's info as set by Vert.x. */
  @Override
  public NodeInfo getNodeInfo() {
    return membership.nodeInfo();
  }

  /**
   * Another member's info, read from its node record; fails for an unknown node (or one whose process refuses
   * connections). Answered on the caller's context when it has one: Vert.x's clustered event bus asks this from the
   * sending thread when it opens a connection, and queues the message on the connection only after this returns. A
   * failure answered first on another thread closed the connection before the message was queued on it, and the
   * message then waited out its send timeout instead of failing fast (3 of 10 requests to a crashed node, under load,
   * in a fresh-clone run of {@code CrashedNodeSendersTest}); on the caller's context the answer comes after the send.
   */
  @Override
  public void getNodeInfo(String id, Completable<NodeInfo> promise) {
    Context caller = Vertx.currentContext();
    if (caller == null) {
      membership.nodeInfo(id, promise);
      return;
    }
    membership.nodeInfo(id, (info, failure) -> {
      try {
        caller.runOnContext(v -> promise.complete(info, failure));
      } catch (RejectedExecutionException closed) {
        promise.complete(info, failure); // the caller's event loop has shut down: answer here rather than never
      }
    });
  }

  // ================================================================== registrations

  /** Sets the listener told of event-bus registrations as they change on any node. */
  @Override
  public void registrationListener(RegistrationListener listener) {
    registrations.listener(listener);
  }

  /** Records a consumer of this node at {@code address}; removed with the node when it leaves or is evicted. */
  @Override
  public void addRegistration(String address, RegistrationInfo info, Completable<Void> promise) {
    registrations.add(address, info, promise);
  }

  /** Removes a consumer of this node at {@code address}. */
  @Override
  public void removeRegistration(String address, RegistrationInfo info, Completable<Void> promise) {
    registrations.remove(address, info, promise);
  }

  /** The consumers at {@code address} on every live node. */
  @Override
  public void getRegistrations(String address, Completable<List<RegistrationInfo>> promise) {
    registrations.get(address, promise);
  }

  // ================================================================== shared data

  /** The cluster-wide map {@code name} in the store (entries with a TTL expire on their own). */
  @Override
  public <K, V> void getAsyncMap(String name, Completable<AsyncMap<K, V>> promise) {
    promise.succeed(new FdbAsyncMap<>(joinedStore(), name));
  }

  /** The map {@code name} in the store, with blocking operations (Vert.x's HA data). */
  @Override
  public <K, V> Map<K, V> getSyncMap(String name) {
    return new FdbSyncMap<>(joinedStore(), name);
  }

  /** The lock {@code name}: a mutex of the lock directory, renewed by this node until released, released when the node leaves. */
  @Override
  public void getLockWithTimeout(String name, long timeout, Completable<Lock> promise) {
    if (!state.isActive()) {
      promise.fail(ClusterStore.notActive());
      return;
    }
    if (vertx != null && vertx.clusterManager() == this) {
      // By the first lock request the node's event bus runs (during the join it did not yet).
      locks.hintOver(vertx.eventBus());
    }
    ClusterStore.complete(locks.acquire(name, timeout, state::stopped).thenApply(grant -> (Lock) new FdbLock(grant)), promise);
  }

  /** The cluster-wide counter {@code name} in the store. */
  @Override
  public void getCounter(String name, Completable<Counter> promise) {
    promise.succeed(new FdbCounter(joinedStore(), name));
  }

  /** This node's way to the store (null before join); for tests that look at the store itself. */
  ClusterStore store() {
    return store;
  }

  /** This node's locks (null before join); for tests. */
  Locks locks() {
    return locks;
  }

  /** This node's failure detector (null when disabled or before join); for tests. */
  FailureDetector detector() {
    return detector;
  }

  private ClusterStore joinedStore() {
    ClusterStore s = store;
    if (s == null) {
      throw new VertxException("the cluster manager has not joined", true);
    }
    return s;
  }

  /** The node id, its state and its options, for logs. */
  @Override
  public String toString() {
    return "FdbClusterManager(node " + nodeId + ", " + state + ", " + options + ")";
  }

  private static NodeSettings settings(FdbClusterManagerOptions options) {
    return new NodeSettings(options.directory(), options.lockDirectory(), options.nodeLease(),
        options.heartbeatInterval(), options.reaperInterval(), options.logRetention());
  }
}
