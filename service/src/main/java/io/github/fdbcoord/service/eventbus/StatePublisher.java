package io.github.fdbcoord.service.eventbus;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.lease.StateSubscription;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;

/**
 * The state changes of semaphores or read-write locks this node publishes on {@code <layer address>.events.<name>}
 * as {@code {"name", "version", "state"}}: a name is published while at least one watcher's lease runs (watchers
 * renew with the {@code watch} action), from one layer observer however many watchers it has ({@link LeasedWatches},
 * as the mutex's {@link MutexEventPublisher} does for lock events). A {@code watch} reply carries the newest state,
 * so a watcher starts from it and takes only newer versions from the address (several nodes may publish the same
 * name).
 */
public final class StatePublisher<S> {
  /** The action that starts or renews a watch: {@code {"name", "watcher"}}. */
  public static final String WATCH = "watch";
  /** The action that ends a watcher's watch: {@code {"name", "watcher"}}. */
  public static final String UNWATCH = "unwatch";

  private final Vertx vertx;
  private final String layerAddress;
  private final BiFunction<String, BiConsumer<FencingToken, S>, CompletableFuture<StateSubscription>> observe;
  private final BiFunction<String, S, JsonObject> toJson;
  private final LeasedWatches<Observed> watches;

  /** A watched name's observer and the newest state it told. */
  private static final class Observed implements LeasedWatches.Subscription {
    volatile CompletableFuture<StateSubscription> subscription;
    volatile CompletableFuture<?> opened;
    final CompletableFuture<JsonObject> first = new CompletableFuture<>();
    /** The newest state told, as published. */
    volatile JsonObject latest;

    @Override
    public CompletableFuture<?> opened() {
      return opened;
    }

    @Override
    public void close() {
      subscription.thenAccept(StateSubscription::close);
    }
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
    this.observe = observe;
    this.toJson = toJson;
    this.watches = new LeasedWatches<>(vertx, maxWatched, watchLease, workers,
        "this node already publishes the state of " + maxWatched + " " + what + "s (mutex.maxWatched)", this::start);
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
    return watches.watch(name, watcher, o -> o.first.thenApply(first -> o.latest))
        .map(latest -> latest.copy().put("leaseMs", watches.lease().toMillis())
            .put("address", eventsAddress(layerAddress, name)));
  }

  private Observed start(String name) {
    String address = eventsAddress(layerAddress, name);
    Observed fresh = new Observed();
    fresh.subscription = observe.apply(name, (version, state) -> {
      JsonObject event = new JsonObject().put("name", name).put("version", version.toString())
          .put("state", toJson.apply(name, state));
      fresh.latest = event;
      fresh.first.complete(event);
      vertx.eventBus().publish(address, event);
    });
    // Watches waiting for the first state fail with the subscription, before the name is forgotten.
    fresh.opened = fresh.subscription.whenComplete((sub, e) -> {
      if (e != null) {
        fresh.first.completeExceptionally(e);
      }
    });
    return fresh;
  }

  /** The {@code unwatch} action: whether {@code watcher} watched {@code name}; the last watcher ends the watch. */
  boolean unwatch(String name, String watcher) {
    return watches.unwatch(name, watcher);
  }

  /** Ends every watch (on stop). */
  void close() {
    watches.close();
  }
}
