package io.github.fdbcoord.client;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.client.wire.WireProtocol;
import io.vertx.core.Closeable;
import io.vertx.core.Completable;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;

import java.util.concurrent.TimeUnit;

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
  private static final Logger LOG = LoggerFactory.getLogger(ClientLock.class);

  private final CoordinationClient client;
  private final ContextInternal context;
  private final String name;
  private final String owner;
  private final FencingToken token;
  private final long leaseNanos;
  private final long renewMs;
  private final Promise<FencingToken> lost;
  private final Closeable closeHook = this::closeWithContext;
  /** Only touched on {@link #context}. */
  private long timer = -1;
  private long confirmedAt;
  private boolean released;

  ClientLock(CoordinationClient client, ContextInternal context, String name, String owner, FencingToken token,
      long leaseMs, long renewMs, long acquireSentAt) {
    this.client = client;
    this.context = context;
    this.name = name;
    this.owner = owner;
    this.token = token;
    this.leaseNanos = TimeUnit.MILLISECONDS.toNanos(leaseMs);
    this.renewMs = renewMs;
    this.confirmedAt = acquireSentAt;
    this.lost = context.promise();
  }

  /** Starts renewing on the lock's context and ties the lock to that context's lifetime. */
  ClientLock start() {
    context.addCloseHook(closeHook);
    context.runOnContext(v -> schedule(renewMs));
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
    return !released && !lost.future().isComplete();
  }

  /**
   * Completes with {@link #token()} when the lock is lost before it is released (see the class
   * comment); stays pending when the lock is released normally.
   */
  public Future<FencingToken> lost() {
    return lost.future();
  }

  /** Calls {@code handler} with {@link #token()} when the lock is lost; returns this lock. */
  public ClientLock lostHandler(Handler<FencingToken> handler) {
    lost.future().onSuccess(handler);
    return this;
  }

  /**
   * Releases the lock and stops renewing it. Fails with a {@link ReplyException} of code 409 when
   * the lock had been lost (and {@link #lost()} completes, if it had not yet): work that ran under
   * it may have overlapped with another holder's, which the caller must hear about.
   */
  public Future<Void> release() {
    Promise<Void> done = context.promise();
    context.runOnContext(v -> releaseOnContext().onComplete(done));
    return done.future();
  }

  private Future<Void> releaseOnContext() {
    if (lost.future().isComplete()) {
      return Future.failedFuture(lostFailure("was lost before release"));
    }
    if (released) {
      return Future.succeededFuture();
    }
    released = true;
    stopRenewing();
    return client.release(name, owner, token).<Void>mapEmpty().recover(e -> {
      if (isConflict(e)) {
        lost.tryComplete(token);
        return Future.failedFuture(lostFailure("was lost before release (" + e.getMessage() + ")"));
      }
      return Future.failedFuture(e);
    });
  }

  private ReplyException lostFailure(String what) {
    return new ReplyException(ReplyFailure.RECIPIENT_FAILURE, WireProtocol.CONFLICT,
        "not_held: lock '" + name + "' of '" + owner + "' with token " + token + " " + what);
  }

  private void schedule(long delayMs) {
    if (isHeld()) {
      timer = context.setTimer(Math.max(1, delayMs), id -> renew());
    }
  }

  private void renew() {
    timer = -1;
    if (!isHeld()) {
      return;
    }
    long sentAt = System.nanoTime();
    if (sentAt - confirmedAt >= leaseNanos) {
      // A pause longer than the lease: the reaper may already have handed the mutex on.
      markLost("its lease ran out before it could be renewed", true);
      return;
    }
    client.heartbeat(name, owner, token).onComplete(ar -> {
      if (!isHeld()) {
        return;
      }
      if (ar.succeeded()) {
        confirmedAt = sentAt;
        schedule(renewMs);
      } else if (isConflict(ar.cause())) {
        markLost("the service no longer has it (" + ar.cause().getMessage() + ")", false);
      } else {
        // The service is unreachable for now: retry until the lease runs out on this clock.
        long leftMs = TimeUnit.NANOSECONDS.toMillis(leaseNanos - (System.nanoTime() - confirmedAt));
        LOG.debug("renewal of lock '" + name + "' failed, " + leftMs + " ms of lease left", ar.cause());
        schedule(Math.min(renewMs, Math.max(1, leftMs)));
      }
    });
  }

  private void markLost(String why, boolean releaseIfStillHeld) {
    stopRenewing();
    LOG.warn("lock '" + name + "' of '" + owner + "' (token " + token + ") is lost: " + why);
    if (releaseIfStillHeld) {
      // Nobody uses the grant any more: if the service still has it, hand it on now rather than after the lease.
      client.release(name, owner, token).onFailure(e -> LOG.debug("release of lost lock '" + name + "' failed", e));
    }
    lost.tryComplete(token);
  }

  private void stopRenewing() {
    if (timer >= 0) {
      context.owner().cancelTimer(timer);
      timer = -1;
    }
    context.removeCloseHook(closeHook);
  }

  /** The context that took the lock is closing (its verticle undeployed): release before it goes. */
  private void closeWithContext(Completable<Void> completion) {
    if (!isHeld()) {
      completion.succeed();
      return;
    }
    released = true;
    stopRenewing();
    client.release(name, owner, token).onComplete(ar -> {
      if (ar.failed()) {
        LOG.debug("release on undeploy of lock '" + name + "' failed", ar.cause());
      }
      completion.succeed();
    });
  }

  private static boolean isConflict(Throwable e) {
    return e instanceof ReplyException && ((ReplyException) e).failureCode() == WireProtocol.CONFLICT;
  }
}
