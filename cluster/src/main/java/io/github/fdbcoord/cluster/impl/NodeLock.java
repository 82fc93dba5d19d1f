package io.github.fdbcoord.cluster.impl;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.fdb.FdbErrors;
import io.github.fdbcoord.mutex.MutexException;
import io.github.fdbcoord.mutex.MutexHandle;
import io.vertx.core.VertxException;
import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One SharedData lock on this node: the grant of the lock's mutex that the node holds (its owner is
 * {@code nodeId/sequence}, one per store grant), the local holder, and the node's own FIFO of
 * acquirers. A store grant serves a run of local holders, one at a time: when a holder releases and
 * another local acquirer waits, the lock passes to it without a store transaction, and after the
 * last local release the node keeps the grant for {@link #LINGER_NANOS} in case it is asked again.
 *
 * <p>The run ends, and the grant goes back to the store (to the head of its queue, through the
 * mutex layer's hand-off and hints), as soon as another node is known to wait: its node says so
 * with a demand hint ({@link LockHints}) when it starts waiting, and, since a hint may be lost, this
 * node reads the mutex's queue itself every {@link #CHECK_EVERY} local grants or
 * {@link #CHECK_NANOS}, before granting again. So a waiter of another node is served after at
 * most {@link #CHECK_EVERY} local grants (FIFO between nodes, at node granularity).
 *
 * <p>A local grant is made only while the store grant is certainly this node's: not known lost,
 * and before its {@code exclusiveUntilNanos} (the last committed heartbeat, or the acquire's start,
 * plus the lease), so a node paused past its lease never passes a lost grant on. The k-th grant of a
 * store grant has the store token with k added to its two batch-order bytes: strictly greater than
 * every earlier grant of the lock, and less than the next store grant's (a later commit, so a
 * greater commit version); a run ends when those bytes would overflow. Internal to the cluster manager.
 */
final class NodeLock {
  private static final Logger log = LoggerFactory.getLogger(NodeLock.class);
  /** Local grants between two reads of the mutex's queue: the most a waiter of another node waits for. */
  static final int CHECK_EVERY = 64;
  /** Longest time between two reads of the queue while local grants go on. */
  static final long CHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
  /**
   * How long the node keeps an idle store grant: a caller that releases and acquires again (the
   * common loop) does so well within it, and another node's waiter that sent no hint waits at most this long.
   */
  static final long LINGER_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

  private final Locks locks;
  private final String name;
  private final ArrayDeque<Waiter> waiters = new ArrayDeque<>();
  // Everything below is guarded by this.
  private MutexHandle store;
  private long exclusiveFloor;
  private CompletableFuture<MutexHandle> storeAcquire;
  private CompletableFuture<LockEvent> storeRelease;
  private LockGrant holder;
  private int granted;
  private int sinceCheck;
  private long lastCheck;
  private boolean checking;
  private boolean remoteWaiter;
  private boolean left;
  private boolean retired;
  private ScheduledFuture<?> linger;

  /** A local acquirer; its timeout is set only when it is not granted at once. */
  private static final class Waiter {
    final CompletableFuture<LockGrant> promise;
    ScheduledFuture<?> timeout;
    boolean served;

    Waiter(CompletableFuture<LockGrant> promise) {
      this.promise = promise;
    }

    CompletableFuture<LockGrant> promise() {
      return promise;
    }

    void cancelTimeout() {
      if (timeout != null) {
        timeout.cancel(false);
      }
    }
  }

  NodeLock(Locks locks, String name) {
    this.locks = locks;
    this.name = name;
  }

  String name() {
    return name;
  }

  /**
   * A local acquire; fails with "Timed out waiting to get lock" after {@code timeoutMillis}. Null when this entry
   * was retired (idle and dropped from the node's map): the caller asks the map for the current one.
   */
  CompletableFuture<LockGrant> acquire(long timeoutMillis) {
    CompletableFuture<LockGrant> promise = new CompletableFuture<>();
    List<Runnable> after = new ArrayList<>(2);
    synchronized (this) {
      if (retired) {
        return null;
      }
      if (left) {
        promise.completeExceptionally(new VertxException("the cluster manager left the cluster", true));
        return promise;
      }
      Waiter waiter = new Waiter(promise);
      waiters.add(waiter);
      pump(after);
      if (!waiter.served) {
        try {
          waiter.timeout = locks.scheduler().schedule(() -> timedOut(promise), timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
          waiters.remove(waiter);
          waiter.served = true;
          after.add(() -> promise.completeExceptionally(new VertxException("the cluster manager left the cluster", true)));
          pump(after);
        }
      }
    }
    after.forEach(Runnable::run);
    return promise;
  }

  private void timedOut(CompletableFuture<LockGrant> promise) {
    List<Runnable> after = new ArrayList<>(1);
    synchronized (this) {
      if (!waiters.removeIf(w -> w.promise() == promise)) {
        return; // granted meanwhile
      }
      after.add(() -> promise.completeExceptionally(new VertxException("Timed out waiting to get lock", true)));
      pump(after);
    }
    after.forEach(Runnable::run);
  }

  /** Whether this node holds {@code h} as the lock's store grant now. */
  synchronized boolean holdsStore(MutexHandle h) {
    return store == h;
  }

  /** Another node waits for this lock (its demand hint): the store grant goes back at the next chance. */
  void demanded() {
    List<Runnable> after = new ArrayList<>(1);
    synchronized (this) {
      if (store == null) {
        return; // the hint is about a grant this node no longer holds; the queue read covers the next one
      }
      remoteWaiter = true;
      pump(after);
    }
    after.forEach(Runnable::run);
  }

  /** Releases {@code grant}, the current local holder (or does nothing when it no longer is). */
  CompletableFuture<LockEvent> release(LockGrant grant) {
    List<Runnable> after = new ArrayList<>(2);
    CompletableFuture<LockEvent> result;
    synchronized (this) {
      if (holder != grant) {
        // Lost (the store refuses, as the lost grant's own release always was) or taken by the node's leave.
        return onExecutor(grant.storeHandle()::release);
      }
      holder = null;
      FencingToken token = grant.token();
      boolean passesOn = !waiters.isEmpty() && mayGrantLocally();
      boolean keeps = waiters.isEmpty() && keepsIdle();
      if (passesOn || keeps || checkDue()) {
        result = CompletableFuture.completedFuture(new LockEvent(passesOn ? LockEvent.Type.HANDED_OFF : LockEvent.Type.RELEASED,
            name, passesOn ? localToken(store.token(), granted) : token, Optional.of(store.owner()), Optional.of(token),
            passesOn ? Optional.of(store.owner()) : Optional.empty()));
        pump(after);
      } else {
        result = releaseStore(after);
      }
    }
    after.forEach(Runnable::run);
    return result;
  }

  /** The node leaves: fails the local waiters, gives the store grant back, cancels the store acquire. */
  CompletableFuture<?> leave() {
    List<Runnable> after = new ArrayList<>();
    CompletableFuture<?> result = CompletableFuture.completedFuture(null);
    synchronized (this) {
      left = true;
      failWaiters(new VertxException("the cluster manager left the cluster", true), after);
      if (storeAcquire != null) {
        CompletableFuture<MutexHandle> a = storeAcquire;
        storeAcquire = null;
        after.add(() -> execute(() -> a.cancel(false)));
      }
      if (store != null) {
        CompletableFuture<LockEvent> release = releaseStore(after);
        if (holder != null) {
          holder.releasedByLeave(release);
        }
        result = release;
      } else if (storeRelease != null) {
        result = storeRelease;
      }
      holder = null;
    }
    after.forEach(Runnable::run);
    return result.handle((v, e) -> null);
  }

  /** Decides the next step after any change; completions it makes go to {@code after}, run outside the monitor. */
  private void pump(List<Runnable> after) {
    if (holder != null || checking) {
      return;
    }
    if (store != null) {
      if (!waiters.isEmpty()) {
        cancelLinger();
        if (mayGrantLocally()) {
          grantHead(after);
        } else if (checkDue()) {
          checkQueue();
        } else {
          releaseStore(after);
        }
      } else if (!keepsIdle()) {
        releaseStore(after);
      } else if (linger == null) {
        scheduleLinger();
      }
      return;
    }
    if (storeAcquire != null && waiters.isEmpty()) {
      // Nobody here waits any more: leave the store's queue (the layer releases a grant that raced this).
      CompletableFuture<MutexHandle> a = storeAcquire;
      storeAcquire = null;
      after.add(() -> execute(() -> a.cancel(false)));
    }
    if (storeAcquire == null && storeRelease == null && !waiters.isEmpty() && !left) {
      startStoreAcquire(after);
    }
    if (storeAcquire == null && storeRelease == null && waiters.isEmpty() && !retired) {
      retired = true;
      after.add(() -> locks.retire(this));
    }
  }

  /**
   * Whether the next local grant may be made on the store grant held now. The first is the store's own grant, made
   * to this node just now (it may have waited in the queue longer than a lease, so it is not held to exclusive()).
   */
  private boolean mayGrantLocally() {
    if (store == null || left || store.lost().isDone()) {
      return false;
    }
    return granted == 0 || (!remoteWaiter && sinceCheck < CHECK_EVERY
        && System.nanoTime() - lastCheck < CHECK_NANOS && tokenRoom() && exclusive());
  }

  /** Whether a read of the queue would let local grants go on (nothing else stands in their way). */
  private boolean checkDue() {
    return store != null && !remoteWaiter && !left && tokenRoom() && exclusive()
        && (sinceCheck >= CHECK_EVERY || System.nanoTime() - lastCheck >= CHECK_NANOS);
  }

  private boolean keepsIdle() {
    return store != null && !remoteWaiter && !left && tokenRoom() && exclusive();
  }

  private boolean tokenRoom() {
    return batchOrder(store.token()) + granted <= 0xFFFF;
  }

  /** Whether no other node can have been given the store grant yet, on this process's clock. */
  private boolean exclusive() {
    if (store.lost().isDone()) {
      return false;
    }
    long until = store.exclusiveUntilNanos().orElse(exclusiveFloor);
    if (until - exclusiveFloor < 0) {
      until = exclusiveFloor;
    }
    return until - System.nanoTime() > 0;
  }

  private void grantHead(List<Runnable> after) {
    Waiter w = waiters.poll();
    w.served = true;
    w.cancelTimeout();
    LockGrant grant = new LockGrant(this, store, localToken(store.token(), granted));
    granted++;
    sinceCheck++;
    holder = grant;
    // On the store's executor, as a store grant would be: a caller that acquires again from its completion (on its
    // event loop) must not recurse into this release.
    Runnable complete = () -> {
      if (!w.promise().complete(grant)) {
        grant.releaseAsync(); // cannot happen (timeouts leave the queue under the monitor); stays safe if it does
      }
    };
    after.add(() -> execute(complete));
  }

  private void checkQueue() {
    checking = true;
    MutexHandle checked = store;
    onExecutor(() -> locks.mutexes().state(name)).whenComplete((state, e) -> {
      List<Runnable> after = new ArrayList<>(2);
      synchronized (this) {
        checking = false;
        if (store == checked) {
          if (e != null || !state.queue().isEmpty()) {
            remoteWaiter = true; // an unreadable queue counts as a waiter: the store path is always correct
          }
          sinceCheck = 0;
          lastCheck = System.nanoTime();
        }
        pump(after);
      }
      after.forEach(Runnable::run);
    });
  }

  /**
   * Joins the mutex's queue (or takes it) under a new owner, on the store's executor (never on the caller's event
   * loop); {@code storeAcquire} stands for it, and cancelling that leaves the queue.
   */
  private void startStoreAcquire(List<Runnable> after) {
    String owner = locks.nextOwner();
    long started = System.nanoTime();
    CompletableFuture<MutexHandle> acquire = new CompletableFuture<>();
    storeAcquire = acquire;
    acquire.whenComplete((h, e) -> acquired(acquire, started, h, e));
    after.add(() -> execute(() -> {
      CompletableFuture<MutexHandle> inStore;
      try {
        inStore = locks.mutexes().acquire(name, owner, null);
      } catch (RuntimeException e) {
        acquire.completeExceptionally(e);
        return;
      }
      acquire.whenComplete((h, e) -> {
        if (acquire.isCancelled()) {
          inStore.cancel(false); // the layer leaves the queue, and releases a grant that raced this
        }
      });
      inStore.whenComplete((h, e) -> {
        if (e != null) {
          acquire.completeExceptionally(e);
        } else if (!acquire.complete(h)) {
          h.release();
        }
      });
      // Tell the holder's node that this node waits, so that it ends its local run now.
      locks.mutexes().state(name).thenAccept(s -> s.owner()
          .filter(o -> !o.owner().equals(owner))
          .ifPresent(o -> locks.demand(o.owner(), name)));
    }));
  }

  private void acquired(CompletableFuture<MutexHandle> acquire, long started, MutexHandle h, Throwable e) {
    List<Runnable> after = new ArrayList<>(2);
    synchronized (this) {
      if (storeAcquire != acquire) {
        if (h != null) {
          h.release(); // made before the cancellation reached the layer: nobody here wants it
        }
        return;
      }
      storeAcquire = null;
      if (e != null) {
        Throwable cause = FdbErrors.unwrap(e);
        if (!(cause instanceof CancellationException)) {
          failWaiters(cause, after);
        }
        pump(after);
      } else {
        store = h;
        // The owner record was written after this acquire started: no reaper can end it within a lease of that.
        exclusiveFloor = started + locks.mutexes().options().lease().toNanos();
        granted = 0;
        sinceCheck = 0;
        lastCheck = System.nanoTime();
        remoteWaiter = false;
        h.lost().thenAccept(x -> storeLost(h, x));
        pump(after);
      }
    }
    after.forEach(Runnable::run);
  }

  /** The store grant was found ended by another node: nothing more is granted on it; the waiters wait for a new one. */
  private void storeLost(MutexHandle h, MutexException loss) {
    List<Runnable> after = new ArrayList<>(1);
    synchronized (this) {
      if (store != h) {
        return;
      }
      store = null;
      if (holder != null) {
        LockGrant lost = holder;
        after.add(() -> lost.storeLost(loss)); // from now on its release is the store's refusal
      }
      holder = null;
      cancelLinger();
      pump(after);
    }
    after.forEach(Runnable::run);
  }

  private CompletableFuture<LockEvent> releaseStore(List<Runnable> after) {
    MutexHandle h = store;
    store = null;
    cancelLinger();
    CompletableFuture<LockEvent> release = new CompletableFuture<>();
    storeRelease = release;
    after.add(() -> onExecutor(h::release).whenComplete((ev, e) -> {
      List<Runnable> next = new ArrayList<>(1);
      synchronized (this) {
        storeRelease = null;
        pump(next);
      }
      next.forEach(Runnable::run);
      if (e != null) {
        release.completeExceptionally(e);
      } else {
        release.complete(ev);
      }
    }));
    return release;
  }

  private void scheduleLinger() {
    MutexHandle kept = store;
    try {
      linger = locks.scheduler().schedule(() -> {
        List<Runnable> after = new ArrayList<>(1);
        synchronized (this) {
          if (store == kept && holder == null && waiters.isEmpty()) {
            linger = null;
            releaseStore(after);
          }
        }
        after.forEach(Runnable::run);
      }, LINGER_NANOS, TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      linger = null;
    }
  }

  private void cancelLinger() {
    if (linger != null) {
      linger.cancel(false);
      linger = null;
    }
  }

  private void failWaiters(Throwable cause, List<Runnable> after) {
    Waiter w;
    while ((w = waiters.poll()) != null) {
      w.served = true;
      w.cancelTimeout();
      CompletableFuture<LockGrant> p = w.promise();
      after.add(() -> p.completeExceptionally(cause));
    }
    if (cause != null && !(cause instanceof VertxException)) {
      log.warn("lock '" + name + "': the store acquire failed: " + cause);
    }
  }

  private void execute(Runnable task) {
    try {
      locks.executor().execute(task);
    } catch (RejectedExecutionException e) {
      task.run();
    }
  }

  /** {@code call} on the store's executor: store calls are never made on the caller's thread (an event loop). */
  private <T> CompletableFuture<T> onExecutor(java.util.function.Supplier<CompletableFuture<T>> call) {
    CompletableFuture<T> result = new CompletableFuture<>();
    execute(() -> {
      try {
        call.get().whenComplete((v, e) -> {
          if (e != null) {
            result.completeExceptionally(e);
          } else {
            result.complete(v);
          }
        });
      } catch (RuntimeException e) {
        result.completeExceptionally(e);
      }
    });
    return result;
  }

  /** Unsigned batch order: the last two bytes of a token. */
  private static int batchOrder(FencingToken token) {
    byte[] b = token.bytes();
    return ((b[8] & 0xff) << 8) | (b[9] & 0xff);
  }

  /** The token of the k-th local grant of the store grant {@code store} (the 0th is the store token itself). */
  static FencingToken localToken(FencingToken store, int k) {
    byte[] b = store.bytes();
    int order = (((b[8] & 0xff) << 8) | (b[9] & 0xff)) + k;
    if (order > 0xFFFF) {
      throw new IllegalStateException("no room for local grant " + k + " on token " + store);
    }
    b[8] = (byte) (order >>> 8);
    b[9] = (byte) order;
    return FencingToken.of(b);
  }
}
