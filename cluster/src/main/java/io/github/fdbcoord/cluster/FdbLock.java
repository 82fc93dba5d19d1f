package io.github.fdbcoord.cluster;

import com.apple.foundationdb.Transaction;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.cluster.impl.LockGrant;
import io.vertx.core.shareddata.Lock;

import java.util.concurrent.CompletableFuture;

/**
 * A SharedData lock held through the mutex layer: one turn on its node's grant of the mutex of the same
 * name (owned by {@code nodeId/sequence}; the node passes the lock between its own callers without a store
 * transaction while no other node waits, see docs/cluster-manager.md). Releasing twice releases once. When the grant is taken away (this
 * node was evicted, for example after a pause longer than the lease, or the mutex's reaper saw no
 * heartbeat for a lease), {@link #lost()} completes and a warning is logged; from then on
 * {@link #release()} throws an {@link IllegalStateException} naming the lock and the token, so
 * plain Vert.x code that only calls {@code release()} learns of the loss too (a release that races
 * the discovery is refused by the store instead: {@link #releaseAsync()} fails). Guard writes to
 * other systems with {@link #token()}: a later grant always has a greater token.
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
    return grant.name();
  }

  /** The fencing token of this grant: strictly greater for every later grant of the same lock. */
  public FencingToken token() {
    return grant.token();
  }

  /**
   * Fences the caller's own transaction with this grant ({@code MutexHandle.fence}): {@code tr}, on the database this
   * cluster manager uses (the one handed in through {@link FdbClusterManagerOptions}, or one opened on the same
   * cluster file), commits only while this grant is the lock's current one, so a node paused past its lease and
   * replaced cannot commit writes it makes under the lock. Fails with the store's refusal
   * ({@code NotOwnerException}/{@code MutexNotHeldException}) when the grant has ended, and {@link #lost()} completes;
   * with a {@code MutexException} of kind NOT_OWNER when this grant was released while its node still holds the
   * mutex (another caller of the node may hold the lock). Release only after the fenced transactions completed.
   */
  public CompletableFuture<Void> fence(Transaction tr) {
    return grant.fence(tr);
  }

  /** Completes when this grant was found ended by someone else (evicted after its lease ran out). */
  public CompletableFuture<?> lost() {
    return grant.lost();
  }

  /**
   * Releases without waiting (Vert.x's {@code Lock}); {@link #releaseAsync()} tells the outcome.
   *
   * @throws IllegalStateException when the grant is known to be lost: the caller's critical section
   *     may have overlapped another holder's, and must not pass silently
   */
  @Override
  public void release() {
    if (grant.isLost()) {
      grant.releaseAsync();
      throw new IllegalStateException("lock '" + name() + "' (token " + token() + ") was lost before this release:"
          + " another node may have held it meanwhile");
    }
    releaseAsync();
  }

  /**
   * Releases once (later calls return the same future); completes with the release's lock event (the store's, or,
   * when the lock passed to another caller of this node or the node keeps it a moment, an event of the node alone,
   * not in the mutex's log), or fails with the store's refusal ({@code NotOwnerException}/{@code MutexNotHeldException})
   * when the grant was lost meanwhile.
   */
  public CompletableFuture<LockEvent> releaseAsync() {
    return grant.releaseAsync();
  }
}
