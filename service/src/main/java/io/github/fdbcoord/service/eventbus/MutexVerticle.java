package io.github.fdbcoord.service.eventbus;

import com.apple.foundationdb.tuple.Versionstamp;
import io.github.fdbcoord.api.FailureKind;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.api.MutexOwner;
import io.github.fdbcoord.client.CoordinationClient;
import io.github.fdbcoord.client.wire.MutexWire;
import io.github.fdbcoord.fdb.FdbErrors;
import io.github.fdbcoord.mutex.AcquireResult;
import io.github.fdbcoord.mutex.HandOffNotifier;
import io.github.fdbcoord.mutex.MutexException;
import io.github.fdbcoord.mutex.MutexService;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The distributed mutex on its address ({@code <prefix>.mutex}). Actions: tryAcquire, acquire, acquireAll,
 * release, releaseAll, heartbeat, abandon, leave, state, inspect, held, watch, unwatch, position.
 *
 * <p>A holder that acquired through this verticle must heartbeat (action heartbeat) more often than
 * the lease: nothing heartbeats on its behalf, so a holder that goes away loses the mutex to the
 * reaper after its lease. On stop, the grants obtained through this verticle that are still held
 * are released, so a stopping node hands its locks on at once.
 *
 * <p>An acquire waits through the mutex layer ({@link MutexService#awaitGrant}), which keeps its
 * queue entry alive as long as the request waits; {@code abandon} ends a wait whose requester went
 * away (the HTTP verticle sends it when a client disconnects), and so does a requester whose node no
 * longer answers at its liveness address. A {@code heartbeat} without token from an owner that
 * only waits keeps its queue entry alive.
 *
 * <p>{@code acquireAll} waits for several mutexes at once, all or none ({@link MutexService#awaitAllGrants}), with
 * the same requester liveness, abandon (naming any of its mutexes), bounds and late-grant withdrawal as an acquire;
 * its grants are then ordinary grants, each heartbeated (and releasable) by name, or released together by
 * {@code releaseAll}.
 *
 * <p>Lock events of a watched mutex are published on {@code <prefix>.mutex.events.<name>}; a mutex
 * is watched after a {@code watch} request (the WebSocket and {@link CoordinationClient#lockEvents}
 * send one). Events come from the mutex's event log in the store, so they include transitions made
 * by other processes and by the reaper ({@link MutexEventPublisher}).
 *
 * <p>Hand-off hints: the service's {@link MutexService} is opened with {@link #handOffNotifier}, so
 * each hand-off this node commits is published on {@code <address>.hand-off} as {@code {name, owner}};
 * every node's verticle listens there and has its own service read the mutex again when one of its
 * acquires waits for that owner ({@link MutexService#recheck}). An owner names no node, so the hint
 * goes to every node, each filtering by its local waits: one message per node and hand-off, against
 * a per-mutex address whose registration would cost a store commit per waited mutex. The waiter
 * learns of its grant about a millisecond after the commit instead of when its watch fires; a hint
 * grants nothing, and a lost one leaves the hand-off to the watch.
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
  private long livenessTimer = -1;
  /** Acquires waiting through this verticle: ended on abandon, on their requester's departure and on stop. */
  private final RequesterWaits<FencingToken> waits = new RequesterWaits<>();
  /** The same for acquireAll's waits, each for several mutexes. */
  private final RequesterWaits<Map<String, FencingToken>> multiWaits = new RequesterWaits<>();
  private volatile boolean stopping;
  /** The grants ("name" held by "owner") the stop could not release: their leases end them. */
  private final List<String> unreleasedAtStop = new CopyOnWriteArrayList<>();

  private record Grant(String name, String owner, FencingToken token) {}

  /**
   * Serves {@code mutexes} on {@code address} and publishes lock events under {@code addressPrefix}:
   * acquires wait at most {@code maxAcquireTimeout}, at most {@code maxWatched} mutexes are watched at once, and a
   * watch lasts {@code watchLease} unless renewed.
   */
  public MutexVerticle(String address, String addressPrefix, MutexService mutexes, Duration maxAcquireTimeout,
      int maxWatched, Duration watchLease, StoreWorkers workers, Metrics metrics) {
    super(address, workers, metrics);
    this.addressPrefix = addressPrefix;
    this.mutexes = mutexes;
    this.maxAcquireTimeout = maxAcquireTimeout;
    this.maxWatched = maxWatched;
    this.watchLease = watchLease;
  }

  /** Starts pinging waiting requesters and sweeping expired watches, then serves the actions. */
  @Override
  public Future<?> start() {
    Duration pingTimeout = Duration.ofMillis(Math.max(100, mutexes.options().heartbeatInterval().toMillis()));
    livenessTimer = vertx.setPeriodic(mutexes.options().heartbeatInterval().toMillis(), id -> {
      waits.pingRequesters(vertx, pingTimeout);
      multiWaits.pingRequesters(vertx, pingTimeout);
    });
    events = new MutexEventPublisher(vertx, addressPrefix, mutexes, maxWatched, watchLease, workers, metrics);
    return listenForHandOffs(mutexes::recheck).compose(v -> super.start());
  }

  /**
   * The notifier to open the service's {@link MutexService} with: publishes each hand-off it commits
   * to the verticles serving {@code address} on every node (see the class comment).
   */
  public static HandOffNotifier handOffNotifier(Vertx vertx, String address) {
    return (name, owner, token) -> publishHandOff(vertx, address, name, owner);
  }

  /** Registers the mutex actions (see the class comment). */
  @Override
  protected void registerActions() {
    action(MutexWire.TRY_ACQUIRE, body -> {
      String name = name(body);
      String owner = owner(body);
      return store(() -> mutexes.tryAcquire(name, owner)).map(r -> acquired(name, owner, r));
    }, body -> requestTimeout(), this::withdraw);
    action(MutexWire.ACQUIRE, body -> {
      String name = name(body);
      String owner = owner(body);
      return acquire(name, owner, acquireTimeout(body), Requests.optionalString(body, "liveness"));
    }, body -> acquireTimeout(body).plus(afterWait()), this::withdraw);
    action(MutexWire.ACQUIRE_ALL, body -> {
      List<String> names = names(body);
      String owner = owner(body);
      return acquireAll(names, owner, acquireTimeout(body), Requests.optionalString(body, "liveness"));
    }, body -> acquireTimeout(body).plus(afterWait()), (body, late) -> withdrawAll(late));
    action(MutexWire.RELEASE_ALL, body -> {
      String owner = owner(body);
      Map<String, FencingToken> tokens = grantTokens(body);
      return releaseAll(tokens, owner).map(events -> new JsonObject().put("owner", owner)
          .put("events", new JsonArray(events.stream().map(MutexWire::event).toList())));
    });
    action(MutexWire.RELEASE, body -> {
      String name = name(body);
      String owner = owner(body);
      return release(name, owner, Requests.optionalToken(body, "token")).map(MutexWire::event);
    });
    action(MutexWire.HEARTBEAT, body -> {
      String name = name(body);
      String owner = owner(body);
      FencingToken token = Requests.optionalToken(body, "token");
      Future<JsonObject> beat = heartbeat(name, owner, token)
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
      String owner = owner(body);
      if (body.getValue("names") != null) {
        // An acquireAll's requester names its set (the HTTP verticle does when its client disconnects).
        List<String> names = names(body);
        return abandon(names, owner).map(n -> new JsonObject().put("names", new JsonArray(names)).put("owner", owner)
            .put("abandoned", n));
      }
      String name = name(body);
      return abandon(name, owner).map(n -> new JsonObject().put("name", name).put("owner", owner).put("abandoned", n));
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
      return store(() -> mutexes.inspect(name)).map(MutexWire::inspection);
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
      FencingToken after = Requests.optionalToken(body, "after");
      FencingToken since = Requests.optionalToken(body, "since");
      if (after != null && since != null) {
        throw FailureCodes.badRequest("give 'after' (an event's sequence) or 'since' (a position), not both");
      }
      return events.watch(name, watcher == null ? "" : watcher, after, since);
    });
    action(MutexWire.POSITION, body -> store(mutexes::currentPosition)
        .map(p -> new JsonObject().put("position", p.toString())));
  }

  /**
   * Releases {@code owner}'s grant of {@code name} (with {@code token}: that grant only) and forgets it here once
   * the layer answered that it is no longer held. The election's {@code resign} is this release.
   */
  Future<LockEvent> release(String name, String owner, FencingToken token) {
    return store(() -> token == null ? mutexes.release(name, owner) : mutexes.release(name, owner, token))
        .andThen(ar -> {
          if (ar.succeeded() || FdbErrors.unwrap(ar.cause()) instanceof MutexException) {
            grants.remove(key(name, owner));
          }
        });
  }

  /**
   * Hands {@code owner}'s grant {@code token} of {@code name} over to the waiter {@code successor}
   * ({@link MutexService#releaseTo}) and forgets it here once it ended; a successor that does not wait leaves the
   * grant held (and remembered). The election's {@code handover} is this.
   */
  Future<LockEvent> releaseTo(String name, String owner, FencingToken token, String successor) {
    return store(() -> mutexes.releaseTo(name, owner, token, successor)).andThen(ar -> {
      if (ar.succeeded() || FdbErrors.unwrap(ar.cause()) instanceof MutexException refusal
          && refusal.kind() != MutexException.Kind.NOT_QUEUED) {
        grants.remove(key(name, owner));
      }
    });
  }

  /**
   * Heartbeats {@code owner}'s grant of {@code name} for its remote holder (with {@code token}: that grant only),
   * remembering it for the release at stop, or forgetting it when the layer refuses. The election's leader
   * heartbeats through this too.
   */
  Future<MutexOwner> heartbeat(String name, String owner, FencingToken token) {
    return store(() -> token == null ? mutexes.heartbeat(name, owner) : mutexes.heartbeat(name, owner, token))
        .andThen(ar -> {
          if (ar.succeeded()) {
            grants.put(key(name, owner), new Grant(name, owner, ar.result().token()));
          } else if (FdbErrors.unwrap(ar.cause()) instanceof MutexException) {
            grants.remove(key(name, owner));
          }
        });
  }

  /**
   * Ends the acquires of {@code owner} for {@code name} waiting on this node, and its acquireAll waits that include
   * {@code name} (409 abandoned); how many.
   */
  Future<Integer> abandon(String name, String owner) {
    return abandon(List.of(name), owner);
  }

  private Future<Integer> abandon(List<String> names, String owner) {
    ReplyException why = FailureCodes.failure(FailureCodes.CONFLICT, "abandoned",
        "the acquire of mutex" + (names.size() == 1 ? " '" + names.get(0) + "'" : "es " + names) + " by '" + owner
            + "' was abandoned by its requester");
    return Future.all(waits.end(names, owner, why), multiWaits.end(names, owner, why))
        .map(all -> all.<Integer>resultAt(0) + all.<Integer>resultAt(1));
  }

  /**
   * Waits for every mutex of {@code names} through the layer ({@link MutexService#awaitAllGrants}): all or none, the
   * queue entries and early grants kept alive by the layer while it waits, every grant handed over without
   * heartbeats (the remote holder heartbeats each) and remembered here (released at stop).
   */
  private Future<JsonObject> acquireAll(List<String> names, String owner, Duration timeout, String liveness) {
    if (stopping) {
      return Future.failedFuture(FailureCodes.failure(FailureKind.CLOSED, "the service on this node is stopping"));
    }
    return store(() -> {
      CompletableFuture<Map<String, FencingToken>> granted =
          multiWaits.track(RequesterWaits.Wait.of(mutexes.awaitAllGrants(names, owner, timeout)), liveness);
      if (stopping) {
        multiWaits.endAll(MutexVerticle::closing); // stop() may have swept the waits before this one was tracked
      }
      return granted;
    }).map(tokens -> {
      JsonArray held = new JsonArray();
      tokens.forEach((name, token) -> {
        grants.put(key(name, owner), new Grant(name, owner, token));
        held.add(new JsonObject().put("name", name).put("token", token.toString()));
      });
      return new JsonObject().put("owner", owner).put("held", true).put("grants", held)
          .put("leaseMs", mutexes.options().lease().toMillis());
    });
  }

  /** Releases {@code owner}'s grants {@code tokens} in one transaction, forgetting them here once they ended. */
  private Future<List<LockEvent>> releaseAll(Map<String, FencingToken> tokens, String owner) {
    return store(() -> mutexes.releaseAll(tokens, owner)).andThen(ar -> {
      if (ar.succeeded()) {
        tokens.keySet().forEach(name -> grants.remove(key(name, owner)));
      }
    });
  }

  /** Undoes an acquireAll answered after its requester was told it failed: its grants are released at once. */
  private void withdrawAll(JsonObject late) {
    String owner = late.getString("owner");
    Map<String, FencingToken> tokens = grantTokens(late);
    releaseAll(tokens, owner).onFailure(e -> LOG.warn("could not withdraw the late grants " + tokens.keySet()
        + " of '" + owner + "' (its requester was told the store did not answer): " + FdbErrors.unwrap(e)));
  }

  /** The {@code grants} of a releaseAll (or an acquireAll's reply), {@code [{name, token}]}, by mutex name. */
  private static Map<String, FencingToken> grantTokens(JsonObject body) {
    List<Object> raw = Requests.requiredList(body, "grants", MutexService.MAX_NAMES_PER_CALL);
    if (raw.isEmpty()) {
      throw FailureCodes.badRequest("field 'grants' is empty: expected at least one {name, token}");
    }
    Map<String, FencingToken> tokens = new LinkedHashMap<>();
    for (int i = 0; i < raw.size(); i++) {
      if (!(raw.get(i) instanceof JsonObject grant)) {
        throw FailureCodes.badRequest("field 'grants' item " + i + " must be an object {name, token}, got "
            + Requests.describe(raw.get(i)));
      }
      String name = Requests.mutexName(grant, "name");
      FencingToken token = Requests.optionalToken(grant, "token");
      if (token == null) {
        throw FailureCodes.badRequest("field 'grants' item " + i + ": field 'token' is missing: expected the grant's"
            + " fencing token");
      }
      tokens.put(name, token);
    }
    return tokens;
  }

  private Future<JsonObject> acquire(String name, String owner, Duration timeout, String liveness) {
    return awaitGrant(name, owner, timeout, liveness).map(token -> held(name, owner, token));
  }

  /**
   * Waits for the grant through the layer ({@link MutexService#awaitGrant}), which keeps the queue
   * entry alive and leaves in one transaction on timeout or cancellation; the grant is handed over
   * without heartbeats (the remote holder heartbeats), and remembered here (released at stop). The
   * election's {@code campaign} waits through this too, so its waits are ended, pinged and swept like an
   * acquire's.
   */
  Future<FencingToken> awaitGrant(String name, String owner, Duration timeout, String liveness) {
    if (stopping) {
      return Future.failedFuture(FailureCodes.failure(FailureKind.CLOSED,
          "the service on this node is stopping"));
    }
    return store(() -> {
      CompletableFuture<FencingToken> granted = waits.track(RequesterWaits.Wait.of(mutexes.awaitGrant(name, owner, timeout)), liveness);
      if (stopping) {
        waits.endAll(MutexVerticle::closing); // stop() may have swept the waits before this one was tracked
      }
      return granted;
    }).andThen(ar -> {
      if (ar.succeeded()) {
        grants.put(key(name, owner), new Grant(name, owner, ar.result()));
      }
    });
  }

  /** The {@code timeoutMs} of an acquire (or campaign) request, at most the service's maximum (the default). */
  Duration acquireTimeout(JsonObject body) {
    Long ms = Requests.optionalLong(body, "timeoutMs", 0, maxAcquireTimeout.toMillis());
    return ms == null ? maxAcquireTimeout : Duration.ofMillis(ms);
  }

  /**
   * What an acquire may take beyond its wait before it is answered {@code store_unavailable}: the
   * transaction that leaves the queue (or finds the grant) when the wait ends.
   */
  Duration afterWait() {
    Duration slack = Duration.ofSeconds(2);
    return slack.compareTo(requestTimeout()) < 0 ? slack : requestTimeout();
  }

  /**
   * Undoes an acquire or tryAcquire that the store answered after its requester was told it failed
   * ({@code store_unavailable}): a grant is released at once (its next waiter gets the mutex), a
   * queue entry leaves the queue. Nobody holds a grant it was never told of, nor waits in its place.
   */
  private void withdraw(JsonObject body, JsonObject late) {
    withdraw(body.getString("name"), body.getString("owner"),
        MutexWire.isHeld(late) ? FencingToken.parse(late.getString("token")) : null);
  }

  /**
   * Undoes a late acquire of {@code name} by {@code owner} (see {@link #withdraw(JsonObject, JsonObject)}):
   * {@code token} is the grant it got, or null when it only queued. The election's late campaign is undone so.
   */
  void withdraw(String name, String owner, FencingToken token) {
    Future<?> undone;
    if (token != null) {
      grants.remove(key(name, owner), new Grant(name, owner, token));
      undone = store(() -> mutexes.release(name, owner, token));
    } else {
      // Granted between the late answer and this leave, the owner is no longer queued: its grant goes too.
      undone = store(() -> mutexes.leave(name, owner)).compose(waited -> waited ? Future.succeededFuture()
          : store(() -> mutexes.release(name, owner)).recover(e -> FdbErrors.unwrap(e) instanceof MutexException
              ? Future.succeededFuture() : Future.failedFuture(e)));
    }
    undone.onComplete(ar -> {
      Throwable e = ar.cause();
      if (e != null) {
        LOG.warn("could not withdraw the late " + (token == null ? "queue entry" : "grant " + token) + " of '"
            + owner + "' for mutex '" + name
            + "' (its requester was told the store did not answer): " + FdbErrors.unwrap(e));
      }
    });
  }

  /** Ends every wait (503 closed), releases the grants obtained through this verticle and ends the watches. */
  @Override
  public Future<?> stop() {
    stopping = true;
    vertx.cancelTimer(livenessTimer);
    return Future.join(waits.endAll(MutexVerticle::closing), multiWaits.endAll(MutexVerticle::closing))
        .transform(x -> releaseHeld());
  }

  private static ReplyException closing(RequesterWaits.Wait<?> w) {
    return FailureCodes.failure(FailureKind.CLOSED, "the service on this node is stopping: '"
        + w.owner() + "' left the queue of " + w.layer() + " '" + w.name() + "'");
  }

  private Future<?> releaseHeld() {
    List<Grant> held = new ArrayList<>(grants.values());
    grants.clear();
    List<Future<?>> releases = new ArrayList<>();
    long bound = requestTimeout().toMillis();
    for (Grant g : held) {
      // Bounded like a request: a stop during a store outage must not outlast a deployment's grace
      // period (the lease ends a grant this node could not release).
      releases.add(store(() -> mutexes.release(g.name(), g.owner(), g.token()))
          .timeout(bound, TimeUnit.MILLISECONDS)
          .onFailure(e -> {
            unreleasedAtStop.add("'" + g.name() + "' held by '" + g.owner() + "'");
            LOG.warn("could not release mutex '" + g.name() + "' held by '" + g.owner()
                + "' before stopping (" + FdbErrors.unwrap(e) + "); its lease of "
                + mutexes.options().lease().toMillis() + " ms ends it");
          }));
    }
    return Future.join(releases).transform(ar -> {
      events.close();
      return super.stop();
    });
  }

  /**
   * The grants the stop could not release within the request timeout (the store did not answer),
   * as "'name' held by 'owner'": a process that exits after its stop reports them, since logging may
   * already be shut down then.
   */
  public List<String> unreleasedAtStop() {
    return List.copyOf(unreleasedAtStop);
  }

  /** How many mutexes this node publishes the events of. */
  public int watchedCount() {
    return events.count();
  }

  /** How many grants obtained through this verticle are believed held. */
  public int heldCount() {
    return grants.size();
  }

  private JsonObject acquired(String name, String owner, AcquireResult r) {
    if (r.isHeld()) {
      return held(name, owner, r.token().get());
    }
    return MutexWire.queued(name, owner, r.position(), r.ticket().map(Versionstamp::getBytes).orElse(null));
  }

  /** How long a holder has between heartbeats ({@code mutex.leaseMs}). */
  Duration lease() {
    return mutexes.options().lease();
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
    return Requests.mutexName(body, "name");
  }

  private static String owner(JsonObject body) {
    return Requests.mutexName(body, "owner");
  }

  /**
   * The {@code names} of an acquireAll or abandon: a non-empty array of mutex names, duplicates counting once, at most
   * {@link MutexService#MAX_NAMES_PER_CALL} distinct ones.
   */
  private static List<String> names(JsonObject body) {
    List<String> raw = Requests.requiredStrings(body, "names", 10 * MutexService.MAX_NAMES_PER_CALL);
    if (raw.isEmpty()) {
      throw FailureCodes.badRequest("field 'names' is empty: expected at least one mutex name");
    }
    Set<String> names = new LinkedHashSet<>();
    for (int i = 0; i < raw.size(); i++) {
      try {
        names.add(MutexService.checkName(raw.get(i), "field 'names' item " + i));
      } catch (IllegalArgumentException e) {
        throw FailureCodes.badRequest(e.getMessage());
      }
    }
    if (names.size() > MutexService.MAX_NAMES_PER_CALL) {
      throw FailureCodes.badRequest("field 'names' has " + names.size() + " distinct mutexes, at most "
          + MutexService.MAX_NAMES_PER_CALL + " are allowed per request");
    }
    return List.copyOf(names);
  }
}
