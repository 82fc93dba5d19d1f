package io.github.fdbcoord.client;

import io.github.fdbcoord.api.FencingToken;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.internal.ContextInternal;

import java.time.Duration;

/**
 * A permit of a semaphore kept until {@link #release()}, as {@link ClientLock} keeps a mutex: it heartbeats on the
 * context that took it and is released when that context closes (the verticle that took it is undeployed).
 * {@link #lost()} completes with its {@link #token()} when the service refuses a heartbeat (the permit was reaped
 * after a pause longer than the lease, or released behind the holder's back) or the lease ran out on this node's
 * clock.
 */
public final class ClientPermit {
  private final SemaphoreClient.Permit permit;
  private final LeaseKeeper keeper;
  private final Future<FencingToken> lost;

  ClientPermit(SemaphoreClient semaphores, ContextInternal context, SemaphoreClient.Permit p, Duration renewInterval,
      long acquireSentAt) {
    this.permit = p;
    this.keeper = new LeaseKeeper(context, "permit of semaphore '" + p.name() + "' held by '" + p.owner() + "'",
        p::token, () -> semaphores.heartbeat(p.name(), p.owner(), p.token()),
        () -> semaphores.release(p.name(), p.owner(), p.token()), p.lease(), renewInterval, acquireSentAt).start();
    this.lost = keeper.lost().map(p.token());
  }

  /** The semaphore's name. */
  public String name() {
    return permit.name();
  }

  /** The owner the permit is held under. */
  public String owner() {
    return permit.owner();
  }

  /** The grant's fencing token: greater than every earlier grant's of the semaphore. */
  public FencingToken token() {
    return permit.token();
  }

  /** Whether the permit is believed held: neither released nor lost. */
  public boolean isHeld() {
    return keeper.isHeld();
  }

  /** Completes with {@link #token()} when the permit is lost before it is released; stays pending otherwise. */
  public Future<FencingToken> lost() {
    return lost;
  }

  /** Calls {@code handler} with {@link #token()} when the permit is lost; returns this permit. */
  public ClientPermit lostHandler(Handler<FencingToken> handler) {
    lost.onSuccess(handler);
    return this;
  }

  /** Releases the permit (the first waiter gets it); fails with 409 not_held when it had been lost. */
  public Future<Void> release() {
    return keeper.release();
  }
}
