package io.github.fdbcoord.client;

import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.internal.ContextInternal;

import java.time.Duration;

/**
 * A read-write lock grant kept until {@link #release()}, as {@link ClientLock} keeps a mutex: it heartbeats on the
 * context that took it and is released when that context closes (the verticle that took it is undeployed). A write
 * grant can be {@link #downgrade()}d to a read grant; its {@link #token()} and {@link #mode()} then change.
 * {@link #lost()} completes with the token it had when the service refused a heartbeat (the grant was reaped after
 * a pause longer than the lease, or released behind the holder's back) or the lease ran out on this node's clock.
 */
public final class ClientReadWriteLock {
  private final ReadWriteLockClient locks;
  private final LeaseKeeper keeper;
  private final Future<ReadWriteToken> lost;
  /** Replaced by a downgrade, on the context that took the lock. */
  private volatile ReadWriteLockClient.Grant grant;

  ClientReadWriteLock(ReadWriteLockClient locks, ContextInternal context, ReadWriteLockClient.Grant g,
      Duration renewInterval, long acquireSentAt) {
    this.grant = g;
    this.keeper = new LeaseKeeper(context, "read-write lock '" + g.name() + "' of '" + g.owner() + "'",
        () -> grant.token() + " (" + grant.mode() + ")",
        () -> locks.heartbeat(g.name(), g.owner(), grant.token(), grant.mode()),
        () -> locks.release(g.name(), g.owner(), grant.token(), grant.mode()), g.lease(), renewInterval,
        acquireSentAt).start();
    this.lost = keeper.lost().map(v -> grant.token());
    this.locks = locks;
  }

  /** The lock's name. */
  public String name() {
    return grant.name();
  }

  /** The owner the grant is held under. */
  public String owner() {
    return grant.owner();
  }

  /** The mode held now: {@code WRITE} until a {@link #downgrade()}. */
  public ReadWriteLockClient.Mode mode() {
    return grant.mode();
  }

  /** The grant's token now: greater than every earlier grant's of the lock; a downgrade gives a new one. */
  public ReadWriteToken token() {
    return grant.token();
  }

  /** Whether the grant is believed held: neither released nor lost. */
  public boolean isHeld() {
    return keeper.isHeld();
  }

  /** Completes with the grant's last token when it is lost before it is released; stays pending otherwise. */
  public Future<ReadWriteToken> lost() {
    return lost;
  }

  /** Calls {@code handler} with the grant's last token when it is lost; returns this lock. */
  public ClientReadWriteLock lostHandler(Handler<ReadWriteToken> handler) {
    lost.onSuccess(handler);
    return this;
  }

  /**
   * Turns the write grant into a read grant with a new token (heartbeats pause until it answers): the readers at the
   * queue's head come in, and no writer in between. Fails 400 for a read grant, 409 not_held when the grant was lost
   * (and {@link #lost()} completes).
   */
  public Future<ClientReadWriteLock> downgrade() {
    return keeper.change(() -> {
      ReadWriteLockClient.Grant g = grant;
      return locks.downgrade(g.name(), g.owner(), g.token(), g.mode()).map(next -> {
        grant = next;
        return this;
      });
    });
  }

  /** Releases the grant (the queue's head goes in); fails with 409 not_held when it had been lost. */
  public Future<Void> release() {
    return keeper.release();
  }
}
