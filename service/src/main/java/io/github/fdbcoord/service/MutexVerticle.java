package io.github.fdbcoord.service;

import io.github.fdbcoord.fdb.FdbErrors;
import io.github.fdbcoord.client.wire.MutexWire;
import io.github.fdbcoord.client.CoordinationClient;
import com.apple.foundationdb.tuple.Versionstamp;
import io.github.fdbcoord.mutex.AcquireResult;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.mutex.MutexException;
import io.github.fdbcoord.api.MutexOwner;
import io.github.fdbcoord.mutex.MutexService;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonObject;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;

/**
 * The distributed mutex on its address ({@code <prefix>.mutex}). Actions: tryAcquire, acquire,
 * release, heartbeat, leave, state, held, watch.
 *
 * <p>A holder that acquired through this verticle must heartbeat (action heartbeat) more often than
 * the lease: nothing heartbeats on its behalf, so a holder that goes away loses the mutex to the
 * reaper after its lease. On stop, the grants obtained through this verticle that are still held
 * are released, so a stopping node hands its locks on at once.
 *
 * <p>Waiters of pending acquires are kept alive (their queue entries heartbeated) by this verticle
 * as long as their requests wait; {@code abandon} ends a wait whose requester went away (the HTTP
 * verticle sends it when a client disconnects). A {@code heartbeat} without token from an owner that
 * only waits keeps its queue entry alive.
 *
 * <p>Lock events of a watched mutex are published on {@code <prefix>.mutex.events.<name>}; a mutex
 * is watched after a {@code watch} request (the WebSocket and {@link CoordinationClient#lockEvents}
 * send one). Events come from the mutex's event log in the store, so they include transitions made
 * by other processes and by the reaper ({@link MutexEventPublisher}).
 */
public final class MutexVerticle extends LayerVerticle {
  private static final Logger LOG = LoggerFactory.getLogger(MutexVerticle.class);

  private final MutexService mutexes;
  private final String addressPrefix;
  private final Duration maxAcquireTimeout;
  /** Grants obtained through this verticle, "name\0owner" to token: released on stop. */
  private final Map<String, Grant> grants = new ConcurrentHashMap<>();
  private final int maxWatched;
  private final Duration watchLease;
  /** The lock events this node publishes (created on start: it needs Vert.x). */
  private MutexEventPublisher events;
  private long keepAliveTimer = -1;
  private long watchSweepTimer = -1;

  /**
   * Liveness addresses of the requesters of waiting acquires (sent by {@link CoordinationClient}):
   * pinged with the waiters' heartbeats; a requester whose node is gone abandons its wait.
   */
  private final Map<Promise<JsonObject>, String> requesters = new ConcurrentHashMap<>();

  /** Acquires waiting in a queue through this verticle: failed (and their owners dequeued) on stop. */
  private final Map<Promise<JsonObject>, Grant> waiting = new ConcurrentHashMap<>();
  private volatile boolean stopping;

  private record Grant(String name, String owner, FencingToken token) {}


  public MutexVerticle(String address, String addressPrefix, MutexService mutexes, Duration maxAcquireTimeout,
      int maxWatched, Duration watchLease, StoreWorkers workers, Metrics metrics) {
    super(address, workers, metrics);
    this.addressPrefix = addressPrefix;
    this.mutexes = mutexes;
    this.maxAcquireTimeout = maxAcquireTimeout;
    this.maxWatched = maxWatched;
    this.watchLease = watchLease;
  }

  @Override
  public Future<?> start() {
    // The waiters of pending acquires are alive as long as their requests: this node heartbeats
    // their queue entries (a request that goes away is abandoned and leaves the queue).
    keepAliveTimer = vertx.setPeriodic(mutexes.options().heartbeatInterval().toMillis(), id -> keepWaitersAlive());
    events = new MutexEventPublisher(vertx, addressPrefix, mutexes, maxWatched, watchLease, workers, metrics);
    watchSweepTimer = vertx.setPeriodic(Math.max(100, watchLease.toMillis() / 4), id -> events.sweep());
    return super.start();
  }

  @Override
  protected void registerActions() {
    action(MutexWire.TRY_ACQUIRE, body -> {
      String name = name(body);
      String owner = owner(body);
      return store(() -> mutexes.tryAcquire(name, owner)).map(r -> acquired(name, owner, r));
    });
    action(MutexWire.ACQUIRE, body -> {
      String name = name(body);
      String owner = owner(body);
      Long ms = Requests.optionalLong(body, "timeoutMs", 0, maxAcquireTimeout.toMillis());
      Duration timeout = ms == null ? maxAcquireTimeout : Duration.ofMillis(ms);
      return acquire(name, owner, timeout, Requests.optionalString(body, "liveness"));
    });
    action(MutexWire.RELEASE, body -> {
      String name = name(body);
      String owner = owner(body);
      FencingToken token = token(body);
      return store(() -> token == null ? mutexes.release(name, owner) : mutexes.release(name, owner, token))
          .andThen(ar -> {
            if (ar.succeeded() || FdbErrors.unwrap(ar.cause()) instanceof MutexException) {
              grants.remove(key(name, owner));
            }
          })
          .map(MutexWire::event);
    });
    action(MutexWire.HEARTBEAT, body -> {
      String name = name(body);
      String owner = owner(body);
      FencingToken token = token(body);
      Future<JsonObject> beat = store(() -> token == null ? mutexes.heartbeat(name, owner) : mutexes.heartbeat(name, owner, token))
          .andThen(ar -> {
            if (ar.succeeded()) {
              grants.put(key(name, owner), new Grant(name, owner, ar.result().token()));
            } else if (FdbErrors.unwrap(ar.cause()) instanceof MutexException) {
              grants.remove(key(name, owner));
            }
          })
          .map(o -> MutexWire.owner(name, o).put("held", true).put("leaseMs", mutexes.options().lease().toMillis()));
      if (token != null) {
        return beat;
      }
      // Not the holder: a waiter (tryAcquire / wait:false) heartbeats its queue entry the same way.
      return beat.recover(e -> FdbErrors.unwrap(e) instanceof MutexException
          ? store(() -> mutexes.heartbeatWaiter(name, owner)).map(r -> acquired(name, owner, r))
          : Future.failedFuture(e));
    });
    action(MutexWire.ABANDON, body -> {
      String name = name(body);
      String owner = owner(body);
      List<Future<?>> cleanups = new ArrayList<>();
      for (Map.Entry<Promise<JsonObject>, Grant> w : new ArrayList<>(waiting.entrySet())) {
        if (w.getValue().name().equals(name) && w.getValue().owner().equals(owner)) {
          cleanups.add(abandon(w.getKey(), w.getValue(), FailureCodes.failure(FailureCodes.CONFLICT, "abandoned",
              "the acquire of mutex '" + name + "' by '" + owner + "' was abandoned by its requester")));
        }
      }
      return Future.join(cleanups).transform(ar -> Future.succeededFuture(new JsonObject().put("name", name)
          .put("owner", owner).put("abandoned", cleanups.size())));
    });
    action(MutexWire.UNWATCH, body -> {
      String name = name(body);
      String watcher = Requests.requiredString(body, "watcher");
      return Future.succeededFuture(new JsonObject().put("name", name).put("watcher", watcher)
          .put("unwatched", events.unwatch(name, watcher)));
    });
    action(MutexWire.LEAVE, body -> {
      String name = name(body);
      String owner = owner(body);
      return store(() -> mutexes.leave(name, owner))
          .map(b -> MutexWire.left(name, owner, b));
    });
    action(MutexWire.STATE, body -> {
      String name = name(body);
      return store(() -> mutexes.state(name)).map(MutexWire::state);
    });
    action(MutexWire.INSPECT, body -> {
      String name = name(body);
      return store(() -> mutexes.inspect(name)).map(i -> MutexWire.state(i.state())
          .put("heldMs", i.heldFor().map(java.time.Duration::toMillis).orElse(null))
          .put("leaseLeftMs", i.leaseLeft().map(java.time.Duration::toMillis).orElse(null)));
    });
    action(MutexWire.HELD, body -> {
      String after = Requests.optionalString(body, "after");
      Long limit = Requests.optionalLong(body, "limit", 1, 10_000);
      int n = limit == null ? 100 : limit.intValue();
      return store(() -> mutexes.heldMutexes(after, n)).map(names -> MutexWire.heldPage(names, n));
    });
    action(MutexWire.WATCH, body -> {
      String name = name(body);
      String watcher = Requests.optionalString(body, "watcher");
      FencingToken after = sequence(body, "after");
      FencingToken since = sequence(body, "since");
      if (after != null && since != null) {
        throw FailureCodes.badRequest("give 'after' (an event's sequence) or 'since' (a position), not both");
      }
      return events.watch(name, watcher == null ? "" : watcher, after, since);
    });
    action(MutexWire.POSITION, body -> store(mutexes::currentPosition)
        .map(p -> new JsonObject().put("position", p.toString())));
  }

  /**
   * Waits for the grant without a heartbeating handle (the remote holder heartbeats): try once;
   * when queued, subscribe to the mutex's transitions, try again (idempotent, catches a grant made
   * before the subscription) and wait for a transition naming this owner, or leave on timeout.
   */
  private Future<JsonObject> acquire(String name, String owner, Duration timeout, String liveness) {
    Promise<JsonObject> result = Promise.promise();
    waiting.put(result, new Grant(name, owner, null));
    if (liveness != null) {
      requesters.put(result, liveness);
    }
    if (stopping) {
      waiting.remove(result);
      return Future.failedFuture(FailureCodes.failure(FailureCodes.UNAVAILABLE, "closed",
          "the service on this node is stopping"));
    }
    store(() -> mutexes.tryAcquire(name, owner)).onComplete(first -> {
      if (first.failed()) {
        result.tryFail(first.cause());
      } else if (first.result().isHeld()) {
        result.tryComplete(acquired(name, owner, first.result()));
      } else if (timeout.isZero()) {
        waiting.remove(result); // leaving: no longer kept alive
        store(() -> mutexes.leave(name, owner))
            .onComplete(left -> timedOut(name, owner, timeout).onFailure(result::tryFail));
      } else {
        waitForGrant(name, owner, timeout, result);
      }
    });
    return result.future().andThen(ar -> {
      waiting.remove(result);
      requesters.remove(result);
    });
  }

  private void waitForGrant(String name, String owner, Duration timeout, Promise<JsonObject> result) {
    CompletableFuture<FencingToken> granted = new CompletableFuture<>();
    store(() -> mutexes.subscribe(name, event -> {
      if (event.owner().isPresent() && event.owner().get().equals(owner)) {
        granted.complete(event.sequence());
      }
    })).onComplete(sub -> {
      if (sub.failed()) {
        result.tryFail(sub.cause());
        return;
      }
      long timer = vertx.setTimer(Math.max(1, timeout.toMillis()), id -> giveUp(name, owner, timeout, result));
      result.future().onComplete(done -> {
        vertx.cancelTimer(timer);
        sub.result().close();
      });
      // Again, now that transitions are delivered: catches a grant made before the subscription.
      store(() -> mutexes.tryAcquire(name, owner)).onComplete(ar -> {
        if (ar.failed()) {
          result.tryFail(ar.cause());
        } else if (ar.result().isHeld()) {
          result.tryComplete(acquired(name, owner, ar.result()));
        }
      });
      granted.thenAccept(token -> result.tryComplete(held(name, owner, token)));
    });
  }

  /** Timeout: leave the queue; if the grant raced the timeout, keep it. */
  private void giveUp(String name, String owner, Duration timeout, Promise<JsonObject> result) {
    waiting.remove(result); // leaving: no longer kept alive
    store(() -> mutexes.leave(name, owner).thenCompose(left -> mutexes.state(name))).onComplete(ar -> {
      if (ar.succeeded() && ar.result().owner().isPresent() && ar.result().owner().get().owner().equals(owner)) {
        result.tryComplete(held(name, owner, ar.result().owner().get().token()));
      } else if (ar.failed()) {
        result.tryFail(ar.cause());
      } else {
        timedOut(name, owner, timeout).onFailure(result::tryFail);
      }
    });
  }

  private static Future<JsonObject> timedOut(String name, String owner, Duration timeout) {
    return Future.failedFuture(FailureCodes.failure(FailureCodes.CONFLICT, "timed_out", "'" + owner
        + "' did not acquire mutex '" + name + "' within " + timeout.toMillis() + " ms and left its queue"));
  }


  /**
   * Heartbeats the queue entries of the acquires waiting here; an entry found gone (removed by a
   * reaper while this node stalled) is made again, and a grant found is delivered.
   */
  private void keepWaitersAlive() {
    pingRequesters();
    Map<String, Grant> pending = new java.util.HashMap<>();
    for (Grant g : waiting.values()) {
      pending.putIfAbsent(key(g.name(), g.owner()), g);
    }
    for (Grant g : pending.values()) {
      store(() -> mutexes.heartbeatWaiter(g.name(), g.owner())
          .exceptionallyCompose(e -> FdbErrors.unwrap(e) instanceof MutexException && stillWaiting(g)
              ? mutexes.tryAcquire(g.name(), g.owner()) : CompletableFuture.failedFuture(e)))
          .onSuccess(r -> {
            if (!stillWaiting(g)) {
              if (grants.containsKey(key(g.name(), g.owner()))) {
                // The wait was answered with a grant while this heartbeat ran: the grant is the
                // requester's, whatever this heartbeat read; only a queue entry it made again goes.
                // (Releasing here handed live holders' grants on: WaiterLivenessTest's not_owner.)
                store(() -> mutexes.leave(g.name(), g.owner()));
              } else {
                // The wait ended (abandoned, timed out, or the service stopped) while this heartbeat
                // made the entry again: take it out, or it would wait in the queue for nobody.
                abandonEntry(g);
              }
            } else if (r.isHeld()) {
              complete(g, held(g.name(), g.owner(), r.token().get()));
            }
          })
          .onFailure(e -> LOG.debug("heartbeat of waiter " + g + " failed", e));
    }
  }

  /** Whether an acquire for {@code g}'s owner still waits through this verticle. */
  private boolean stillWaiting(Grant g) {
    if (stopping) {
      return false;
    }
    for (Map.Entry<Promise<JsonObject>, Grant> w : waiting.entrySet()) {
      if (w.getValue().name().equals(g.name()) && w.getValue().owner().equals(g.owner())
          && !w.getKey().future().isComplete()) {
        return true;
      }
    }
    return false;
  }

  /**
   * An event-bus acquire is alive while its requester's node is: a requester that left (no handler
   * at its liveness address any more, or no answer within a heartbeat interval) abandons its wait.
   */
  private void pingRequesters() {
    long timeout = Math.max(100, mutexes.options().heartbeatInterval().toMillis());
    for (Map.Entry<Promise<JsonObject>, String> r : new ArrayList<>(requesters.entrySet())) {
      vertx.eventBus().request(r.getValue(), new JsonObject(), new io.vertx.core.eventbus.DeliveryOptions()
          .setSendTimeout(timeout)).onFailure(e -> {
            Grant g = waiting.get(r.getKey());
            // Only a registration that is gone counts: a slow answer (load, a pause) is no proof of death.
            if (g != null && e instanceof io.vertx.core.eventbus.ReplyException
                && ((io.vertx.core.eventbus.ReplyException) e).failureType() == io.vertx.core.eventbus.ReplyFailure.NO_HANDLERS) {
              abandon(r.getKey(), g, FailureCodes.failure(FailureCodes.CONFLICT, "abandoned", "the node that sent the"
                  + " acquire of mutex '" + g.name() + "' by '" + g.owner() + "' is gone (" + e.getMessage() + ")"));
            }
          });
    }
  }

  private void complete(Grant g, JsonObject reply) {
    for (Map.Entry<Promise<JsonObject>, Grant> w : new ArrayList<>(waiting.entrySet())) {
      if (w.getValue().name().equals(g.name()) && w.getValue().owner().equals(g.owner())) {
        w.getKey().tryComplete(reply);
      }
    }
  }

  /**
   * Fails a waiting acquire with {@code failure} and takes its owner out of the queue; if the
   * hand-off beat the leave, the owner holds a grant nobody will use: it is released.
   */
  private Future<?> abandon(Promise<JsonObject> waiter, Grant g, Throwable failure) {
    if (!waiter.tryFail(failure)) {
      return Future.succeededFuture();
    }
    return abandonEntry(g);
  }

  /** Takes {@code g}'s owner out of the queue; a grant that beat the leave is released. */
  private Future<?> abandonEntry(Grant g) {
    return store(() -> mutexes.leave(g.name(), g.owner())
        .thenCompose(left -> mutexes.state(g.name()))
        .thenCompose(state -> state.owner().filter(o -> o.owner().equals(g.owner())).isPresent()
            ? mutexes.release(g.name(), g.owner(), state.owner().get().token()).thenApply(e -> true)
            : CompletableFuture.completedFuture(false)))
        .andThen(ar -> grants.remove(key(g.name(), g.owner())));
  }

  @Override
  public Future<?> stop() {
    stopping = true;
    vertx.cancelTimer(keepAliveTimer);
    vertx.cancelTimer(watchSweepTimer);
    List<Future<?>> releases = new ArrayList<>();
    for (Map.Entry<Promise<JsonObject>, Grant> w : new ArrayList<>(waiting.entrySet())) {
      Grant g = w.getValue();
      releases.add(abandon(w.getKey(), g, FailureCodes.failure(FailureCodes.UNAVAILABLE, "closed",
          "the service on this node is stopping: '" + g.owner() + "' left the queue of mutex '" + g.name() + "'")));
    }
    return Future.join(releases).transform(x -> releaseHeld());
  }

  private Future<?> releaseHeld() {
    List<Grant> held = new ArrayList<>(grants.values());
    grants.clear();
    List<Future<?>> releases = new ArrayList<>();
    for (Grant g : held) {
      releases.add(store(() -> mutexes.release(g.name(), g.owner(), g.token()))
          .onFailure(e -> LOG.debug("release on stop of " + g + " failed", e)));
    }
    return Future.join(releases).transform(ar -> {
      events.close();
      return super.stop();
    });
  }

  /** How many mutexes this node publishes the events of. */
  int watchedCount() {
    return events.count();
  }

  /** How many grants obtained through this verticle are believed held. */
  int heldCount() {
    return grants.size();
  }

  private JsonObject acquired(String name, String owner, AcquireResult r) {
    if (r.isHeld()) {
      return held(name, owner, r.token().get());
    }
    return MutexWire.queued(name, owner, r.position(), r.ticket().map(Versionstamp::getBytes).orElse(null));
  }

  private JsonObject held(String name, String owner, FencingToken token) {
    grants.put(key(name, owner), new Grant(name, owner, token));
    // The lease travels with the grant: a client's lock renews at a third of it.
    return MutexWire.held(name, owner, token).put("leaseMs", mutexes.options().lease().toMillis());
  }

  private static String key(String name, String owner) {
    return name + '\0' + owner;
  }

  private static String name(JsonObject body) {
    return check(Requests.requiredString(body, "name"), "name");
  }

  private static String owner(JsonObject body) {
    return check(Requests.requiredString(body, "owner"), "owner");
  }

  private static String check(String value, String field) {
    try {
      return MutexService.checkName(value, field);
    } catch (IllegalArgumentException e) {
      throw FailureCodes.badRequest(e.getMessage());
    }
  }

  private static FencingToken token(JsonObject body) {
    return sequence(body, "token");
  }

  private static FencingToken sequence(JsonObject body, String field) {
    String hex = Requests.optionalString(body, field);
    if (hex == null) {
      return null;
    }
    try {
      return FencingToken.parse(hex);
    } catch (IllegalArgumentException e) {
      throw FailureCodes.badRequest("field '" + field + "': " + e.getMessage());
    }
  }
}
