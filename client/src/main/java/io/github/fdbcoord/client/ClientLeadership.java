package io.github.fdbcoord.client;

import io.github.fdbcoord.api.FencingToken;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.internal.ContextInternal;

import java.time.Duration;

/**
 * A leadership kept until {@link #resign()}, as {@link ClientLock} keeps a mutex: it heartbeats on the context that
 * won it and resigns when that context closes (the verticle that campaigned is undeployed).
 *
 * <p>A leadership can still be lost: this node was paused or cut off longer than the lease and the next candidate
 * leads, or it was resigned behind this leader's back. {@link #lost()} then completes with its {@link #epoch()},
 * at the first heartbeat the service refuses or as soon as the lease ran out on this node's clock. Work done as
 * leader carries the epoch to what it writes, which refuses epochs older than the newest it saw.
 */
public final class ClientLeadership {
  private final ElectionClient.Leadership leadership;
  private final LeaseKeeper keeper;
  private final Future<FencingToken> lost;

  ClientLeadership(ElectionClient elections, ContextInternal context, ElectionClient.Leadership l,
      Duration renewInterval, long campaignSentAt) {
    this.leadership = l;
    this.keeper = new LeaseKeeper(context, "leadership of '" + l.candidate() + "' in election '" + l.election() + "'",
        l::epoch, () -> elections.heartbeat(l.election(), l.candidate(), l.epoch()),
        () -> elections.resign(l.election(), l.candidate(), l.epoch()), l.lease(), renewInterval, campaignSentAt)
        .start();
    this.lost = keeper.lost().map(l.epoch());
  }

  /** The election. */
  public String election() {
    return leadership.election();
  }

  /** The candidate name this node leads under. */
  public String candidate() {
    return leadership.candidate();
  }

  /** The leadership's epoch: greater than every earlier leadership's of the election. */
  public FencingToken epoch() {
    return leadership.epoch();
  }

  /** Whether this node is believed to lead: neither resigned nor lost. */
  public boolean isLeading() {
    return keeper.isHeld();
  }

  /** Completes with {@link #epoch()} when the leadership is lost before it is resigned; stays pending otherwise. */
  public Future<FencingToken> lost() {
    return lost;
  }

  /** Calls {@code handler} with {@link #epoch()} when the leadership is lost; returns this leadership. */
  public ClientLeadership lostHandler(Handler<FencingToken> handler) {
    lost.onSuccess(handler);
    return this;
  }

  /**
   * Resigns (the next candidate leads) and stops heartbeating. Fails with 409 not_held when the leadership had been
   * lost: work done as leader may have overlapped with the next leader's.
   */
  public Future<Void> resign() {
    return keeper.release();
  }
}
