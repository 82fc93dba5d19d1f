package io.github.fdbcoord.cluster.impl;

import io.github.fdbcoord.fdb.FdbErrors;
import com.apple.foundationdb.tuple.Versionstamp;
import io.vertx.core.Completable;
import io.vertx.core.VertxException;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;
import io.vertx.core.spi.cluster.NodeInfo;
import io.vertx.core.spi.cluster.NodeListener;
import io.vertx.core.spi.cluster.RegistrationInfo;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The membership of one node: its record (a lease renewed by heartbeats) and node info, the
 * membership log it follows to keep its view and call the node listener, the reaper that evicts
 * nodes whose record stopped changing (and trims the logs, sweeps expired map entries), and the
 * re-join of a node that finds itself evicted. Internal to the cluster manager.
 */
public final class Membership {
  private static final Logger log = LoggerFactory.getLogger(Membership.class);
  private static final int SWEEP_BATCH = 500;

  private final NodeSettings options;
  private final NodeState state;
  private final Registrations registrations;

  private volatile String nodeId;
  private volatile ClusterStore store;
  private volatile NodeThreads threads;
  private volatile NodeInfo nodeInfo;
  private volatile NodeListener listener;
  private volatile Locks locks;
  private volatile FailureDetector detector;

  /**
   * The membership as this node's listener has seen it; changed only on the membership thread.
   * Sorted, because Vert.x HA picks the failover node by index into {@link #nodes()}: every node
   * must list the same members in the same order after the same event.
   */
  private final Set<String> view = new TreeSet<>();
  /**
   * The members this node saw go, newest last, with how (left or evicted) and when: what
   * {@link NodeListener#nodeLeft} cannot say. Bounded: only the recent ones matter (a dashboard).
   */
  private final Map<String, Departure> departures = new LinkedHashMap<>();
  private static final int MAX_DEPARTURES = 1000;
  private Versionstamp cursor;

  private final AtomicLong heartbeats = new AtomicLong();
  private final AtomicBoolean heartbeatInFlight = new AtomicBoolean();
  private final AtomicBoolean reaperInFlight = new AtomicBoolean();
  /** Reaper's observations: node → (record bytes, when first seen unchanged, on this node's monotonic clock). */
  private final Map<String, Observation> observations = new HashMap<>();

  private record Observation(byte[] record, long sinceNanos) {}

  private record Snapshot(long readVersion, Set<String> nodes) {}

  /** A node's info and the port of its failure detector (null when it runs none). */
  private record Reachable(NodeInfo info, Integer probePort) {}

  /** The membership of a node in {@code state}, whose own registrations are written with its record. */
  public Membership(NodeSettings options, NodeState state, Registrations registrations) {
    this.options = options;
    this.state = state;
    this.registrations = registrations;
  }

  /**
   * Writes this node's record (with the port of its failure detector, if any) and reads the other nodes, then (on the membership thread) takes
   * them as its view and becomes ACTIVE; completes with the log cursor of that read.
   */
  public CompletableFuture<Versionstamp> join(String nodeId, ClusterStore store, NodeThreads threads, Locks locks,
      FailureDetector detector) {
    this.nodeId = nodeId;
    this.store = store;
    this.threads = threads;
    this.locks = locks;
    this.detector = detector;
    return writeRecord().thenApplyAsync(snapshot -> {
      synchronized (view) {
        view.clear();
        view.addAll(snapshot.nodes());
      }
      cursor = ClusterSchema.cursorAt(snapshot.readVersion());
      state.set(NodeState.State.ACTIVE);
      log.info("node " + nodeId + " joined the cluster " + options.directory() + " with " + view.size() + " node(s)");
      return cursor;
    }, threads.membershipEvents());
  }

  /**
   * Starts the heartbeats, the reaper and following the membership log; with a failure detector,
   * also watches every member's connection and this node's own suspicion.
   */
  public void start() {
    FailureDetector detector = this.detector;
    if (detector != null) {
      nodes().forEach(detector::watch);
      new SuspicionWatch(nodeId, state, store, threads, this::refute).start();
    }
    threads.every(options.heartbeatInterval(), this::heartbeat);
    threads.every(options.reaperInterval(), this::reap);
    new LogFollower<ClusterSchema.MemberChange>("membership", nodeId, state, store, threads, threads.membershipEvents(), () -> {
      Versionstamp after = cursor;
      return tr -> {
        CompletableFuture<Void> watch = store.schema().watchMemberGeneration(tr);
        return store.schema().readMemberChangesAfter(tr, after, store.executor())
            .thenApply(list -> new LogFollower.Poll<>(list, watch));
      };
    }, this::apply).start();
  }

  /** Removes this node's record, registrations and info, with a "left" log entry. */
  public CompletableFuture<Boolean> remove() {
    String me = nodeId;
    return store.run(tr -> store.schema().removeNode(tr, me, null, store.executor()));
  }

  /**
   * Writes this node's record, info and registrations with an "added" entry in the membership
   * log, and reads the other nodes at the same read version: changes committed after it are in the
   * log after {@code cursorAt(readVersion)}, so none is missed or seen twice.
   */
  private CompletableFuture<Snapshot> writeRecord() {
    Map<String, Set<RegistrationInfo>> mine = registrations.own();
    NodeInfo info = nodeInfo;
    String me = nodeId;
    FailureDetector d = detector;
    ClusterSchema schema = store.schema();
    return store.run(tr -> tr.getReadVersion().thenCompose(rv -> schema.readNodes(tr, store.executor()).thenApply(nodes -> {
      schema.writeNodeRecord(tr, me, heartbeats.incrementAndGet());
      if (d != null) {
        schema.writeProbePort(tr, me, d.port());
      }
      if (info != null) {
        schema.writeNodeInfo(tr, me, info);
      }
      Registrations.writeAll(schema, tr, mine);
      schema.appendMemberChange(tr, ClusterSchema.ADDED, me);
      Set<String> all = new LinkedHashSet<>(nodes.keySet());
      all.add(me);
      return new Snapshot(rv, all);
    })));
  }

  /** The members, sorted: the same order on every node. */
  public List<String> nodes() {
    synchronized (view) {
      return new ArrayList<>(view);
    }
  }

  /** How and when a member left: evicted by a reaper (its lease ran out), or left by itself. */
  public record Departure(boolean evicted, Instant at) {}

  /** How member {@code id} left, if this node saw it go (among the last {@value #MAX_DEPARTURES}). */
  public Optional<Departure> departure(String id) {
    synchronized (view) {
      return Optional.ofNullable(departures.get(id));
    }
  }

  /** Who hears about nodes added and left. */
  public void listener(NodeListener listener) {
    this.listener = listener;
  }

  /** Sets this node's info (in the store too once joined). */
  public void setNodeInfo(NodeInfo info, Completable<Void> promise) {
    this.nodeInfo = info;
    if (!state.isActive()) {
      promise.succeed();
      return;
    }
    String me = nodeId;
    ClusterSchema schema = store.schema();
    FailureDetector d = detector;
    // The detector listens where the event bus does; info and probe port change in one transaction.
    CompletableFuture<Integer> moved = d == null ? CompletableFuture.completedFuture(null) : d.moveTo(info.host());
    ClusterStore.complete(moved.thenCompose(port -> store.whileNodeExists(me, tr -> {
      schema.writeNodeInfo(tr, me, info);
      if (port != null) {
        schema.writeProbePort(tr, me, port);
      }
    })).whenComplete((x, err) -> {
      if (d != null) {
        d.closeReplaced();
      }
    }), promise);
  }

  /** This node's info. */
  public NodeInfo nodeInfo() {
    return nodeInfo;
  }

  /**
   * The info of node {@code id}; fails when it is not a member. Vert.x asks for it only to open an
   * event-bus connection to the node (a first one, or again after the last one closed), and fails
   * the messages queued for that connection with the failure given here: a plain connect failure
   * leaves their requests to wait out the send timeout, a {@link ReplyException} fails them at once.
   * So, with failure detection on, a node whose connection is refused (its process died; it is
   * being evicted) is answered with {@link ReplyFailure#NO_HANDLERS}: nothing was delivered.
   */
  public void nodeInfo(String id, Completable<NodeInfo> promise) {
    if (!state.isActive()) {
      promise.fail(ClusterStore.notActive());
      return;
    }
    FailureDetector d = detector;
    ClusterSchema schema = store.schema();
    // Info and probe port from one snapshot: a port read after an eviction would be gone while the info was not.
    store.read(tr -> schema.readNodeInfo(tr, id).thenCombine(schema.readProbePort(tr, id), Reachable::new))
        .thenCompose(found -> {
          NodeInfo info = found.info();
          Integer port = found.probePort();
          if (info == null || d == null || port == null) {
            return CompletableFuture.completedFuture(info);
          }
          return d.refuses(id, info, port).thenApply(refused -> {
            if (refused) {
              throw new ReplyException(ReplyFailure.NO_HANDLERS, "node " + id
                  + " refuses connections (its process is gone; it is being evicted): the message was not delivered");
            }
            return info;
          });
        }).whenComplete((info, err) -> {
      if (err != null) {
        promise.fail(FdbErrors.unwrap(err));
      } else if (info == null) {
        // A ReplyException (a VertxException) so that messages queued for the node fail at once.
        promise.fail(new ReplyException(ReplyFailure.NO_HANDLERS, "Not a member of the cluster: node " + id
            + " left or was evicted; the message was not delivered"));
      } else {
        promise.succeed(info);
      }
    });
  }

  private void heartbeat() {
    if (!state.isActive() || !heartbeatInFlight.compareAndSet(false, true)) {
      return;
    }
    String me = nodeId;
    store.run(tr -> store.schema().readNodeRecord(tr, me).thenApply(record -> {
      if (record == null) {
        return false;
      }
      store.schema().writeNodeRecord(tr, me, heartbeats.incrementAndGet());
      return true;
    })).whenComplete((alive, err) -> {
      heartbeatInFlight.set(false);
      if (err != null) {
        log.warn("node " + me + ": heartbeat failed (the store may be unavailable): " + FdbErrors.unwrap(err));
      } else if (!alive && state.isActive()) {
        log.warn("node " + me + " found itself evicted (its lease ran out): re-joining");
        threads.membershipEvents().execute(this::rejoinIfEvicted);
      }
    });
  }

  /**
   * Called on the membership thread: when this node's record is gone (another node evicted it,
   * for example after a long pause), writes it again with the node info and every registration of
   * this node, and tells the listener what changed meanwhile.
   */
  private void rejoinIfEvicted() {
    if (!state.isActive()) {
      return;
    }
    try {
      byte[] record = store.read(tr -> store.schema().readNodeRecord(tr, nodeId)).join();
      if (record != null) {
        return;
      }
      Snapshot snapshot = writeRecord().join();
      Set<String> before;
      synchronized (view) {
        before = new LinkedHashSet<>(view);
        view.clear();
        view.addAll(snapshot.nodes());
      }
      cursor = ClusterSchema.cursorAt(snapshot.readVersion());
      log.info("node " + nodeId + " re-joined with " + snapshot.nodes().size() + " node(s) and re-published "
          + registrations.ownAddresses() + " address(es)");
      for (String n : before) {
        if (!snapshot.nodes().contains(n)) {
          tellDetector(n, false);
          fire(n, false);
        }
      }
      for (String n : snapshot.nodes()) {
        if (!before.contains(n)) {
          tellDetector(n, true);
          fire(n, true);
        }
      }
    } catch (RuntimeException e) {
      log.warn("node " + nodeId + " could not re-join yet (will retry at the next heartbeat): " + FdbErrors.unwrap(e));
    }
  }

  private void apply(List<ClusterSchema.MemberChange> changes) {
    for (ClusterSchema.MemberChange c : changes) {
      if (state.stopped()) {
        return;
      }
      if (c.stamp().compareTo(cursor) <= 0) {
        continue; // already covered by a re-join's snapshot
      }
      cursor = c.stamp();
      boolean added = ClusterSchema.ADDED.equals(c.type());
      if (c.nodeId().equals(nodeId)) {
        if (ClusterSchema.LEFT.equals(c.type()) && state.isActive()) {
          log.warn("node " + nodeId + " was evicted by another node: re-joining");
          rejoinIfEvicted();
        }
        continue;
      }
      boolean changed;
      synchronized (view) {
        changed = added ? view.add(c.nodeId()) : view.remove(c.nodeId());
        if (changed && !added) {
          departures.remove(c.nodeId());
          departures.put(c.nodeId(), new Departure(c.evicted(), Instant.now()));
          if (departures.size() > MAX_DEPARTURES) {
            departures.remove(departures.keySet().iterator().next());
          }
        }
      }
      if (changed) {
        tellDetector(c.nodeId(), added);
        fire(c.nodeId(), added);
      }
    }
  }

  private void tellDetector(String id, boolean added) {
    FailureDetector d = detector;
    if (d == null || id.equals(nodeId)) {
      return;
    }
    if (added) {
      d.watch(id);
    } else {
      d.forget(id);
    }
  }

  /** Whether {@code id} is a member in this node's view. */
  boolean isMember(String id) {
    synchronized (view) {
      return view.contains(id);
    }
  }

  /**
   * Answers a suspicion of this node: renews its record at once (so an eviction that expects the
   * record the suspecter saw cannot commit) and clears the suspicion, in one transaction.
   */
  private CompletableFuture<Boolean> refute() {
    String me = nodeId;
    ClusterSchema schema = store.schema();
    return store.run(tr -> schema.readNodeRecord(tr, me).thenApply(record -> {
      schema.clearSuspicion(tr, me);
      if (record == null) {
        return false;
      }
      schema.writeNodeRecord(tr, me, heartbeats.incrementAndGet());
      return true;
    })).whenComplete((renewed, err) -> {
      if (err != null) {
        log.warn("node " + me + " could not refute a suspicion: " + FdbErrors.unwrap(err));
      } else {
        log.info("node " + me + " refuted a suspicion of its death");
      }
    });
  }

  private void fire(String id, boolean added) {
    NodeListener l = listener;
    if (l == null || !state.isActive()) {
      return;
    }
    try {
      if (added) {
        l.nodeAdded(id);
      } else {
        l.nodeLeft(id);
      }
    } catch (Throwable t) {
      log.error("node listener failed on " + (added ? "nodeAdded(" : "nodeLeft(") + id + ")", t);
    }
  }

  /** Stops calling the node listener (after the node left). */
  public void forgetListener() {
    listener = null;
  }

  /**
   * Evicts nodes whose record did not change for a node lease, measured on this node's monotonic
   * clock from when it first saw that record; trims the logs and sweeps expired map entries.
   */
  private void reap() {
    if (!state.isActive() || !reaperInFlight.compareAndSet(false, true)) {
      return;
    }
    String me = nodeId;
    ClusterSchema schema = store.schema();
    long leaseNanos = options.nodeLease().toNanos();
    store.read(tr -> tr.getReadVersion().thenCompose(rv -> schema.readNodes(tr, store.executor())
        .thenApply(nodes -> Map.entry(rv, nodes))))
        .thenCompose(seen -> {
          List<CompletableFuture<?>> work = new ArrayList<>(evictStale(me, seen.getValue(), leaseNanos));
          long cutoff = seen.getKey() - options.logRetention().toMillis() * ClusterSchema.VERSIONS_PER_MILLI;
          if (cutoff > 0) {
            work.add(store.run(tr -> {
              schema.trimLogs(tr, cutoff);
              return CompletableFuture.completedFuture(null);
            }));
          }
          work.add(store.run(tr -> tr.getReadVersion().thenCompose(rv -> schema.sweepExpired(tr, rv, SWEEP_BATCH, store.executor()))));
          return CompletableFuture.allOf(work.toArray(new CompletableFuture<?>[0]));
        })
        .whenComplete((v, err) -> {
          reaperInFlight.set(false);
          if (err != null && !state.stopped()) {
            log.warn("node " + me + ": reaper pass failed: " + FdbErrors.unwrap(err));
          }
        });
  }

  private List<CompletableFuture<?>> evictStale(String me, Map<String, byte[]> nodes, long leaseNanos) {
    long now = System.nanoTime();
    List<CompletableFuture<?>> work = new ArrayList<>();
    synchronized (observations) {
      observations.keySet().retainAll(nodes.keySet());
      nodes.forEach((id, record) -> {
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
    return work;
  }

  private CompletableFuture<Boolean> evict(String id, byte[] record) {
    return evict(id, record, "no heartbeat for " + options.nodeLease());
  }

  /**
   * Evicts node {@code id} in one transaction that commits only if its record is still
   * {@code record}: its record, info and registrations, and its locks' grants (each handed to its
   * next waiter) and queue entries. A node that renewed meanwhile is left alone.
   */
  CompletableFuture<Boolean> evict(String id, byte[] record, String why) {
    Locks l = locks;
    return store.run(tr -> store.schema().removeNode(tr, id, record, store.executor())
        .thenCompose(removed -> !removed || l == null ? CompletableFuture.completedFuture(removed)
            : l.removeNodeIn(tr, id).thenApply(n -> true))).thenApply(removed -> {
      if (removed) {
        log.warn("node " + nodeId + " evicted node " + id + ": " + why);
      }
      synchronized (observations) {
        observations.remove(id);
      }
      return removed;
    });
  }
}
