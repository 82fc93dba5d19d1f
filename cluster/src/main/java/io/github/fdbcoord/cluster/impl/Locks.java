package io.github.fdbcoord.cluster.impl;

import com.apple.foundationdb.Transaction;
import io.github.fdbcoord.fdb.FdbErrors;
import io.github.fdbcoord.mutex.MutexHandle;
import io.github.fdbcoord.mutex.MutexOptions;
import io.github.fdbcoord.mutex.MutexService;
import io.github.fdbcoord.mutex.MutexTimeoutException;
import io.vertx.core.VertxException;
import io.vertx.core.eventbus.EventBus;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

/**
 * The SharedData locks of one node, on the mutex layer: each lock is a mutex of the same name,
 * owned by {@code nodeId/sequence}. Keeps the grants held and the acquires pending, so that leaving
 * releases the first and cancels the second. This is the only class of the manager that uses the
 * mutex layer. Internal to the cluster manager.
 */
public final class Locks {
  /**
   * The shortest wait for a lock. A release reaches the next waiter through the store (the release's
   * commit, then a hint from the releasing node or else the waiter's watch): a few milliseconds, more on a loaded machine, so a shorter wait
   * would give up on grants already on their way (vertx-core's {@code testReleaseTwice} waits 10 ms and
   * failed about one run in four on two busy cores).
   */
  static final long MIN_LOCK_WAIT_MILLIS = 100;

  private final MutexService mutexes;
  private final String nodeId;
  private final Executor executor;
  private final Set<LockGrant> held = ConcurrentHashMap.newKeySet();
  private final Set<CompletableFuture<MutexHandle>> pending = ConcurrentHashMap.newKeySet();
  private final Map<String, CompletableFuture<?>> releasesInFlight = new ConcurrentHashMap<>();
  private final AtomicLong sequence = new AtomicLong();
  private final LockHints hints;

  private Locks(MutexService mutexes, String nodeId, Executor executor, LockHints hints) {
    this.mutexes = mutexes;
    this.nodeId = nodeId;
    this.executor = executor;
    this.hints = hints;
    hints.attachLocal(mutexes);
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
        .build()).thenApply(m -> new Locks(m, nodeId, store.executor(), hints));
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

  /**
   * Acquires lock {@code name} within {@code timeoutMillis} (at least {@link #MIN_LOCK_WAIT_MILLIS});
   * fails with "Timed out waiting to get lock", or when the node left meanwhile ({@code stopped}).
   */
  public CompletableFuture<LockGrant> acquire(String name, long timeoutMillis, BooleanSupplier stopped) {
    String owner = nodeId + "/" + sequence.incrementAndGet();
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.max(MIN_LOCK_WAIT_MILLIS, timeoutMillis));
    // A release of the same lock by this node still in flight would make this acquire queue behind
    // it and wait for the hand-off: start after it instead (remote waiters keep their place in the
    // FIFO either way). The wait counts against the timeout.
    CompletableFuture<?> before = releasesInFlight.getOrDefault(name, CompletableFuture.completedFuture(null));
    return before.handle((v, e) -> null).thenApplyAsync(ignored -> {
      Duration wait = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
      CompletableFuture<MutexHandle> acquire = mutexes.acquire(name, owner, wait);
      pending.add(acquire);
      if (stopped.getAsBoolean()) {
        acquire.cancel(false); // leave() may have run between the caller's check and the add
      }
      return acquire;
    }, executor).thenCompose(acquire -> acquire.whenComplete((h, e) -> pending.remove(acquire)))
        .handle((handle, err) -> {
          if (err != null) {
            Throwable cause = FdbErrors.unwrap(err);
            throw new CompletionException(cause instanceof MutexTimeoutException
                ? new VertxException("Timed out waiting to get lock", true) : cause);
          }
          LockGrant grant = new LockGrant(this, handle);
          held.add(grant);
          if (stopped.getAsBoolean()) {
            grant.releaseAsync();
            throw new CompletionException(new VertxException("the cluster manager left the cluster", true));
          }
          return grant;
        });
  }

  void forget(LockGrant grant) {
    held.remove(grant);
  }

  /** Records a release in flight until it completes (see {@link #acquire}). */
  void releasing(String name, CompletableFuture<?> release) {
    releasesInFlight.put(name, release);
    release.whenComplete((v, e) -> releasesInFlight.remove(name, release));
  }

  /**
   * Inside {@code tr}: ends every grant of node {@code nodeId}'s locks (each handed to its next
   * waiter that stays) and removes its queue entries; part of the node's eviction.
   */
  CompletableFuture<Integer> removeNodeIn(Transaction tr, String nodeId) {
    return mutexes.removeOwnersIn(tr, nodeId + "/");
  }

  /** On leave: cancels the pending acquires and releases every grant held; completes when the releases did (or failed). */
  public CompletableFuture<Void> releaseAll() {
    pending.forEach(f -> f.cancel(false));
    List<CompletableFuture<?>> releases = new ArrayList<>();
    for (LockGrant grant : held) {
      releases.add(grant.releaseAsync());
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
