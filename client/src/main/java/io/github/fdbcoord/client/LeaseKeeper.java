package io.github.fdbcoord.client;

import io.github.fdbcoord.client.wire.WireProtocol;
import io.vertx.core.Closeable;
import io.vertx.core.Completable;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;
import io.vertx.core.json.JsonObject;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The life of one grant held through the client: renewing its lease on the context that took it, noticing its loss,
 * releasing it, and releasing it when that context closes. One owner of this logic for every held handle
 * ({@link ClientLock}, {@link ClientLeadership}, {@link ClientPermit}, {@link ClientReadWriteLock}): they differ only
 * in the requests that renew and release, which they pass in.
 *
 * <p>A grant is lost at the first renewal the service refuses with 409 (not_held / not_owner: reaped after a pause
 * longer than the lease, released or evicted behind the holder's back), or as soon as the lease ran out on this
 * node's clock without a confirmed renewal (the service unreachable), whichever comes first.
 */
final class LeaseKeeper {
  private static final Logger LOG = LoggerFactory.getLogger(LeaseKeeper.class);
  /** The lease assumed when a reply does not report the service's own (the service's default). */
  static final Duration DEFAULT_LEASE = Duration.ofSeconds(10);

  private final ContextInternal context;
  private final String what;
  private final Supplier<Object> token;
  private final Supplier<Future<?>> heartbeat;
  private final Supplier<Future<?>> release;
  private final long leaseNanos;
  private final long renewMs;
  private final Promise<Void> lost;
  private final Closeable closeHook = this::closeWithContext;
  /** The fields below are only touched on {@link #context}. */
  private long timer = -1;
  private long confirmedAt;
  private boolean released;
  /** Bumped by each {@link #change}: a renewal answered about an earlier form of the grant is not news. */
  private int generation;
  private Future<?> changing = Future.succeededFuture();

  /**
   * @param what the grant as log lines and failures name it, e.g. "lock 'jobs' of 'worker-1'"
   * @param token the grant's current token, for messages
   * @param heartbeat renews the grant as it is now
   * @param release releases the grant as it is now
   */
  LeaseKeeper(ContextInternal context, String what, Supplier<Object> token, Supplier<Future<?>> heartbeat,
      Supplier<Future<?>> release, Duration lease, Duration renewInterval, long acquireSentAt) {
    this.context = context;
    this.what = what;
    this.token = token;
    this.heartbeat = heartbeat;
    this.release = release;
    this.leaseNanos = lease.toNanos();
    this.renewMs = renewInterval != null ? renewInterval.toMillis() : Math.max(1, lease.toMillis() / 3);
    this.confirmedAt = acquireSentAt;
    this.lost = context.promise();
  }

  /** The context a handle taken now belongs to: the caller's, whose closing releases it. */
  static ContextInternal callerContext(Vertx vertx) {
    return (ContextInternal) vertx.getOrCreateContext();
  }

  /** The lease a holder's reply reports, or the service's default from one that does not. */
  static Duration lease(JsonObject reply) {
    Long ms = reply.getLong("leaseMs");
    return ms == null ? DEFAULT_LEASE : Duration.ofMillis(ms);
  }

  /** Starts renewing on the context and ties the grant to the context's lifetime. */
  LeaseKeeper start() {
    context.addCloseHook(closeHook);
    context.runOnContext(v -> schedule(renewMs));
    return this;
  }

  /** Whether the grant is believed held: neither released nor lost. */
  boolean isHeld() {
    return !released && !lost.future().isComplete();
  }

  /** Completes when the grant is lost before it is released; stays pending after a normal release. */
  Future<Void> lost() {
    return lost.future();
  }

  /**
   * Releases the grant (after a {@link #change} under way) and stops renewing. Fails with 409 not_held when it had
   * been lost: work done under it may have overlapped with another holder's, which the caller must hear about.
   */
  Future<Void> release() {
    Promise<Void> done = context.promise();
    context.runOnContext(v -> changing.transform(x -> releaseOnContext()).onComplete(done));
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
    return release.get().<Void>mapEmpty().recover(e -> {
      if (isConflict(e)) {
        lost.tryComplete();
        return Future.failedFuture(lostFailure("was lost before release (" + e.getMessage() + ")"));
      }
      return Future.failedFuture(e);
    });
  }

  /**
   * Runs {@code op}, which turns the grant into another (a downgrade: a new token), with renewals held back until it
   * answers: a renewal of the old form answered after the change would read as a loss. A 409 from {@code op} means
   * the grant was gone already, and it is reported lost.
   */
  <T> Future<T> change(Supplier<Future<T>> op) {
    Promise<T> done = context.promise();
    context.runOnContext(v -> {
      if (!isHeld()) {
        done.fail(lostFailure(released ? "was released" : "was lost"));
        return;
      }
      generation++;
      long sentAt = System.nanoTime();
      Future<T> result = changing.transform(x -> op.get()).andThen(ar -> {
        if (ar.succeeded()) {
          confirmedAt = Math.max(confirmedAt, sentAt);
        } else if (isConflict(ar.cause())) {
          markLost("the service no longer has it (" + ar.cause().getMessage() + ")", false);
        }
      });
      changing = result.otherwiseEmpty();
      result.onComplete(done);
    });
    return done.future();
  }

  ReplyException lostFailure(String why) {
    return new ReplyException(ReplyFailure.RECIPIENT_FAILURE, WireProtocol.CONFLICT,
        "not_held: " + what + " with token " + token.get() + " " + why);
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
      // A pause longer than the lease: the reaper may already have handed the grant on.
      markLost("its lease ran out before it could be renewed", true);
      return;
    }
    // The next renewal goes out on time even when this one has no answer yet: one slow or lost request (a store
    // retry, a message dropped with a node) must not cost the lease while later ones would have been answered. It
    // comes at the latest when the lease runs out on this clock, which then finds the grant lost.
    long leftMs = TimeUnit.NANOSECONDS.toMillis(leaseNanos - (sentAt - confirmedAt));
    schedule(Math.min(renewMs, Math.max(1, leftMs)));
    if (!changing.isComplete()) {
      return;
    }
    int sentGeneration = generation;
    heartbeat.get().onComplete(ar -> {
      if (!isHeld() || sentGeneration != generation) {
        return;
      }
      if (ar.succeeded()) {
        confirmedAt = Math.max(confirmedAt, sentAt);
      } else if (isConflict(ar.cause())) {
        markLost("the service no longer has it (" + ar.cause().getMessage() + ")", false);
      } else {
        // The service is unreachable for now: the renewals go on until the lease runs out on this clock.
        LOG.debug("renewal of " + what + " failed, " + TimeUnit.NANOSECONDS.toMillis(
            leaseNanos - (System.nanoTime() - confirmedAt)) + " ms of lease left", ar.cause());
      }
    });
  }

  private void markLost(String why, boolean releaseIfStillHeld) {
    stopRenewing();
    LOG.warn(what + " (token " + token.get() + ") is lost: " + why);
    if (releaseIfStillHeld) {
      // Nobody uses the grant any more: if the service still has it, hand it on now rather than after the lease.
      release.get().onFailure(e -> LOG.debug("release of lost " + what + " failed", e));
    }
    lost.tryComplete();
  }

  private void stopRenewing() {
    if (timer >= 0) {
      context.owner().cancelTimer(timer);
      timer = -1;
    }
    context.removeCloseHook(closeHook);
  }

  /** The context that took the grant is closing (its verticle undeployed): release before it goes. */
  private void closeWithContext(Completable<Void> completion) {
    if (!isHeld()) {
      completion.succeed();
      return;
    }
    released = true;
    stopRenewing();
    release.get().onComplete(ar -> {
      if (ar.failed()) {
        LOG.debug("release on undeploy of " + what + " failed", ar.cause());
      }
      completion.succeed();
    });
  }

  static boolean isConflict(Throwable e) {
    return e instanceof ReplyException && ((ReplyException) e).failureCode() == WireProtocol.CONFLICT;
  }
}
