package io.github.fdbcoord.service.eventbus;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.lease.StateSubscription;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;

/**
 * The state changes of semaphores or read-write locks this node publishes on {@code <layer address>.events.<name>}
 * as {@code {"name", "version", "state"}}: a name is published while at least one watcher's lease runs (watchers
 * renew with the {@code watch} action), from one layer observer however many watchers it has, as the mutex's
 * {@link MutexEventPublisher} does for lock events. A {@code watch} reply carries the newest state, so a watcher
 * starts from it and takes only newer versions from the address (several nodes may publish the same name).
 */
public final class StatePublisher<S> {
  /** The action that starts or renews a watch: {@code {"name", "watcher"}}. */
  public static final String WATCH = "watch";
  /** The action that ends a watcher's watch: {@code {"name", "watcher"}}. */
  public static final String UNWATCH = "unwatch";

  private final Vertx vertx;
  private final String layerAddress;
  private final String what;
  private final BiFunction<String, BiConsumer<FencingToken, S>, CompletableFuture<StateSubscription>> observe;
  private final BiFunction<String, S, JsonObject> toJson;
  private final int maxWatched;
  private final Duration watchLease;
  private final StoreWorkers workers;
  private final Map<String, Watch> watched = new ConcurrentHashMap<>();
  private final long sweepTimer;

  private static final class Watch {
    volatile CompletableFuture<StateSubscription> subscription;
    final CompletableFuture<JsonObject> first = new CompletableFuture<>();
    final Map<String, Long> watchers = new ConcurrentHashMap<>();
    /** The newest state told, as published. */
    volatile JsonObject latest;
  }

  /**
   * Publishes what {@code observe} tells ({@code observeVersions} of the layer) under {@code layerAddress}, as
   * {@code toJson} renders a state; at most {@code maxWatched} names at once, a watch lasting {@code watchLease}
   * unless renewed. {@code what} names the primitive in failures ("semaphore").
   */
  StatePublisher(Vertx vertx, String layerAddress, String what,
      BiFunction<String, BiConsumer<FencingToken, S>, CompletableFuture<StateSubscription>> observe,
      BiFunction<String, S, JsonObject> toJson, int maxWatched, Duration watchLease, StoreWorkers workers) {
    this.vertx = vertx;
    this.layerAddress = layerAddress;
    this.what = what;
    this.observe = observe;
    this.toJson = toJson;
    this.maxWatched = maxWatched;
    this.watchLease = watchLease;
    this.workers = workers;
    this.sweepTimer = vertx.setPeriodic(Math.max(100, watchLease.toMillis() / 4), id -> sweep());
  }

  /** Where the changes of {@code name} are published, for the layer served at {@code layerAddress}. */
  public static String eventsAddress(String layerAddress, String name) {
    return layerAddress + ".events." + name;
  }

  /**
   * The {@code watch} action: starts or renews {@code watcher}'s watch of {@code name}; the reply is the newest
   * state ({@code {"name", "version", "state"}}) with the lease and the address.
   */
  Future<JsonObject> watch(String name, String watcher) {
    Watch existing = watched.get(name);
    if (existing == null && watched.size() >= maxWatched) {
      sweep();
      if (watched.size() >= maxWatched) {
        return Future.failedFuture(FailureCodes.failure(FailureCodes.CONFLICT, "too_many_watched",
            "this node already publishes the state of " + maxWatched + " " + what + "s (mutex.maxWatched)"));
      }
    }
    long expiry = System.currentTimeMillis() + watchLease.toMillis();
    String address = eventsAddress(layerAddress, name);
    return workers.callAndStay(() -> {
      Watch w = watched.computeIfAbsent(name, n -> start(n, address));
      w.watchers.put(watcher, expiry);
      return w.first.thenApply(first -> w.latest);
    }).map(latest -> latest.copy().put("leaseMs", watchLease.toMillis()).put("address", address));
  }

  private Watch start(String name, String address) {
    Watch fresh = new Watch();
    fresh.subscription = observe.apply(name, (version, state) -> {
      JsonObject event = new JsonObject().put("name", name).put("version", version.toString())
          .put("state", toJson.apply(name, state));
      fresh.latest = event;
      fresh.first.complete(event);
      vertx.eventBus().publish(address, event);
    });
    // A failed subscription is forgotten, so that a later watch retries it.
    fresh.subscription.whenComplete((sub, e) -> {
      if (e != null) {
        fresh.first.completeExceptionally(e);
        watched.remove(name, fresh);
      }
    });
    return fresh;
  }

  /** The {@code unwatch} action: whether {@code watcher} watched {@code name}; the last watcher ends the watch. */
  boolean unwatch(String name, String watcher) {
    Watch w = watched.get(name);
    boolean removed = w != null && w.watchers.remove(watcher) != null;
    if (w != null && w.watchers.isEmpty()) {
      end(name, w);
    }
    return removed;
  }

  /** Ends the watches whose watchers all let their lease run out. */
  void sweep() {
    long now = System.currentTimeMillis();
    for (Map.Entry<String, Watch> e : watched.entrySet()) {
      Watch w = e.getValue();
      w.watchers.values().removeIf(expiry -> expiry < now);
      if (w.watchers.isEmpty()) {
        end(e.getKey(), w);
      }
    }
  }

  private void end(String name, Watch w) {
    if (w.watchers.isEmpty() && watched.remove(name, w)) {
      w.subscription.thenAccept(StateSubscription::close);
    }
  }

  /** Ends every watch (on stop). */
  void close() {
    vertx.cancelTimer(sweepTimer);
    watched.values().forEach(w -> w.subscription.thenAccept(StateSubscription::close));
    watched.clear();
  }

  /** How many names this node publishes the state of. */
  int count() {
    return watched.size();
  }
}
