package io.github.fdbcoord.service.eventbus;

import io.vertx.core.Future;
import io.vertx.core.Vertx;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The names a publisher of this node publishes because watchers asked it to ({@link StatePublisher},
 * {@link MutexEventPublisher}): a name is published while at least one watcher's lease runs (the {@code watch} action
 * renews it), from one layer subscription however many watchers it has; the last watcher to unwatch or let its lease
 * run out ends the subscription. The publisher says what a name subscribes to and what a watch replies.
 */
final class LeasedWatches<S extends LeasedWatches.Subscription> {
  /** The layer subscription the watchers of one name share, opened by the publisher. */
  interface Subscription {
    /** Completes once the subscription is open; failed, the name is forgotten, so that a later watch retries it. */
    CompletableFuture<?> opened();

    /** Ends the subscription (once it is open). */
    void close();
  }

  private final Vertx vertx;
  private final int maxWatched;
  private final Duration lease;
  private final StoreWorkers workers;
  private final String tooMany;
  private final Function<String, S> subscribe;
  /** Watched names: their subscription and the watchers (id to expiry, ms on the wall clock) keeping it. */
  private final Map<String, Watch<S>> watched = new ConcurrentHashMap<>();
  private final long sweepTimer;

  private static final class Watch<S> {
    final S subscription;
    final Map<String, Long> watchers = new ConcurrentHashMap<>();

    Watch(S subscription) {
      this.subscription = subscription;
    }
  }

  /**
   * At most {@code maxWatched} names at once (a watch of one more fails with {@code tooMany} as its message), a watch
   * lasting {@code lease} unless renewed; {@code subscribe} opens a name's subscription.
   */
  LeasedWatches(Vertx vertx, int maxWatched, Duration lease, StoreWorkers workers, String tooMany,
      Function<String, S> subscribe) {
    this.vertx = vertx;
    this.maxWatched = maxWatched;
    this.lease = lease;
    this.workers = workers;
    this.tooMany = tooMany;
    this.subscribe = subscribe;
    // A quarter of the lease: an expired watch holds its slot (and its subscription) at most that much longer.
    this.sweepTimer = vertx.setPeriodic(Math.max(100, lease.toMillis() / 4), id -> sweep());
  }

  /** How long a watch lasts unless renewed. */
  Duration lease() {
    return lease;
  }

  /**
   * Starts or renews {@code watcher}'s watch of {@code name}, subscribing to it if nobody watched it; the reply is
   * what {@code reply} makes of the name's subscription.
   */
  <R> Future<R> watch(String name, String watcher, Function<? super S, ? extends CompletableFuture<R>> reply) {
    Watch<S> existing = watched.get(name);
    if (existing == null && watched.size() >= maxWatched) {
      sweep();
      if (watched.size() >= maxWatched) {
        return Future.failedFuture(FailureCodes.failure(FailureCodes.CONFLICT, "too_many_watched", tooMany));
      }
    }
    long expiry = System.currentTimeMillis() + lease.toMillis();
    return workers.callAndStay(() -> {
      Watch<S> w = watched.get(name);
      if (w == null) {
        w = watched.computeIfAbsent(name, n -> new Watch<>(subscribe.apply(n)));
        forgetIfFailed(name, w); // twice when two watches raced to start it: harmless
      }
      w.watchers.put(watcher, expiry);
      return reply.apply(w.subscription);
    });
  }

  /**
   * Forgets {@code name} when its subscription fails, so that a later watch subscribes again. Outside the map's
   * {@code computeIfAbsent}: a subscription failed at once would remove the name inside its own computation, which
   * the map refuses ("Recursive update"), leaving the failed subscription in place until its watchers' lease ran out.
   */
  private void forgetIfFailed(String name, Watch<S> w) {
    w.subscription.opened().whenComplete((s, e) -> {
      if (e != null) {
        watched.remove(name, w);
      }
    });
  }

  /** Whether {@code watcher} watched {@code name}; the last watcher ends the watch. */
  boolean unwatch(String name, String watcher) {
    Watch<S> w = watched.get(name);
    boolean removed = w != null && w.watchers.remove(watcher) != null;
    if (w != null && w.watchers.isEmpty()) {
      end(name, w);
    }
    return removed;
  }

  /** Ends the watches whose watchers all let their lease run out, giving their slots back. */
  void sweep() {
    long now = System.currentTimeMillis();
    for (Map.Entry<String, Watch<S>> e : watched.entrySet()) {
      Watch<S> w = e.getValue();
      w.watchers.values().removeIf(expiry -> expiry < now);
      if (w.watchers.isEmpty()) {
        end(e.getKey(), w);
      }
    }
  }

  private void end(String name, Watch<S> w) {
    if (w.watchers.isEmpty() && watched.remove(name, w)) {
      w.subscription.close();
    }
  }

  /** Ends every watch (on stop). */
  void close() {
    vertx.cancelTimer(sweepTimer);
    watched.values().forEach(w -> w.subscription.close());
    watched.clear();
  }

  /** How many names are watched. */
  int count() {
    return watched.size();
  }
}
