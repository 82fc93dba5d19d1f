package io.github.fdbcoord.service.eventbus;

import com.apple.foundationdb.tuple.Versionstamp;
import io.github.fdbcoord.api.FailureKind;
import io.github.fdbcoord.client.wire.ReadWriteLockWire;
import io.github.fdbcoord.fdb.FdbErrors;
import io.github.fdbcoord.rwlock.LockMode;
import io.github.fdbcoord.rwlock.ReadWriteGrant;
import io.github.fdbcoord.rwlock.ReadWriteLockException;
import io.github.fdbcoord.rwlock.ReadWriteLockService;
import io.github.fdbcoord.rwlock.ReadWriteLockState;
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
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The read-write lock on its address ({@code <prefix>.rwlock}). Actions: acquire, release, heartbeat, downgrade,
 * state, abandon, watch, unwatch (docs/vertx.md); the state changes of watched locks are published on
 * {@code <prefix>.rwlock.events.<name>} ({@link StatePublisher}).
 *
 * <p>As with the mutex ({@link MutexVerticle}), nothing heartbeats a grant for its remote holder: an acquire waits
 * through {@link ReadWriteLockService#awaitGrant}, which keeps the queue entry alive while the request waits and
 * hands the grant over bare; the holder calls {@code heartbeat} more often than the lease, or the reaper ends its
 * grant and lets the queue's head in. A wait ends when its requester abandons it (the HTTP routes send
 * {@code abandon} when a client disconnects), when the requester's node no longer answers at the request's
 * {@code liveness} address, and when this verticle stops; a grant that races the end is released by the layer. An
 * acquire answered {@code store_unavailable} whose grant comes later is released at once. On stop, the grants
 * obtained through this verticle and still held are released, so a stopping node hands its locks on at once.
 */
public final class ReadWriteLockVerticle extends LayerVerticle {
  private static final Logger LOG = LoggerFactory.getLogger(ReadWriteLockVerticle.class);
  private static final HexFormat HEX = HexFormat.of();

  private final ReadWriteLockService locks;
  private final Duration maxAcquireTimeout;
  /** Grants obtained through this verticle, "name\0owner" to grant: released on stop. */
  private final Map<String, ReadWriteGrant> grants = new ConcurrentHashMap<>();
  /** Acquires waiting through this verticle: ended on abandon, on their requester's departure and on stop. */
  private final RequesterWaits<ReadWriteGrant> waits = new RequesterWaits<>();
  private volatile boolean stopping;
  private long livenessTimer = -1;
  private int maxWatched = 1000;
  private Duration watchLease = Duration.ofSeconds(30);
  /** The state changes this node publishes (created on start: it needs Vert.x). */
  private StatePublisher<ReadWriteLockState> states;

  /** Serves {@code locks} on {@code address}; acquires wait at most {@code maxAcquireTimeout}. */
  public ReadWriteLockVerticle(String address, ReadWriteLockService locks, Duration maxAcquireTimeout,
      StoreWorkers workers, Metrics metrics) {
    super(address, workers, metrics);
    this.locks = locks;
    this.maxAcquireTimeout = maxAcquireTimeout;
  }

  /** Starts pinging waiting requesters, then serves the actions. */
  @Override
  public Future<?> start() {
    long interval = locks.options().heartbeatInterval().toMillis();
    livenessTimer = vertx.setPeriodic(interval, id -> waits.pingRequesters(vertx, Duration.ofMillis(Math.max(100, interval))));
    return listenForHandOffs(locks::recheck).compose(v -> super.start());
  }

  /**
   * The notifier to open the service's {@link ReadWriteLockService} with: publishes each grant it commits for a wait
   * on another node to the verticles serving {@code address}, as the mutex's hand-off hints are ({@link MutexVerticle}).
   */
  public static GrantNotifier grantNotifier(Vertx vertx, String address) {
    return (name, owner) -> publishHandOff(vertx, address, name, owner);
  }

  /** Registers the read-write lock actions (see the class comment). */
  @Override
  protected void registerActions() {
    action(ReadWriteLockWire.ACQUIRE, body -> {
      String name = name(body);
      String owner = owner(body);
      LockMode mode = mode(body);
      if (mode == null) {
        throw FailureCodes.badRequest("field 'mode' is missing: expected \"read\" or \"write\"");
      }
      Duration timeout = acquireTimeout(body);
      String liveness = Requests.optionalString(body, "liveness");
      return awaitGrant(name, owner, mode, timeout, liveness).map(this::held);
    }, body -> acquireTimeout(body).plus(afterWait()), (body, late) -> withdraw(grantOf(late)));
    action(ReadWriteLockWire.RELEASE, body -> {
      String name = name(body);
      String owner = owner(body);
      Versionstamp token = token(body);
      LockMode mode = mode(body);
      return current(name, owner, token, mode).compose(grant -> forgetWhenEnded(grant,
          store(() -> locks.release(grant)).map(v -> wire(grant).put("released", true))));
    });
    action(ReadWriteLockWire.HEARTBEAT, body -> {
      String name = name(body);
      String owner = owner(body);
      Versionstamp token = token(body);
      LockMode mode = mode(body);
      return current(name, owner, token, mode).compose(grant -> forgetWhenEnded(grant,
          store(() -> locks.heartbeat(grant)).map(this::held)));
    });
    action(ReadWriteLockWire.DOWNGRADE, body -> {
      String name = name(body);
      String owner = owner(body);
      Versionstamp token = token(body);
      LockMode mode = mode(body);
      return current(name, owner, token, mode).compose(grant -> forgetWhenEnded(grant,
          store(() -> locks.downgrade(grant)).map(this::held)));
    });
    action(ReadWriteLockWire.STATE, body -> {
      String name = name(body);
      return store(() -> locks.state(name)).map(ReadWriteLockVerticle::state);
    });
    states = new StatePublisher<>(vertx, address, "read-write lock", locks::observeVersions, (n, st) -> state(st),
        maxWatched, watchLease, workers);
    action(StatePublisher.WATCH, body -> states.watch(name(body), Requests.requiredString(body, "watcher")));
    action(StatePublisher.UNWATCH, body -> {
      String name = name(body);
      String watcher = Requests.requiredString(body, "watcher");
      return Future.succeededFuture(new JsonObject().put("name", name).put("watcher", watcher)
          .put("unwatched", states.unwatch(name, watcher)));
    });
    action(ReadWriteLockWire.ABANDON, body -> {
      String name = name(body);
      String owner = owner(body);
      return waits.end(name, owner, FailureCodes.failure(FailureCodes.CONFLICT, "abandoned",
          "the acquire of read-write lock '" + name + "' by '" + owner + "' was abandoned by its requester"))
          .map(ended -> new JsonObject().put("name", name).put("owner", owner).put("abandoned", ended));
    });
  }

  /**
   * Publishes the state changes of at most {@code maxWatched} locks, a watch lasting {@code watchLease} unless renewed
   * ({@link StatePublisher}); set before the verticle starts.
   */
  public ReadWriteLockVerticle publishing(int maxWatched, Duration watchLease) {
    this.maxWatched = maxWatched;
    this.watchLease = watchLease;
    return this;
  }

  private Future<ReadWriteGrant> awaitGrant(String name, String owner, LockMode mode, Duration timeout,
      String liveness) {
    if (stopping) {
      return Future.failedFuture(FailureCodes.failure(FailureKind.CLOSED, "the service on this node is stopping"));
    }
    return store(() -> {
      CompletableFuture<ReadWriteGrant> wait = locks.awaitGrant(name, owner, mode, timeout);
      CompletableFuture<ReadWriteGrant> granted = waits.track(
          RequesterWaits.Wait.ofReadWriteLock(name, owner, wait, () -> locks.withdraw(wait)), liveness);
      if (stopping) {
        waits.endAll(ReadWriteLockVerticle::closing); // stop() may have swept the waits before this one was tracked
      }
      return granted;
    });
  }

  /**
   * The grant {@code owner} holds under {@code token}: in {@code mode} when the request gave it; otherwise the mode
   * is read from the lock's holders (a token names one grant, made in one mode), and a token no holder has is
   * NOT_HELD at once.
   */
  private Future<ReadWriteGrant> current(String name, String owner, Versionstamp token, LockMode mode) {
    if (mode != null) {
      return Future.succeededFuture(new ReadWriteGrant(name, owner, mode, token));
    }
    return store(() -> locks.state(name)).compose(state -> state.holders().stream()
        .filter(g -> g.owner().equals(owner) && g.token().equals(token)).findFirst()
        .map(Future::succeededFuture)
        .orElseGet(() -> Future.failedFuture(new ReadWriteLockException(ReadWriteLockException.Kind.NOT_HELD, name,
            "'" + owner + "' holds no grant of lock '" + name + "' under token " + hex(token)
                + " (released, expired after its lease, downgraded, or never granted)"))));
  }

  /**
   * {@code result} of an action on {@code grant}, remembering what it left held (released at stop) and forgetting
   * the grant once the layer answered it no longer holds.
   */
  private Future<JsonObject> forgetWhenEnded(ReadWriteGrant grant, Future<JsonObject> result) {
    String key = key(grant.lock(), grant.owner());
    return result.andThen(ar -> {
      if (ar.failed() && FdbErrors.unwrap(ar.cause()) instanceof ReadWriteLockException) {
        grants.remove(key, grant);
      } else if (ar.succeeded() && ar.result().containsKey("released")) {
        grants.remove(key, grant);
      }
    });
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

  /**
   * Releases a grant the store made after its requester was told the acquire failed ({@code store_unavailable}):
   * nobody holds a grant it was never told of. A late queue entry cannot happen: a wait that is answered has ended,
   * and the layer left the queue when it did.
   */
  private void withdraw(ReadWriteGrant late) {
    grants.remove(key(late.lock(), late.owner()), late);
    store(() -> locks.release(late)).onFailure(e -> LOG.warn("could not withdraw the late grant " + hex(late.token())
        + " of '" + late.owner() + "' for read-write lock '" + late.lock()
        + "' (its requester was told the store did not answer): " + FdbErrors.unwrap(e)));
  }

  /** Ends every wait (503 closed), releases the grants obtained through this verticle, then stops consuming. */
  @Override
  public Future<?> stop() {
    stopping = true;
    vertx.cancelTimer(livenessTimer);
    if (states != null) {
      states.close();
    }
    waits.endAll(ReadWriteLockVerticle::closing);
    List<ReadWriteGrant> held = new ArrayList<>(grants.values());
    grants.clear();
    List<Future<?>> releases = new ArrayList<>();
    for (ReadWriteGrant g : held) {
      // Bounded like a request: a stop during a store outage must not outlast a deployment's grace period (the
      // lease ends a grant this node could not release).
      releases.add(store(() -> locks.release(g)).timeout(requestTimeout().toMillis(), TimeUnit.MILLISECONDS)
          .onFailure(e -> LOG.warn("could not release read-write lock '" + g.lock() + "' held by '" + g.owner()
              + "' before stopping (" + FdbErrors.unwrap(e) + "); its lease of "
              + locks.options().lease().toMillis() + " ms ends it")));
    }
    return Future.join(releases).transform(ar -> super.stop());
  }

  private static ReplyException closing(RequesterWaits.Wait<?> w) {
    return FailureCodes.failure(FailureKind.CLOSED, "the service on this node is stopping: '" + w.owner()
        + "' left the queue of read-write lock '" + w.name() + "'");
  }

  /** How many grants obtained through this verticle are believed held. */
  public int heldCount() {
    return grants.size();
  }

  /** A grant's reply, remembered for the release at stop: the lease travels with it (the holder heartbeats within it). */
  private JsonObject held(ReadWriteGrant grant) {
    grants.put(key(grant.lock(), grant.owner()), grant);
    return wire(grant).put("leaseMs", locks.options().lease().toMillis());
  }

  private static JsonObject wire(ReadWriteGrant g) {
    return ReadWriteLockWire.grant(g.lock(), g.owner(), modeName(g.mode()), hex(g.token()));
  }

  private static ReadWriteGrant grantOf(JsonObject reply) {
    return new ReadWriteGrant(reply.getString("name"), reply.getString("owner"),
        ReadWriteLockWire.READ.equals(reply.getString("mode")) ? LockMode.READ : LockMode.WRITE,
        Versionstamp.fromBytes(HEX.parseHex(reply.getString("token"))));
  }

  private static JsonObject state(ReadWriteLockState s) {
    JsonArray holders = new JsonArray();
    for (ReadWriteGrant g : s.holders()) {
      holders.add(ReadWriteLockWire.holder(g.owner(), modeName(g.mode()), hex(g.token())));
    }
    JsonArray queue = new JsonArray();
    for (ReadWriteLockState.Request r : s.queue()) {
      queue.add(ReadWriteLockWire.waiter(r.owner(), modeName(r.mode())));
    }
    return new JsonObject().put("name", s.lock()).put("holders", holders).put("queue", queue);
  }

  private static String modeName(LockMode mode) {
    return mode == LockMode.READ ? ReadWriteLockWire.READ : ReadWriteLockWire.WRITE;
  }

  static String hex(Versionstamp token) {
    return HEX.formatHex(token.getBytes());
  }

  private static String key(String name, String owner) {
    return name + '\0' + owner;
  }

  private static String name(JsonObject body) {
    return nonBlankName(body, "name");
  }

  private static String owner(JsonObject body) {
    return nonBlankName(body, "owner");
  }

  /**
   * A lock or owner name by the layer's rules, and not only white space: such a name is a client's bug (an unset
   * variable padded, say) far more often than a choice, and invisible in logs and URLs.
   */
  private static String nonBlankName(JsonObject body, String field) {
    String name = Requests.mutexName(body, field);
    if (name.isBlank()) {
      throw FailureCodes.badRequest("field '" + field + "' must not be blank, got " + Requests.describe(name));
    }
    return name;
  }

  /** The optional {@code mode}: "read" or "write". */
  private static LockMode mode(JsonObject body) {
    String mode = Requests.optionalString(body, "mode");
    if (mode == null) {
      return null;
    }
    return switch (mode) {
      case ReadWriteLockWire.READ -> LockMode.READ;
      case ReadWriteLockWire.WRITE -> LockMode.WRITE;
      default -> throw FailureCodes.badRequest("field 'mode' must be \"read\" or \"write\", got "
          + Requests.describe(mode));
    };
  }

  /** The required {@code token}: a grant's versionstamp as {@link ReadWriteLockWire#TOKEN_HEX_LENGTH} hex digits. */
  private static Versionstamp token(JsonObject body) {
    String hex = Requests.optionalString(body, "token");
    if (hex == null) {
      throw FailureCodes.badRequest("field 'token' is missing: expected the grant's token ("
          + ReadWriteLockWire.TOKEN_HEX_LENGTH + " hex digits, as acquire answered)");
    }
    Versionstamp token = null;
    if (hex.length() == ReadWriteLockWire.TOKEN_HEX_LENGTH) {
      try {
        token = Versionstamp.fromBytes(HEX.parseHex(hex));
      } catch (IllegalArgumentException e) {
        token = null;
      }
    }
    if (token == null || !token.isComplete()) {
      throw FailureCodes.badRequest("field 'token' must be a grant's token (" + ReadWriteLockWire.TOKEN_HEX_LENGTH
          + " hex digits, as acquire answered), got " + Requests.describe(hex));
    }
    return token;
  }
}
