package io.github.fdbcoord.cluster;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.cluster.impl.LockGrant;
import io.vertx.core.shareddata.Lock;

import java.util.concurrent.CompletableFuture;

/**
 * A SharedData lock held through the mutex layer: one grant of the mutex of the same name, owned
 * by {@code nodeId/sequence}. Releasing twice releases once. When the mutex's reaper evicts the
 * grant (this node paused longer than the lease), {@link #lost()} completes and a warning is
 * logged; a later {@link #release()} is then refused by the store and changes nothing.
 *
 * <p>The locks of {@code vertx.sharedData()} on {@link FdbClusterManager} are of this type: cast to
 * it for the fencing token and the loss of the grant.
 */
public final class FdbLock implements Lock {
  private final LockGrant grant;

  FdbLock(LockGrant grant) {
    this.grant = grant;
  }

  /** The name of the lock (and of its mutex). */
  public String name() {
    return grant.handle().name();
  }

  /** The fencing token of this grant: strictly greater for every later grant of the same lock. */
  public FencingToken token() {
    return grant.handle().token();
  }

  /** Completes when this grant was found ended by someone else (evicted after its lease ran out). */
  public CompletableFuture<?> lost() {
    return grant.handle().lost();
  }

  /** Releases without waiting (Vert.x's {@code Lock}); {@link #releaseAsync()} tells the outcome. */
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
    return grant.releaseAsync();
  }
}
