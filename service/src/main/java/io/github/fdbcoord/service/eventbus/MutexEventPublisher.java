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
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * The lock events this node publishes on {@code <prefix>.mutex.events.<name>}: a mutex is
 * published while at least one watcher's lease runs (watchers renew with the {@code watch} action),
 * from one subscription to its event log however many watchers it has ({@link LeasedWatches}). A watch reply
 * replays what a returning watcher missed.
 */
final class MutexEventPublisher {
  /** Longest replay of missed events in one watch reply; a longer gap is reported as a gap. */
  static final int MAX_REPLAY = 1000;

  private final Vertx vertx;
  private final String addressPrefix;
  private final MutexService mutexes;
  private final StoreWorkers workers;
  private final Metrics metrics;
  private final LeasedWatches<Events> watches;

  /** A watched mutex's subscription to its event log. */
  private record Events(CompletableFuture<MutexSubscription> opened) implements LeasedWatches.Subscription {
    @Override
    public void close() {
      opened.thenAccept(MutexSubscription::close);
    }
  }

  MutexEventPublisher(Vertx vertx, String addressPrefix, MutexService mutexes, int maxWatched, Duration watchLease,
      StoreWorkers workers, Metrics metrics) {
    this.vertx = vertx;
    this.addressPrefix = addressPrefix;
    this.mutexes = mutexes;
    this.workers = workers;
    this.metrics = metrics;
    this.watches = new LeasedWatches<>(vertx, maxWatched, watchLease, workers,
        "this node already publishes the events of " + maxWatched + " mutexes (mutex.maxWatched)", this::subscribe);
  }

  /**
   * The {@code watch} action: starts or renews {@code watcher}'s watch of {@code name} and answers
   * with the replay since {@code after} (an event's sequence) or {@code since} (a position; both
   * null: the newest sequence), the lease and the address.
   */
  Future<JsonObject> watch(String name, String watcher, FencingToken after, FencingToken since) {
    return watches.watch(name, watcher, Events::opened)
        .compose(v -> since != null ? replaySince(name, since) : replay(name, after))
        .map(reply -> reply.put("name", name).put("leaseMs", watches.lease().toMillis())
            .put("address", WireProtocol.mutexEventsAddress(addressPrefix, name)));
  }

  /** The {@code unwatch} action: whether {@code watcher} watched {@code name}; the last watcher ends the watch. */
  boolean unwatch(String name, String watcher) {
    return watches.unwatch(name, watcher);
  }

  /** Ends every watch (on stop). */
  void close() {
    watches.close();
  }

  private <T> Future<T> store(Supplier<? extends CompletableFuture<T>> call) {
    return workers.callAndStay(call);
  }

  /** Publishes the events of mutex {@code name} on its address (once per mutex, however many watchers). */
  private Events subscribe(String name) {
    String address = WireProtocol.mutexEventsAddress(addressPrefix, name);
    return new Events(mutexes.subscribe(name, event -> {
      metrics.lockEvent(event.type().name());
      vertx.eventBus().publish(address, MutexWire.event(event));
    }));
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

  /** How many mutexes this node publishes the events of. */
  int count() {
    return watches.count();
  }
}
