package io.github.fdbcoord.cluster.impl;

import io.github.fdbcoord.fdb.FdbErrors;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.mutex.MutexHandle;
import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One grant of a SharedData lock: the mutex handle, released at most once, and forgotten by the
 * node's {@link Locks} once released or lost. Internal: users see it as {@code FdbLock}.
 */
public final class LockGrant {
  private static final Logger log = LoggerFactory.getLogger(LockGrant.class);

  private final Locks locks;
  private final MutexHandle handle;
  private final AtomicBoolean released = new AtomicBoolean();
  private volatile CompletableFuture<LockEvent> release;

  LockGrant(Locks locks, MutexHandle handle) {
    this.locks = locks;
    this.handle = handle;
    handle.lost().thenAccept(e -> {
      locks.forget(this);
      log.warn("lock '" + handle.name() + "' held by " + handle.owner() + " (token " + handle.token()
          + ") was lost: " + e.getMessage());
    });
  }

  /** Whether the grant was found ended by someone else (its node was evicted, or its lease ran out). */
  public boolean isLost() {
    return handle.lost().isDone();
  }

  /** The mutex handle of this grant. */
  public MutexHandle handle() {
    return handle;
  }

  /** Releases once (later calls return the same future); fails with the store's refusal when the grant was lost. */
  public CompletableFuture<LockEvent> releaseAsync() {
    if (released.compareAndSet(false, true)) {
      locks.forget(this);
      release = CompletableFuture.supplyAsync(handle::release, locks.executor()).thenCompose(f -> f);
      locks.releasing(handle.name(), release);
      release.whenComplete((e, err) -> {
        if (err != null) {
          log.warn("release of lock '" + handle.name() + "' by " + handle.owner() + " refused: "
              + FdbErrors.unwrap(err).getMessage());
        }
      });
    }
    return release;
  }
}
