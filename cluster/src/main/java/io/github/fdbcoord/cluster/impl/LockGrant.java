package io.github.fdbcoord.cluster.impl;

import com.apple.foundationdb.Transaction;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.fdb.FdbErrors;
import io.github.fdbcoord.mutex.MutexException;
import io.github.fdbcoord.mutex.MutexHandle;
import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One local grant of a SharedData lock: a turn of one caller on the store grant its node holds
 * (see {@link NodeLock}), with its own fencing token, released at most once. Internal: users see it
 * as {@code FdbLock}.
 */
public final class LockGrant {
  private static final Logger log = LoggerFactory.getLogger(LockGrant.class);

  private final NodeLock lock;
  private final MutexHandle store;
  private final FencingToken token;
  private final AtomicBoolean released = new AtomicBoolean();
  private final CompletableFuture<MutexException> lost = new CompletableFuture<>();
  private volatile CompletableFuture<LockEvent> release;

  LockGrant(NodeLock lock, MutexHandle store, FencingToken token) {
    this.lock = lock;
    this.store = store;
    this.token = token;
  }

  /** The name of the lock. */
  public String name() {
    return store.name();
  }

  /** This grant's fencing token: the store grant's, raised by the local grants made on it before. */
  public FencingToken token() {
    return token;
  }

  /** Whether the grant was found ended by someone else (its node was evicted, or its lease ran out). */
  public boolean isLost() {
    return lost.isDone();
  }

  /** Completes when the node's store grant was found ended while this grant held it. */
  public CompletableFuture<MutexException> lost() {
    return lost;
  }

  /** The node's store grant was found ended while this grant held it (told once, by its {@link NodeLock}). */
  void storeLost(MutexException e) {
    if (!released.get() && lost.complete(e)) {
      log.warn("lock '" + store.name() + "' held by " + store.owner() + " (token " + token + ") was lost: "
          + e.getMessage());
    }
  }

  MutexHandle storeHandle() {
    return store;
  }

  /**
   * Fences {@code tr} with the node's store grant: it commits only while this node holds the lock in the store.
   * A local grant already released is refused here while its node still holds that store grant (a local successor
   * may hold the lock), and by the store once the node gave it back.
   */
  public CompletableFuture<Void> fence(Transaction tr) {
    // Once the node gave the store grant back, the store itself refuses (naming the grant now current).
    if (released.get() && lock.holdsStore(store)) {
      return CompletableFuture.failedFuture(new MutexException(MutexException.Kind.NOT_OWNER, name(),
          "lock '" + name() + "' grant " + token + " was released: it fences nothing any more"));
    }
    return store.fence(tr);
  }

  /**
   * Releases once (later calls return the same future). Completes with the store's event when the node gave its
   * store grant back, or with an event of this node alone (not in the mutex's log) when the lock passed to a local
   * acquirer or the node keeps it a moment; fails with the store's refusal when the grant was lost.
   */
  public CompletableFuture<LockEvent> releaseAsync() {
    if (released.compareAndSet(false, true)) {
      release = lock.release(this);
      release.whenComplete((e, err) -> {
        if (err != null) {
          log.warn("release of lock '" + name() + "' by " + store.owner() + " (token " + token + ") refused: "
              + FdbErrors.unwrap(err).getMessage());
        }
      });
    }
    return release;
  }

  /** The node's leave released the lock under this grant: a later release returns {@code storeRelease}. */
  void releasedByLeave(CompletableFuture<LockEvent> storeRelease) {
    if (released.compareAndSet(false, true)) {
      release = storeRelease;
    }
  }
}
