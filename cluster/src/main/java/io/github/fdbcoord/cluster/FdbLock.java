package io.github.fdbcoord.cluster;

import io.github.fdbcoord.fdb.FdbErrors;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.mutex.MutexHandle;
import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;
import io.vertx.core.shareddata.Lock;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A SharedData lock held through the mutex layer: one grant of the mutex of the same name, owned
 * by {@code nodeId/sequence}. Releasing twice releases once. When the mutex's reaper evicts the
 * grant (this node paused longer than the lease), {@link #lost()} completes and a warning is
 * logged; a later {@link #release()} is then refused by the store and changes nothing.
 */
public final class FdbLock implements Lock {
  private static final Logger log = LoggerFactory.getLogger(FdbLock.class);

  private final FdbClusterManager manager;
  private final MutexHandle handle;
  private final AtomicBoolean released = new AtomicBoolean();
  private volatile CompletableFuture<LockEvent> release;

  FdbLock(FdbClusterManager manager, MutexHandle handle) {
    this.manager = manager;
    this.handle = handle;
    handle.lost().thenAccept(e -> {
      manager.forget(this);
      log.warn("lock '" + handle.name() + "' held by " + handle.owner() + " (token " + handle.token()
          + ") was lost: " + e.getMessage());
    });
  }

  /** The name of the lock (and of its mutex). */
  public String name() {
    return handle.name();
  }

  /** The fencing token of this grant: strictly greater for every later grant of the same lock. */
  public FencingToken token() {
    return handle.token();
  }

  /** Completes when this grant was found ended by someone else (evicted after its lease ran out). */
  public CompletableFuture<?> lost() {
    return handle.lost();
  }

  @Override
  public void release() {
    releaseAsync();
  }

  /**
   * Releases once (later calls return the same future); completes with the release's lock event,
   * or fails with the store's refusal ({@code NotOwnerException}/{@code MutexNotHeldException}) when
   * the grant was lost meanwhile.
   */
  public CompletableFuture<LockEvent> releaseAsync() {
    if (released.compareAndSet(false, true)) {
      manager.forget(this);
      release = CompletableFuture.supplyAsync(handle::release, manager.executor()).thenCompose(f -> f);
      manager.releasing(handle.name(), release);
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
