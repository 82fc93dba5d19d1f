package io.github.fdbcoord.service.eventbus;

import io.github.fdbcoord.api.FailureKind;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.client.wire.SemaphoreWire;
import io.github.fdbcoord.fdb.FdbErrors;
import io.github.fdbcoord.semaphore.SemaphoreException;
import io.github.fdbcoord.semaphore.SemaphoreService;
import io.github.fdbcoord.lease.GrantNotifier;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The fenced semaphore on its address ({@code <prefix>.semaphore}). Actions: acquire, release, heartbeat, state,
 * abandon, watch, unwatch (docs/vertx.md); the state changes of watched semaphores are published on
 * {@code <prefix>.semaphore.events.<name>} ({@link StatePublisher}).
 *
 * <p>A permit held for a requester over the event bus or HTTP lives as a mutex grant held for one
 * ({@link MutexVerticle}): the acquire waits through {@link SemaphoreService#awaitGrant}, whose queue entry the layer
 * keeps alive while the request waits and whose grant nothing heartbeats, so the requester heartbeats more often
 * than the lease or loses the permit to the next waiter when it stops. A waiting acquire is ended by {@code abandon}
 * (the HTTP routes send it when a client disconnects), by its requester's departure (pinged at its {@code liveness}
 * address) and by the node's stop; an acquire answered {@code store_unavailable} whose grant comes later is released
 * at once. The permits granted through this node and still held are released when it stops, so a stopping node hands
 * them on at once instead of after the lease. A grant made for a wait on another node is hinted to it over the event
 * bus ({@link #grantNotifier}), so that it does not wait for its watch.
 */
public final class SemaphoreVerticle extends LayerVerticle {
  private static final Logger LOG = LoggerFactory.getLogger(SemaphoreVerticle.class);

  private final SemaphoreService semaphores;
  private final Duration maxAcquireTimeout;
  /** Grants obtained through this verticle, "name\0owner" to grant: released on stop. */
  private final Map<String, Grant> grants = new ConcurrentHashMap<>();
  /** Acquires waiting through this verticle: ended on abandon, on their requester's departure and on stop. */
  private final RequesterWaits<FencingToken> waits = new RequesterWaits<>();
  private long livenessTimer = -1;
  private volatile boolean stopping;
  private int maxWatched = 1000;
  private Duration watchLease = Duration.ofSeconds(30);
  /** The state changes this node publishes (created on start: it needs Vert.x). */
  private StatePublisher<SemaphoreService.SemaphoreState> states;

  private record Grant(String name, String owner, FencingToken token) {}

  /** Serves {@code semaphores} on {@code address}; acquires wait at most {@code maxAcquireTimeout}. */
  public SemaphoreVerticle(String address, SemaphoreService semaphores, Duration maxAcquireTimeout,
      StoreWorkers workers, Metrics metrics) {
    super(address, workers, metrics);
    this.semaphores = semaphores;
    this.maxAcquireTimeout = maxAcquireTimeout;
  }

  /** Starts pinging waiting requesters, then serves the actions. */
  @Override
  public Future<?> start() {
    long interval = semaphores.options().heartbeatInterval().toMillis();
    livenessTimer = vertx.setPeriodic(interval, id -> waits.pingRequesters(vertx,
        Duration.ofMillis(Math.max(100, interval))));
    return listenForHandOffs(semaphores::recheck).compose(v -> super.start());
  }

  /**
   * The notifier to open the service's {@link SemaphoreService} with: publishes each grant it commits for a wait on
   * another node to the verticles serving {@code address}, as the mutex's hand-off hints are ({@link MutexVerticle}).
   */
  public static GrantNotifier grantNotifier(Vertx vertx, String address) {
    return (name, owner) -> publishHandOff(vertx, address, name, owner);
  }

  /** Registers the semaphore actions (see the class comment). */
  @Override
  protected void registerActions() {
    action(SemaphoreWire.ACQUIRE, body -> {
      String name = name(body);
      String owner = owner(body);
      int permits = permits(body);
      Duration timeout = acquireTimeout(body);
      String liveness = Requests.optionalString(body, "liveness");
      return awaitGrant(name, permits, owner, timeout, liveness)
          .map(token -> held(name, owner, token).put("permits", permits));
    }, body -> acquireTimeout(body).plus(afterWait()), (body, late) ->
        withdraw(body.getString("name"), body.getString("owner"), FencingToken.parse(late.getString("token"))));
    action(SemaphoreWire.RELEASE, body -> {
      String name = name(body);
      String owner = owner(body);
      FencingToken token = token(body);
      return store(() -> semaphores.release(name, owner, token))
          .andThen(ar -> {
            if (ar.succeeded() || notHeld(ar.cause())) {
              grants.remove(key(name, owner), new Grant(name, owner, token));
            }
          })
          .map(v -> SemaphoreWire.held(name, owner, token).put("released", true));
    });
    action(SemaphoreWire.HEARTBEAT, body -> {
      String name = name(body);
      String owner = owner(body);
      FencingToken token = token(body);
      return store(() -> semaphores.heartbeat(name, owner, token))
          .andThen(ar -> {
            if (ar.succeeded()) {
              grants.put(key(name, owner), new Grant(name, owner, token));
            } else if (notHeld(ar.cause())) {
              grants.remove(key(name, owner), new Grant(name, owner, token));
            }
          })
          .map(v -> held(name, owner, token));
    });
    action(SemaphoreWire.STATE, body -> {
      String name = name(body);
      return store(() -> semaphores.state(name)).map(s -> state(name, s));
    });
    states = new StatePublisher<>(vertx, address, "semaphore", semaphores::observeVersions, SemaphoreVerticle::state,
        maxWatched, watchLease, workers);
    action(StatePublisher.WATCH, body -> states.watch(name(body), Requests.requiredString(body, "watcher")));
    action(StatePublisher.UNWATCH, body -> {
      String name = name(body);
      String watcher = Requests.requiredString(body, "watcher");
      return Future.succeededFuture(new JsonObject().put("name", name).put("watcher", watcher)
          .put("unwatched", states.unwatch(name, watcher)));
    });
    action(SemaphoreWire.ABANDON, body -> {
      String name = name(body);
      String owner = owner(body);
      return waits.end(name, owner, FailureCodes.failure(FailureCodes.CONFLICT, "abandoned",
              "the acquire of semaphore '" + name + "' by '" + owner + "' was abandoned by its requester"))
          .map(n -> new JsonObject().put("name", name).put("owner", owner).put("abandoned", n));
    });
  }

  /** A {@code state} reply, and the {@code state} of a published change. */
  private static JsonObject state(String name, SemaphoreService.SemaphoreState s) {
    JsonArray holders = new JsonArray();
    s.holders().forEach(h -> holders.add(SemaphoreWire.holder(h.owner(), h.token())));
    return new JsonObject().put("name", name).put("permits", s.permits()).put("holders", holders)
        .put("waiters", new JsonArray(new ArrayList<>(s.waiters())));
  }

  /**
   * Publishes the state changes of at most {@code maxWatched} semaphores, a watch lasting {@code watchLease} unless
   * renewed ({@link StatePublisher}); set before the verticle starts.
   */
  public SemaphoreVerticle publishing(int maxWatched, Duration watchLease) {
    this.maxWatched = maxWatched;
    this.watchLease = watchLease;
    return this;
  }

  /**
   * Waits for a permit through the layer without heartbeats (the remote holder heartbeats), remembering the grant
   * for the release at stop.
   */
  private Future<FencingToken> awaitGrant(String name, int permits, String owner, Duration timeout, String liveness) {
    if (stopping) {
      return Future.failedFuture(FailureCodes.failure(FailureKind.CLOSED, "the service on this node is stopping"));
    }
    return store(() -> {
      CompletableFuture<FencingToken> granted = waits.track(
          RequesterWaits.Wait.of(semaphores.awaitGrant(name, permits, owner, timeout)), liveness);
      if (stopping) {
        waits.endAll(SemaphoreVerticle::closing); // stop() may have swept the waits before this one was tracked
      }
      return granted;
    }).andThen(ar -> {
      if (ar.succeeded()) {
        grants.put(key(name, owner), new Grant(name, owner, ar.result()));
      }
    });
  }

  /**
   * Releases a grant the store made after its requester was told the acquire failed ({@code store_unavailable}):
   * nobody holds a permit it was never told of.
   */
  private void withdraw(String name, String owner, FencingToken token) {
    grants.remove(key(name, owner), new Grant(name, owner, token));
    store(() -> semaphores.release(name, owner, token)).onFailure(e -> LOG.warn("could not release the late grant "
        + token + " of '" + owner + "' for semaphore '" + name + "' (its requester was told the store did not"
        + " answer): " + FdbErrors.unwrap(e)));
  }

  /** The {@code timeoutMs} of an acquire, at most the service's maximum (the default). */
  private Duration acquireTimeout(JsonObject body) {
    Long ms = Requests.optionalLong(body, "timeoutMs", 0, maxAcquireTimeout.toMillis());
    return ms == null ? maxAcquireTimeout : Duration.ofMillis(ms);
  }

  /** What an acquire may take beyond its wait: the transaction that leaves the queue (or finds the grant). */
  private Duration afterWait() {
    Duration slack = Duration.ofSeconds(2);
    return slack.compareTo(requestTimeout()) < 0 ? slack : requestTimeout();
  }

  /** Ends every wait (503 closed) and releases the grants obtained through this verticle. */
  @Override
  public Future<?> stop() {
    stopping = true;
    vertx.cancelTimer(livenessTimer);
    if (states != null) {
      states.close();
    }
    return waits.endAll(SemaphoreVerticle::closing).transform(x -> releaseHeld());
  }

  private static ReplyException closing(RequesterWaits.Wait<?> w) {
    return FailureCodes.failure(FailureKind.CLOSED, "the service on this node is stopping: '" + w.owner()
        + "' left the queue of semaphore '" + w.name() + "'");
  }

  private Future<?> releaseHeld() {
    List<Grant> held = new ArrayList<>(grants.values());
    grants.clear();
    List<Future<?>> releases = new ArrayList<>();
    long bound = requestTimeout().toMillis();
    for (Grant g : held) {
      // Bounded like a request: a stop during a store outage must not outlast a deployment's grace period.
      releases.add(store(() -> semaphores.release(g.name(), g.owner(), g.token()))
          .timeout(bound, TimeUnit.MILLISECONDS)
          .onFailure(e -> LOG.warn("could not release the permit of semaphore '" + g.name() + "' held by '"
              + g.owner() + "' before stopping (" + FdbErrors.unwrap(e) + "); its lease of "
              + semaphores.options().lease().toMillis() + " ms ends it")));
    }
    return Future.join(releases).transform(ar -> super.stop());
  }

  /** How many grants obtained through this verticle are believed held. */
  public int heldCount() {
    return grants.size();
  }

  /** A holder's reply: the lease travels with the grant (the holder heartbeats within it). */
  private JsonObject held(String name, String owner, FencingToken token) {
    return SemaphoreWire.held(name, owner, token).put("leaseMs", semaphores.options().lease().toMillis());
  }

  private static boolean notHeld(Throwable e) {
    return FdbErrors.unwrap(e) instanceof SemaphoreException s && s.kind() == SemaphoreException.Kind.NOT_HELD;
  }

  private static String key(String name, String owner) {
    return name + '\0' + owner;
  }

  private static String name(JsonObject body) {
    return Requests.mutexName(body, "name");
  }

  private static String owner(JsonObject body) {
    return Requests.mutexName(body, "owner");
  }

  private static int permits(JsonObject body) {
    Long permits = Requests.optionalLong(body, "permits", 1, SemaphoreService.MAX_PERMITS);
    if (permits == null) {
      throw FailureCodes.badRequest("field 'permits' is missing: expected the semaphore's number of permits (1 to "
          + SemaphoreService.MAX_PERMITS + ", the same for every user of the semaphore)");
    }
    return permits.intValue();
  }

  private static FencingToken token(JsonObject body) {
    FencingToken token = Requests.optionalToken(body, "token");
    if (token == null) {
      throw FailureCodes.badRequest("field 'token' is missing: expected the grant's fencing token (20 hex digits, as"
          + " acquire answered)");
    }
    return token;
  }
}
