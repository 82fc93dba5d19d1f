package io.github.fdbcoord.vertx;

import com.apple.foundationdb.tuple.Versionstamp;
import io.github.fdbcoord.mutex.AcquireResult;
import io.github.fdbcoord.mutex.FencingToken;
import io.github.fdbcoord.mutex.LockEvent;
import io.github.fdbcoord.mutex.MutexException;
import io.github.fdbcoord.mutex.MutexOwner;
import io.github.fdbcoord.mutex.MutexSchema;
import io.github.fdbcoord.mutex.MutexService;
import io.github.fdbcoord.mutex.MutexState;
import io.github.fdbcoord.mutex.MutexSubscription;
import io.github.fdbcoord.mutex.QueueEntry;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The distributed mutex on its address ({@code <prefix>.mutex}). Actions: tryAcquire, acquire,
 * release, heartbeat, leave, state, held, watch.
 *
 * <p>A holder that acquired through this verticle must heartbeat (action heartbeat) more often than
 * the lease: nothing heartbeats on its behalf, so a holder that goes away loses the mutex to the
 * reaper after its lease. On stop, the grants obtained through this verticle that are still held
 * are released, so a stopping node hands its locks on at once.
 *
 * <p>Lock events of a watched mutex are published on {@code <prefix>.mutex.events.<name>}; a mutex
 * is watched after a {@code watch} request (the WebSocket and {@link CoordinationClient#lockEvents}
 * send one). Events come from the mutex's event log in the store, so they include transitions made
 * by other processes and by the reaper.
 */
public final class MutexVerticle extends LayerVerticle {
  private static final Logger LOG = Logger.getLogger(MutexVerticle.class.getName());
  private static final HexFormat HEX = HexFormat.of();

  private final MutexService mutexes;
  private final String addressPrefix;
  private final Duration maxAcquireTimeout;
  private final int maxWatched;
  /** Grants obtained through this verticle, "name\0owner" to token: released on stop. */
  private final Map<String, Grant> grants = new ConcurrentHashMap<>();
  private final Map<String, CompletableFuture<MutexSubscription>> watched = new ConcurrentHashMap<>();

  /** Acquires waiting in a queue through this verticle: failed (and their owners dequeued) on stop. */
  private final Map<Promise<JsonObject>, Grant> waiting = new ConcurrentHashMap<>();
  private volatile boolean stopping;

  private record Grant(String name, String owner, FencingToken token) {}

  public MutexVerticle(String address, String addressPrefix, MutexService mutexes, Duration maxAcquireTimeout,
      int maxWatched, StoreWorkers workers, Metrics metrics) {
    super(address, workers, metrics);
    this.addressPrefix = addressPrefix;
    this.mutexes = mutexes;
    this.maxAcquireTimeout = maxAcquireTimeout;
    this.maxWatched = maxWatched;
  }

  @Override
  protected void registerActions() {
    action("tryAcquire", body -> {
      String name = name(body);
      String owner = owner(body);
      return store(() -> mutexes.tryAcquire(name, owner)).map(r -> acquired(name, owner, r));
    });
    action("acquire", body -> {
      String name = name(body);
      String owner = owner(body);
      Long ms = Requests.optionalLong(body, "timeoutMs", 0, maxAcquireTimeout.toMillis());
      Duration timeout = ms == null ? maxAcquireTimeout : Duration.ofMillis(ms);
      return acquire(name, owner, timeout);
    });
    action("release", body -> {
      String name = name(body);
      String owner = owner(body);
      FencingToken token = token(body);
      return store(() -> token == null ? mutexes.release(name, owner) : mutexes.release(name, owner, token))
          .andThen(ar -> {
            if (ar.succeeded() || ar.cause() instanceof MutexException) {
              grants.remove(key(name, owner));
            }
          })
          .map(MutexVerticle::event);
    });
    action("heartbeat", body -> {
      String name = name(body);
      String owner = owner(body);
      FencingToken token = token(body);
      return store(() -> token == null ? mutexes.heartbeat(name, owner) : mutexes.heartbeat(name, owner, token))
          .andThen(ar -> {
            if (ar.succeeded()) {
              grants.put(key(name, owner), new Grant(name, owner, ar.result().token()));
            } else if (ar.cause() instanceof MutexException) {
              grants.remove(key(name, owner));
            }
          })
          .map(o -> owner(name, o));
    });
    action("leave", body -> {
      String name = name(body);
      String owner = owner(body);
      return store(() -> mutexes.leave(name, owner))
          .map(b -> new JsonObject().put("name", name).put("owner", owner).put("left", b));
    });
    action("state", body -> {
      String name = name(body);
      return store(() -> mutexes.state(name)).map(MutexVerticle::state);
    });
    action("inspect", body -> {
      String name = name(body);
      return store(() -> mutexes.inspect(name)).map(i -> state(i.state())
          .put("heldMs", i.heldFor().map(java.time.Duration::toMillis).orElse(null))
          .put("leaseLeftMs", i.leaseLeft().map(java.time.Duration::toMillis).orElse(null)));
    });
    action("held", body -> {
      String after = Requests.optionalString(body, "after");
      Long limit = Requests.optionalLong(body, "limit", 1, 10_000);
      int n = limit == null ? 100 : limit.intValue();
      return store(() -> mutexes.heldMutexes(after, n)).map(names -> new JsonObject()
          .put("names", new JsonArray(new ArrayList<>(names)))
          .put("nextAfter", names.size() == n ? names.get(names.size() - 1) : null));
    });
    action("watch", body -> {
      String name = name(body);
      return watch(name).map(v -> new JsonObject().put("name", name)
          .put("address", CoordinationConfig.mutexEventsAddress(addressPrefix, name)));
    });
  }

  /**
   * Waits for the grant without a heartbeating handle (the remote holder heartbeats): try once;
   * when queued, subscribe to the mutex's transitions, try again (idempotent, catches a grant made
   * before the subscription) and wait for a transition naming this owner, or leave on timeout.
   */
  private Future<JsonObject> acquire(String name, String owner, Duration timeout) {
    Promise<JsonObject> result = Promise.promise();
    waiting.put(result, new Grant(name, owner, null));
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
        store(() -> mutexes.leave(name, owner))
            .onComplete(left -> timedOut(name, owner, timeout).onFailure(result::tryFail));
      } else {
        waitForGrant(name, owner, timeout, result);
      }
    });
    return result.future().andThen(ar -> waiting.remove(result));
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

  /** Starts publishing the lock events of {@code name} on the event bus (once per mutex). */
  private Future<Void> watch(String name) {
    if (watched.containsKey(name)) {
      return Future.succeededFuture();
    }
    if (watched.size() >= maxWatched) {
      return Future.failedFuture(FailureCodes.failure(FailureCodes.CONFLICT, "too_many_watched",
          "this node already publishes the events of " + maxWatched + " mutexes (mutex.maxWatched)"));
    }
    String address = CoordinationConfig.mutexEventsAddress(addressPrefix, name);
    return store(() -> watched.computeIfAbsent(name, n -> {
      CompletableFuture<MutexSubscription> sub = mutexes.subscribe(n, event -> {
        metrics.lockEvent(event.type().name());
        vertx.eventBus().publish(address, event(event));
      });
      // A failed subscription is forgotten, so that a later watch retries it.
      sub.whenComplete((s, e) -> {
        if (e != null) {
          watched.remove(n, sub);
        }
      });
      return sub;
    })).mapEmpty();
  }

  @Override
  public Future<?> stop() {
    stopping = true;
    List<Future<?>> releases = new ArrayList<>();
    for (Map.Entry<Promise<JsonObject>, Grant> w : new ArrayList<>(waiting.entrySet())) {
      Grant g = w.getValue();
      if (w.getKey().tryFail(FailureCodes.failure(FailureCodes.UNAVAILABLE, "closed", "the service on this node is "
          + "stopping: '" + g.owner() + "' left the queue of mutex '" + g.name() + "'"))) {
        // If the hand-off beat the leave, the owner now holds a grant nobody will use: release it.
        releases.add(store(() -> mutexes.leave(g.name(), g.owner())
            .thenCompose(left -> mutexes.state(g.name()))
            .thenCompose(state -> state.owner().filter(o -> o.owner().equals(g.owner())).isPresent()
                ? mutexes.release(g.name(), g.owner(), state.owner().get().token()).thenApply(e -> true)
                : CompletableFuture.completedFuture(false))));
      }
    }
    return Future.join(releases).transform(x -> releaseHeld());
  }

  private Future<?> releaseHeld() {
    List<Grant> held = new ArrayList<>(grants.values());
    grants.clear();
    List<Future<?>> releases = new ArrayList<>();
    for (Grant g : held) {
      releases.add(store(() -> mutexes.release(g.name(), g.owner(), g.token()))
          .onFailure(e -> LOG.log(Level.FINE, "release on stop of " + g + " failed", e)));
    }
    return Future.join(releases).transform(ar -> {
      watched.values().forEach(f -> f.thenAccept(MutexSubscription::close));
      watched.clear();
      return super.stop();
    });
  }

  /** How many grants obtained through this verticle are believed held. */
  int heldCount() {
    return grants.size();
  }

  private JsonObject acquired(String name, String owner, AcquireResult r) {
    if (r.isHeld()) {
      return held(name, owner, r.token().get());
    }
    return new JsonObject().put("name", name).put("owner", owner).put("held", false)
        .put("position", r.position()).put("ticket", r.ticket().map(MutexVerticle::hex).orElse(null));
  }

  private JsonObject held(String name, String owner, FencingToken token) {
    grants.put(key(name, owner), new Grant(name, owner, token));
    return new JsonObject().put("name", name).put("owner", owner).put("held", true).put("token", token.toString());
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
      return MutexSchema.checkName(value, field);
    } catch (IllegalArgumentException e) {
      throw FailureCodes.badRequest(e.getMessage());
    }
  }

  private static FencingToken token(JsonObject body) {
    String hex = Requests.optionalString(body, "token");
    if (hex == null) {
      return null;
    }
    try {
      return FencingToken.parse(hex);
    } catch (IllegalArgumentException e) {
      throw FailureCodes.badRequest("field 'token': " + e.getMessage());
    }
  }

  static String hex(Versionstamp vs) {
    return HEX.formatHex(vs.getBytes());
  }

  static JsonObject event(LockEvent e) {
    return new JsonObject()
        .put("type", e.type().name())
        .put("mutex", e.mutex())
        .put("sequence", e.sequence().toString())
        .put("owner", e.owner().orElse(null))
        .put("token", e.token().map(FencingToken::toString).orElse(null))
        .put("previousOwner", e.previousOwner().orElse(null))
        .put("previousToken", e.previousToken().map(FencingToken::toString).orElse(null));
  }

  static JsonObject owner(String name, MutexOwner o) {
    return new JsonObject().put("name", name).put("owner", o.owner()).put("token", o.token().toString())
        .put("heartbeats", o.heartbeats());
  }

  static JsonObject state(MutexState s) {
    JsonArray queue = new JsonArray();
    for (QueueEntry q : s.queue()) {
      queue.add(new JsonObject().put("owner", q.owner()).put("ticket", hex(MutexSchema.versionstamp(q.ticket()))));
    }
    return new JsonObject().put("name", s.name()).put("held", s.isHeld())
        .put("owner", s.owner().map(o -> owner(s.name(), o).copy()).map(j -> {
          j.remove("name");
          return j;
        }).orElse(null))
        .put("queue", queue);
  }
}
