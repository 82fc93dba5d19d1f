package io.github.fdbcoord.cluster.impl;

import com.apple.foundationdb.Transaction;
import io.github.fdbcoord.mutex.MutexOptions;
import io.github.fdbcoord.mutex.MutexService;
import io.vertx.core.VertxException;
import io.vertx.core.eventbus.EventBus;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

/**
 * The SharedData locks of one node, on the mutex layer: each lock is a mutex of the same name, which
 * the node holds for a run of its local callers ({@link NodeLock}), under an owner
 * {@code nodeId/sequence} per store grant. Leaving gives every grant back and fails the waiting
 * acquires. This is the only class of the manager that uses the mutex layer. Internal to the cluster manager.
 */
public final class Locks {
  /**
   * The shortest wait for a lock. A release reaches the next waiter through the store (the release's
   * commit, then a hint from the releasing node or else the waiter's watch): a few milliseconds, more on a loaded machine, so a shorter wait
   * would give up on grants already on their way (vertx-core's {@code testReleaseTwice} waits 10 ms and
   * failed about one run in four on two busy cores).
   */
  static final long MIN_LOCK_WAIT_MILLIS = 100;

  /** The most local grants a node makes while another node's waiter is queued for the lock (see {@link NodeLock}). */
  public static final int LOCAL_RUN_CHECK = NodeLock.CHECK_EVERY;

  private final MutexService mutexes;
  private final String nodeId;
  private final Executor executor;
  private final ScheduledExecutorService scheduler;
  private final Map<String, NodeLock> locks = new ConcurrentHashMap<>();
  private final AtomicLong sequence = new AtomicLong();
  private final LockHints hints;

  private Locks(MutexService mutexes, String nodeId, Executor executor, ScheduledExecutorService scheduler, LockHints hints) {
    this.mutexes = mutexes;
    this.nodeId = nodeId;
    this.executor = executor;
    this.scheduler = scheduler;
    this.hints = hints;
    hints.attachLocal(mutexes, name -> {
      NodeLock lock = locks.get(name);
      if (lock != null) {
        lock.demanded();
      }
    });
  }

  /**
   * Opens the mutex service of a node. The node's own timer drives the lock heartbeats too:
   * whatever stalls the node (a pause) stalls its locks' heartbeats with it, as in a real process.
   */
  public static CompletableFuture<Locks> open(ClusterStore store, NodeThreads threads, String nodeId, NodeSettings options) {
    LockHints hints = new LockHints(nodeId);
    return MutexService.open(store.database(), MutexOptions.builder()
        .directory(options.lockDirectory())
        .lease(options.nodeLease())
        .heartbeatInterval(options.heartbeatInterval())
        .reaperInterval(options.reaperInterval())
        .executor(store.executor())
        .scheduler(threads.timer())
        .handOffNotifier(hints)
        .build()).thenApply(m -> new Locks(m, nodeId, store.executor(), threads.timer(), hints));
  }

  /**
   * Exchanges hand-off hints with the other nodes over {@code bus}, this node's running clustered
   * event bus (see {@link LockHints}); until then, and without it, a lock handed to another node
   * reaches it by the store's watch alone. Idempotent.
   */
  public void hintOver(EventBus bus) {
    hints.listen(bus);
  }

  /** The mutex service under the locks; for tests. */
  public MutexService mutexes() {
    return mutexes;
  }

  Executor executor() {
    return executor;
  }

  ScheduledExecutorService scheduler() {
    return scheduler;
  }

  /** A new owner name for a store grant of this node. */
  String nextOwner() {
    return nodeId + "/" + sequence.incrementAndGet();
  }

  /** Tells the node of {@code owner}, which holds lock {@code name}, that this node waits for it. */
  void demand(String owner, String name) {
    hints.demand(owner, name);
  }

  /** Drops {@code lock}, idle, from the map (a new entry is made at the next acquire). */
  void retire(NodeLock lock) {
    locks.remove(lock.name(), lock);
  }

  /**
   * Acquires lock {@code name} within {@code timeoutMillis} (at least {@link #MIN_LOCK_WAIT_MILLIS});
   * fails with "Timed out waiting to get lock", or when the node left meanwhile ({@code stopped}).
   */
  public CompletableFuture<LockGrant> acquire(String name, long timeoutMillis, BooleanSupplier stopped) {
    if (stopped.getAsBoolean()) {
      return CompletableFuture.failedFuture(new VertxException("the cluster manager left the cluster", true));
    }
    MutexService.checkName(name, "lock name");
    long wait = Math.max(MIN_LOCK_WAIT_MILLIS, timeoutMillis);
    CompletableFuture<LockGrant> acquire;
    while (true) {
      NodeLock lock = locks.computeIfAbsent(name, n -> new NodeLock(this, n));
      acquire = lock.acquire(wait);
      if (acquire != null) {
        break;
      }
      locks.remove(name, lock); // retired as this call found it: its own removal may not have run yet
    }
    return acquire.thenApply(grant -> {
      if (stopped.getAsBoolean()) {
        grant.releaseAsync(); // leave() may have run between the caller's check and the grant
        throw new CompletionException(new VertxException("the cluster manager left the cluster", true));
      }
      return grant;
    });
  }

  /**
   * Inside {@code tr}: ends every grant of node {@code nodeId}'s locks (each handed to its next
   * waiter that stays) and removes its queue entries; part of the node's eviction.
   */
  CompletableFuture<Integer> removeNodeIn(Transaction tr, String nodeId) {
    return mutexes.removeOwnersIn(tr, nodeId + "/");
  }

  /** On leave: fails the waiting acquires and gives every store grant back; completes when the releases did (or failed). */
  public CompletableFuture<Void> releaseAll() {
    List<CompletableFuture<?>> releases = new ArrayList<>();
    for (NodeLock lock : locks.values()) {
      releases.add(lock.leave());
    }
    return CompletableFuture.allOf(releases.toArray(new CompletableFuture<?>[0])).handle((v, e) -> null);
  }

  /**
   * Stops the mutex service: its reaper, watches, and the heartbeats of the grants held, which are
   * not released (their leases expire), as when the process dies.
   */
  public void close() {
    hints.stop();
    mutexes.close();
  }
}
