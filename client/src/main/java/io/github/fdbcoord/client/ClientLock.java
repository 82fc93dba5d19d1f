package io.github.fdbcoord.client;

import io.github.fdbcoord.api.FencingToken;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.internal.ContextInternal;

import java.time.Duration;

/**
 * A held distributed mutex that stays held until {@link #release()}d, as a lock of Vert.x's
 * {@code SharedData}: it renews its lease (the service's {@code heartbeat}) on the context that
 * took it, and is released when that context closes (the verticle that took it is undeployed).
 *
 * <p>A lock can still be lost: the holder's node was paused or cut off longer than the lease and
 * the service's reaper handed the mutex on, or an operator released it. {@link #lost()} then
 * completes with this lock's {@link #token() fencing token}, at the first renewal that finds it
 * gone (at most a renewal interval later) or as soon as the lease ran out on this node's clock
 * without a confirmed renewal, whichever comes first. Work done under the lock should carry the
 * token to the resources it writes, which refuse tokens older than the newest they saw: that is
 * what makes a lost lock harmless, since no notification can arrive before a pause ends.
 *
 * <pre>
 * client.lock("jobs", new LockOptions()).compose(lock -&gt; {
 *   lock.lost().onSuccess(token -&gt; log.warn("lost jobs lock " + token));
 *   return runJob(lock.token())                 // writes carry the token: stale ones are refused
 *       .eventually(lock::release);
 * });
 * </pre>
 */
public final class ClientLock {
  private final String name;
  private final String owner;
  private final FencingToken token;
  private final LeaseKeeper keeper;
  private final Future<FencingToken> lost;

  ClientLock(CoordinationClient client, ContextInternal context, String name, String owner, FencingToken token,
      Duration lease, Duration renewInterval, long acquireSentAt) {
    this.name = name;
    this.owner = owner;
    this.token = token;
    this.keeper = new LeaseKeeper(context, "lock '" + name + "' of '" + owner + "'", () -> token,
        () -> client.heartbeat(name, owner, token), () -> client.release(name, owner, token),
        lease, renewInterval, acquireSentAt);
    this.lost = keeper.lost().map(token);
  }

  /** Starts renewing on the lock's context and ties the lock to that context's lifetime. */
  ClientLock start() {
    keeper.start();
    return this;
  }

  /** The mutex's name. */
  public String name() {
    return name;
  }

  /** The owner name the mutex is held under. */
  public String owner() {
    return owner;
  }

  /**
   * The fencing token of this grant: larger than every earlier grant's of the same mutex. Pass it
   * with every write made under the lock, so that a resource can refuse the writes of a holder
   * that lost the lock without knowing it yet.
   */
  public FencingToken token() {
    return token;
  }

  /** Whether the lock is believed held: neither released nor lost. */
  public boolean isHeld() {
    return keeper.isHeld();
  }

  /**
   * Completes with {@link #token()} when the lock is lost before it is released (see the class
   * comment); stays pending when the lock is released normally.
   */
  public Future<FencingToken> lost() {
    return lost;
  }

  /** Calls {@code handler} with {@link #token()} when the lock is lost; returns this lock. */
  public ClientLock lostHandler(Handler<FencingToken> handler) {
    lost.onSuccess(handler);
    return this;
  }

  /**
   * Releases the lock and stops renewing it. Fails with a {@link io.vertx.core.eventbus.ReplyException} of code 409
   * when the lock had been lost (and {@link #lost()} completes, if it had not yet): work that ran under
   * it may have overlapped with another holder's, which the caller must hear about.
   */
  public Future<Void> release() {
    return keeper.release();
  }
}
