package io.github.fdbcoord.service.eventbus;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.client.wire.MutexWire;
import io.github.fdbcoord.client.wire.WireProtocol;
import io.github.fdbcoord.mutex.MutexService;
import io.github.fdbcoord.mutex.MutexSubscription;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The lock events this node publishes on {@code <prefix>.mutex.events.<name>}: a mutex is
 * published while at least one watcher's lease runs (watchers renew with the {@code watch} action),
 * from one subscription to its event log however many watchers it has. A watch reply replays what
 * a returning watcher missed.
 */
final class MutexEventPublisher {
  /** Longest replay of missed events in one watch reply; a longer gap is reported as a gap. */
  static final int MAX_REPLAY = 1000;

  private final Vertx vertx;
  private final String addressPrefix;
  private final MutexService mutexes;
  private final int maxWatched;
  private final Duration watchLease;
  private final StoreWorkers workers;
  private final Metrics metrics;
  /** Watched mutexes: their subscription and the watchers (id to expiry, ms on the wall clock) keeping it. */
  private final Map<String, Watch> watched = new ConcurrentHashMap<>();

  private static final class Watch {
    final CompletableFuture<MutexSubscription> subscription;
    final Map<String, Long> watchers = new ConcurrentHashMap<>();

    Watch(CompletableFuture<MutexSubscription> subscription) {
      this.subscription = subscription;
    }
  }

  MutexEventPublisher(Vertx vertx, String addressPrefix, MutexService mutexes, int maxWatched, Duration watchLease,
      StoreWorkers workers, Metrics metrics) {
    this.vertx = vertx;
    this.addressPrefix = addressPrefix;
    this.mutexes = mutexes;
    this.maxWatched = maxWatched;
    this.watchLease = watchLease;
    this.workers = workers;
    this.metrics = metrics;
  }

  /**
   * The {@code watch} action: starts or renews {@code watcher}'s watch of {@code name} and answers
   * with the replay since {@code after} (an event's sequence) or {@code since} (a position; both
   * null: the newest sequence), the lease and the address.
   */
  Future<JsonObject> watch(String name, String watcher, FencingToken after, FencingToken since) {
    return subscribe(name, watcher).compose(v -> since != null ? replaySince(name, since) : replay(name, after))
        .map(reply -> reply.put("name", name).put("leaseMs", watchLease.toMillis())
            .put("address", WireProtocol.mutexEventsAddress(addressPrefix, name)));
  }

  /** The {@code unwatch} action: whether {@code watcher} watched {@code name}; the last watcher ends the watch. */
  boolean unwatch(String name, String watcher) {
    Watch w = watched.get(name);
    boolean removed = w != null && w.watchers.remove(watcher) != null;
    if (w != null && w.watchers.isEmpty()) {
      unwatch(name, w);
    }
    return removed;
  }

  /** Ends every watch (on stop). */
  void close() {
    watched.values().forEach(w -> w.subscription.thenAccept(MutexSubscription::close));
    watched.clear();
  }

  private <T> Future<T> store(Supplier<? extends CompletableFuture<T>> call) {
    return workers.callAndStay(call);
  }

  /**
   * Starts (or renews) {@code watcher}'s watch of {@code name}: this node publishes the mutex's
   * events while at least one watcher's lease runs (once per mutex, however many watchers).
   */
  private Future<Void> subscribe(String name, String watcher) {
    Watch existing = watched.get(name);
    if (existing == null && watched.size() >= maxWatched) {
      sweep();
      if (watched.size() >= maxWatched) {
        return Future.failedFuture(FailureCodes.failure(FailureCodes.CONFLICT, "too_many_watched",
            "this node already publishes the events of " + maxWatched + " mutexes (mutex.maxWatched)"));
      }
    }
    String address = WireProtocol.mutexEventsAddress(addressPrefix, name);
    long expiry = System.currentTimeMillis() + watchLease.toMillis();
    return store(() -> {
      Watch w = watched.computeIfAbsent(name, n -> {
        Watch fresh = new Watch(mutexes.subscribe(n, event -> {
          metrics.lockEvent(event.type().name());
          vertx.eventBus().publish(address, MutexWire.event(event));
        }));
        // A failed subscription is forgotten, so that a later watch retries it.
        fresh.subscription.whenComplete((s, e) -> {
          if (e != null) {
            watched.remove(n, fresh);
          }
        });
        return fresh;
      });
      w.watchers.put(watcher, expiry);
      return w.subscription;
    }).mapEmpty();
  }

  /**
   * The watch reply's replay: with {@code after} (the last sequence a watcher delivered), the events
   * since then and whether some are missing (the log no longer holds {@code after}: trimmed, or
   * another store); without, the newest sequence (where a new watcher starts) and that event.
   */
  private Future<JsonObject> replay(String name, FencingToken after) {
    if (after == null) {
      // The newest event itself too: who holds after it is the current owner as of its sequence (the election's
      // WebSocket subscription starts from it).
      return store(() -> mutexes.latestEvent(name)).map(e -> new JsonObject()
          .put("latest", e.map(x -> x.sequence().toString()).orElse(null))
          .put("latestEvent", e.map(MutexWire::event).orElse(null)));
    }
    return store(() -> mutexes.events(name, after, MAX_REPLAY + 1)).map(events -> {
      boolean found = !events.isEmpty() && events.get(0).sequence().equals(after);
      List<LockEvent> missed = found ? events.subList(1, events.size()) : events;
      boolean gap = !found || missed.size() > MAX_REPLAY - 1;
      JsonArray out = new JsonArray();
      missed.stream().limit(MAX_REPLAY - 1).forEach(e -> out.add(MutexWire.event(e)));
      return new JsonObject().put("events", out).put("gap", gap);
    });
  }

  /**
   * The replay since a {@code position} (of the {@code position} action, or an event's sequence):
   * every event after it, and a gap when the log may no longer hold them all (older than the
   * retention, or a position of another store) or more were logged than one reply carries.
   */
  private Future<JsonObject> replaySince(String name, FencingToken position) {
    return store(() -> mutexes.eventsSince(name, position, MAX_REPLAY)).map(read -> {
      JsonArray out = new JsonArray();
      read.events().stream().limit(MAX_REPLAY - 1).forEach(e -> out.add(MutexWire.event(e)));
      return new JsonObject().put("events", out).put("gap", !read.complete() || read.events().size() > MAX_REPLAY - 1);
    });
  }

  /** Ends the watches whose watchers all let their lease run out, giving their slots back. */
  void sweep() {
    long now = System.currentTimeMillis();
    for (Map.Entry<String, Watch> e : watched.entrySet()) {
      Watch w = e.getValue();
      w.watchers.values().removeIf(expiry -> expiry < now);
      if (w.watchers.isEmpty()) {
        unwatch(e.getKey(), w);
      }
    }
  }

  private void unwatch(String name, Watch w) {
    if (w.watchers.isEmpty() && watched.remove(name, w)) {
      w.subscription.thenAccept(MutexSubscription::close);
    }
  }

  /** How many mutexes this node publishes the events of. */
  int count() {
    return watched.size();
  }
}
