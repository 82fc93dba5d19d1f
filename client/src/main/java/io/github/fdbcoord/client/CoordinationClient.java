package io.github.fdbcoord.client;

import io.github.fdbcoord.api.DirectoryInfo;
import io.github.fdbcoord.api.DirectoryPage;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.InternedPage;
import io.github.fdbcoord.api.InternerStats;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.api.MutexInspection;
import io.github.fdbcoord.api.MutexOwner;
import io.github.fdbcoord.client.wire.AllocatorWire;
import io.github.fdbcoord.client.wire.DirectoryWire;
import io.github.fdbcoord.client.wire.InternerWire;
import io.github.fdbcoord.client.wire.MutexWire;
import io.github.fdbcoord.client.wire.WireProtocol;
import io.github.fdbcoord.api.MutexState;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.internal.ContextInternal;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.UUID;
import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;

/**
 * Typed access to the coordination service over the event bus, for verticles on any node of the
 * cluster: each method sends one request and completes, on the caller's context, with the reply
 * or with a {@link io.vertx.core.eventbus.ReplyException} carrying one of the failure codes of docs/vertx.md (400, 404, 409, 503).
 *
 * <pre>
 * CoordinationClient client = CoordinationClient.create(vertx);      // prefix "fdb"
 * client.intern("uris", List.of("a", "b")).onSuccess(ids -> ...);
 * client.acquire("jobs", "worker-1", Duration.ofSeconds(5)).onSuccess(grant -> ...);
 * client.elections().lead("billing").onSuccess(leadership -> ...);
 * </pre>
 *
 * <p>The election, the semaphore and the read-write lock are reached through {@link #elections()},
 * {@link #semaphores()} and {@link #readWriteLocks()}, which share this client's timeouts and liveness address.
 */
public final class CoordinationClient {
  /** The header that names a request's action; the body carries its arguments. */
  public static final String ACTION_HEADER = WireProtocol.ACTION_HEADER;

  /**
   * Failure code of a request that got no reply in time (reason {@code no_reply}) or found nothing
   * serving its address (reason {@code no_handlers}): the node serving it died, stopped or is cut
   * off. The {@link io.vertx.core.eventbus.ReplyException} keeps Vert.x's failure type (TIMEOUT,
   * NO_HANDLERS); its {@code failureCode()} is this. A request without reply may or may not have
   * taken effect.
   */
  public static final int HOST_UNAVAILABLE = WireProtocol.UNAVAILABLE;
  /** Default limit of a request without a wait of its own: a store transaction's 5 s plus a margin. */
  public static final Duration DEFAULT_SEND_TIMEOUT = Duration.ofSeconds(10);
  /** Default margin beyond a request's own wait (acquire's timeout) before it fails with {@link #HOST_UNAVAILABLE}. */
  public static final Duration DEFAULT_REPLY_GRACE = Duration.ofSeconds(5);
  private static final Logger LOG = LoggerFactory.getLogger(CoordinationClient.class);

  private final Vertx vertx;
  private final String prefix;
  private final long sendTimeoutMs;
  private final long replyGraceMs;
  /** Shared with the copies {@link #withSendTimeout} and {@link #withReplyGrace} make. */
  private final LivenessEndpoint liveness;
  private final ElectionClient elections;
  private final SemaphoreClient semaphores;
  private final ReadWriteLockClient readWriteLocks;

  private CoordinationClient(Vertx vertx, String prefix, long sendTimeoutMs, long replyGraceMs,
      LivenessEndpoint liveness) {
    this.vertx = vertx;
    this.prefix = prefix;
    this.sendTimeoutMs = sendTimeoutMs;
    this.replyGraceMs = replyGraceMs;
    this.liveness = liveness;
    // After the fields above: each takes its address from this client's prefix.
    this.elections = new ElectionClient(this);
    this.semaphores = new SemaphoreClient(this);
    this.readWriteLocks = new ReadWriteLockClient(this);
  }

  /** Leader election ({@code <prefix>.election}) through this client: its send timeout, grace and liveness. */
  public ElectionClient elections() {
    return elections;
  }

  /** The fenced semaphore ({@code <prefix>.semaphore}) through this client: its send timeout, grace and liveness. */
  public SemaphoreClient semaphores() {
    return semaphores;
  }

  /** The read-write lock ({@code <prefix>.rwlock}) through this client: its send timeout, grace and liveness. */
  public ReadWriteLockClient readWriteLocks() {
    return readWriteLocks;
  }

  Vertx vertx() {
    return vertx;
  }

  String prefix() {
    return prefix;
  }

  /** A client of the service under the default address prefix "fdb". */
  public static CoordinationClient create(Vertx vertx) {
    return create(vertx, WireProtocol.DEFAULT_PREFIX);
  }

  /** A client of the service whose addresses start with {@code addressPrefix} (its config "addressPrefix"). */
  public static CoordinationClient create(Vertx vertx, String addressPrefix) {
    Objects.requireNonNull(vertx, "vertx");
    Objects.requireNonNull(addressPrefix, "addressPrefix");
    return new CoordinationClient(vertx, addressPrefix, DEFAULT_SEND_TIMEOUT.toMillis(), DEFAULT_REPLY_GRACE.toMillis(),
        new LivenessEndpoint(vertx, addressPrefix));
  }

  /** The same client with another limit for requests that have no wait of their own (default 10 s). */
  public CoordinationClient withSendTimeout(Duration timeout) {
    return new CoordinationClient(vertx, prefix, positive(timeout, "send timeout"), replyGraceMs, liveness);
  }

  /**
   * The same client with another margin beyond a request's own wait (default 5 s): an
   * {@link #acquire} with timeout {@code t} fails with {@link #HOST_UNAVAILABLE} when no reply came
   * within {@code t + grace} (the serving node died, or is cut off).
   */
  public CoordinationClient withReplyGrace(Duration grace) {
    return new CoordinationClient(vertx, prefix, sendTimeoutMs, positive(grace, "reply grace"), liveness);
  }

  private static long positive(Duration d, String what) {
    if (d == null || d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(what + " must be positive, got " + d);
    }
    return d.toMillis();
  }

  /** The directory layer's address. */
  public String directoryAddress() {
    return WireProtocol.directoryAddress(prefix);
  }

  /** The allocator's address. */
  public String allocatorAddress() {
    return WireProtocol.allocatorAddress(prefix);
  }

  /** The interner's address. */
  public String internerAddress() {
    return WireProtocol.internerAddress(prefix);
  }

  /** The mutex's address. */
  public String mutexAddress() {
    return WireProtocol.mutexAddress(prefix);
  }

  /** The leader-election address this client talks to ({@code <prefix>.election}). */
  public String electionAddress() {
    return WireProtocol.electionAddress(prefix);
  }

  /** The fenced semaphore's address ({@code <prefix>.semaphore}). */
  public String semaphoreAddress() {
    return WireProtocol.semaphoreAddress(prefix);
  }

  /** The read-write lock's address ({@code <prefix>.rwlock}). */
  public String readWriteLockAddress() {
    return WireProtocol.readWriteLockAddress(prefix);
  }

  /** Sends {@code action} with {@code body} to {@code address}: the untyped form of every method here. */
  public Future<JsonObject> request(String address, String action, JsonObject body) {
    return request(address, action, body, sendTimeoutMs);
  }

  /**
   * Sends {@code action} with {@code body} to {@code address} and waits at most {@code timeoutMs} for
   * the reply; a timeout or a missing handler fails with {@link #HOST_UNAVAILABLE}.
   */
  public Future<JsonObject> request(String address, String action, JsonObject body, long timeoutMs) {
    DeliveryOptions options = new DeliveryOptions().addHeader(ACTION_HEADER, action).setSendTimeout(timeoutMs);
    return vertx.eventBus().<JsonObject>request(address, body, options).map(m -> m.body())
        .recover(e -> Future.failedFuture(hostFailure(e, address, action, timeoutMs)));
  }

  /** Vert.x's TIMEOUT and NO_HANDLERS as the documented {@link #HOST_UNAVAILABLE} failures. */
  private static Throwable hostFailure(Throwable e, String address, String action, long timeoutMs) {
    if (!(e instanceof ReplyException)) {
      return e;
    }
    ReplyException r = (ReplyException) e;
    if (r.failureType() == ReplyFailure.TIMEOUT) {
      return new ReplyException(ReplyFailure.TIMEOUT, HOST_UNAVAILABLE, "no_reply: no reply to '" + action + "' from "
          + address + " within " + timeoutMs + " ms: the node serving it may have died; the outcome is unknown");
    }
    if (r.failureType() == ReplyFailure.NO_HANDLERS) {
      return new ReplyException(ReplyFailure.NO_HANDLERS, HOST_UNAVAILABLE, "no_handlers: nothing serves " + address
          + " (the service is not deployed, is stopping, or its node left the cluster)");
    }
    return e;
  }

  // ------------------------------------------------------------------ directory

  /** Creates the directory at {@code path} with {@code layer} (null: none); fails 409 already_exists. */
  public Future<DirectoryInfo> createDirectory(List<String> path, String layer) {
    return directory(DirectoryWire.CREATE, path(path).put("layer", layer)).map(DirectoryWire::info);
  }

  /** Creates a partition at {@code path}; fails 409 already_exists. */
  public Future<DirectoryInfo> createPartition(List<String> path) {
    return directory(DirectoryWire.CREATE, path(path).put("partition", true)).map(DirectoryWire::info);
  }

  /** Opens the directory at {@code path}, creating it when missing. */
  public Future<DirectoryInfo> createOrOpenDirectory(List<String> path, String layer) {
    return directory(DirectoryWire.CREATE_OR_OPEN, path(path).put("layer", layer)).map(DirectoryWire::info);
  }

  /** Opens the directory at {@code path}; fails 404 not_found, or 409 layer_mismatch when {@code layer} differs. */
  public Future<DirectoryInfo> openDirectory(List<String> path, String layer) {
    return directory(DirectoryWire.OPEN, path(path).put("layer", layer)).map(DirectoryWire::info);
  }

  /** Whether a directory exists at {@code path}. */
  public Future<Boolean> directoryExists(List<String> path) {
    return directory(DirectoryWire.EXISTS, path(path)).map(DirectoryWire::exists);
  }

  /** A page of the subdirectory names of {@code path} (empty: the root), after {@code startAfter} (null: first page). */
  public Future<DirectoryPage> listDirectory(List<String> path, String startAfter, int limit) {
    return directory(DirectoryWire.LIST, path(path).put("startAfter", startAfter).put("limit", limit))
        .map(DirectoryWire::page);
  }

  /** Moves the directory at {@code from} to {@code to}, keeping its prefix; fails 404 or 409 already_exists. */
  public Future<DirectoryInfo> moveDirectory(List<String> from, List<String> to) {
    return directory(DirectoryWire.MOVE, new JsonObject().put("from", WireProtocol.array(from))
        .put("to", WireProtocol.array(to))).map(DirectoryWire::info);
  }

  /** Removes the directory at {@code path} and its contents; fails 404 not_found. */
  public Future<Void> removeDirectory(List<String> path) {
    return directory(DirectoryWire.REMOVE, path(path)).mapEmpty();
  }

  /** Removes the directory at {@code path} and its contents, if any; completes with whether there was one. */
  public Future<Boolean> removeDirectoryIfExists(List<String> path) {
    return directory(DirectoryWire.REMOVE_IF_EXISTS, path(path)).map(DirectoryWire::removed);
  }

  private Future<JsonObject> directory(String action, JsonObject body) {
    return request(directoryAddress(), action, body);
  }

  private static JsonObject path(List<String> path) {
    return new JsonObject().put("path", WireProtocol.array(path));
  }

  // ------------------------------------------------------------------ allocator

  /** A value of allocator {@code name} no other call of it returns. */
  public Future<Long> allocate(String name) {
    return request(allocatorAddress(), AllocatorWire.ALLOCATE, new JsonObject().put("name", name))
        .map(AllocatorWire::value);
  }

  /** A key prefix of allocator {@code name} no other call of it returns. */
  public Future<byte[]> allocatePrefix(String name) {
    return request(allocatorAddress(), AllocatorWire.ALLOCATE_PREFIX, new JsonObject().put("name", name))
        .map(AllocatorWire::prefix);
  }

  // ------------------------------------------------------------------ interner

  /**
   * The ids of {@code strings} in {@code namespace}, interning those not yet interned.
   *
   * <p>Ids are unsigned 64-bit values carried in a {@code long}, as {@code ids} of fdb-java's
   * tuples: those of 2^63 and above are negative as Java prints them. Print them with
   * {@link Long#toUnsignedString(long)} (what HTTP and the dashboard show), parse with
   * {@link Long#parseUnsignedLong(String)}, order them with {@link Long#compareUnsigned}.
   */
  public Future<List<Long>> intern(String namespace, List<String> strings) {
    return request(internerAddress(), InternerWire.INTERN, new JsonObject().put("namespace", namespace)
        .put("strings", WireProtocol.array(strings)))
        .map(InternerWire::interned);
  }

  /** The ids of {@code strings} in {@code namespace}, empty for those never interned; fails 404 for a missing namespace. */
  public Future<List<OptionalLong>> resolve(String namespace, List<String> strings) {
    return request(internerAddress(), InternerWire.RESOLVE, new JsonObject().put("namespace", namespace)
        .put("strings", WireProtocol.array(strings)))
        .map(InternerWire::resolved);
  }

  /** The strings of {@code ids} in {@code namespace}, empty for unknown ids; fails 404 for a missing namespace. */
  public Future<List<Optional<String>>> lookup(String namespace, List<Long> ids) {
    return request(internerAddress(), InternerWire.LOOKUP, new JsonObject().put("namespace", namespace)
        .put("ids", InternerWire.ids(ids)))
        .map(InternerWire::lookedUp);
  }

  /** The interner's namespaces, in name order. */
  public Future<List<String>> listNamespaces() {
    return request(internerAddress(), InternerWire.LIST_NAMESPACES, new JsonObject()).map(InternerWire::namespaces);
  }

  /** Counts of {@code namespace}: strings and id sequences; fails 404 for a missing namespace. */
  public Future<InternerStats> internerStats(String namespace) {
    return request(internerAddress(), InternerWire.STATS, new JsonObject().put("namespace", namespace))
        .map(InternerWire::stats);
  }

  /**
   * A page of the strings of {@code namespace} in unsigned id order, of ids after {@code after}
   * (0: from the first) and at most {@code limit} (1 to the service's interner.maxBatchSize); fails
   * 404 for a missing namespace.
   */
  public Future<InternedPage> listInterned(String namespace, long after, int limit) {
    return request(internerAddress(), InternerWire.LIST, new JsonObject().put("namespace", namespace)
        .put("after", InternerWire.id(after)).put("limit", limit))
        .map(InternerWire::page);
  }

  /** Removes {@code namespace} and its strings; completes with whether it existed. */
  public Future<Boolean> removeNamespace(String namespace) {
    return request(internerAddress(), InternerWire.REMOVE_NAMESPACE, new JsonObject().put("namespace", namespace))
        .map(InternerWire::removed);
  }

  // ------------------------------------------------------------------ mutex

  /**
   * The outcome of an acquire: held with a fencing token, or (tryAcquire only) queued at a position.
   *
   * @param name the mutex
   * @param owner the owner that asked
   * @param held whether {@code owner} now holds the mutex
   * @param token the grant's fencing token when held
   * @param position the place in the queue when not held (1: next), 0 when held
   */
  public record Grant(String name, String owner, boolean held, Optional<FencingToken> token, int position) {
    static Grant of(JsonObject j) {
      return new Grant(j.getString("name"), j.getString("owner"), MutexWire.isHeld(j), MutexWire.token(j),
          MutexWire.position(j));
    }
  }

  /** Takes the mutex if free, else joins its queue; never waits. */
  public Future<Grant> tryAcquire(String name, String owner) {
    return request(mutexAddress(), MutexWire.TRY_ACQUIRE, new JsonObject().put("name", name).put("owner", owner))
        .map(Grant::of);
  }

  /**
   * Waits up to {@code timeout} for the mutex; fails with code CONFLICT (reason timed_out) after
   * leaving the queue. The holder must then {@link #heartbeat} more often than the service's lease.
   *
   * <p>While it waits, this client answers the service's liveness pings at an address of its own,
   * registered outside every deployment (so undeploying the verticle that called first does not
   * take it away): when this node dies, the service takes the waiter out of the queue.
   */
  public Future<Grant> acquire(String name, String owner, Duration timeout) {
    return acquireReply(name, owner, timeout).map(Grant::of);
  }

  private Future<JsonObject> acquireReply(String name, String owner, Duration timeout) {
    return waiting(mutexAddress(), MutexWire.ACQUIRE, new JsonObject().put("name", name).put("owner", owner), timeout);
  }

  /**
   * Sends a request that waits up to {@code timeout} in a queue ({@code acquire}, {@code campaign}): with its
   * {@code timeoutMs} and this instance's liveness address, waiting for the reply up to {@code timeout} plus the
   * reply grace.
   */
  Future<JsonObject> waiting(String address, String action, JsonObject body, Duration timeout) {
    Objects.requireNonNull(timeout, "timeout");
    return liveness.enter()
        .compose(live -> request(address, action, body.put("timeoutMs", timeout.toMillis()).put("liveness", live),
            replyGraceMs + timeout.toMillis()))
        .andThen(ar -> liveness.done());
  }

  /** As {@link #lock(String, LockOptions)} with the default options: a random owner, a 10 s wait. */
  public Future<ClientLock> lock(String name) {
    return lock(name, new LockOptions());
  }

  /**
   * Takes mutex {@code name} and keeps it until {@link ClientLock#release()}: the returned lock
   * renews its lease on the caller's context, reports through {@link ClientLock#lost()} a loss it
   * could not prevent (a pause or partition longer than the lease), and is released when the
   * caller's context closes (the verticle that took it is undeployed). Fails with code 409
   * (reason timed_out) when the mutex was not free within {@code options.getTimeout()}.
   *
   * <p>This is the handle to use for work under a lock; {@link #acquire} leaves renewing to the caller.
   */
  public Future<ClientLock> lock(String name, LockOptions options) {
    Objects.requireNonNull(options, "options");
    ContextInternal context = LeaseKeeper.callerContext(vertx);
    String owner = options.ownerOrRandom();
    long sentAt = System.nanoTime();
    return acquireReply(name, owner, options.getTimeout()).map(reply -> new ClientLock(this, context, name, owner,
        MutexWire.token(reply).get(), LeaseKeeper.lease(reply), options.getRenewInterval(), sentAt).start());
  }

  /** Releases; the token (nullable) limits the release to that grant. */
  public Future<LockEvent> release(String name, String owner, FencingToken token) {
    return request(mutexAddress(), MutexWire.RELEASE, new JsonObject().put("name", name).put("owner", owner)
        .put("token", token == null ? null : token.toString()))
        .map(MutexWire::event);
  }

  /**
   * What {@link #acquireAll} answers: {@code owner} holds every mutex of the set, each under its own token, for
   * {@code lease} from now unless heartbeated.
   */
  public record MultiGrant(String owner, Map<String, FencingToken> tokens, Duration lease) {
    public MultiGrant {
      tokens = Map.copyOf(tokens);
    }

    static MultiGrant of(JsonObject reply) {
      Map<String, FencingToken> tokens = new LinkedHashMap<>();
      for (Object g : reply.getJsonArray("grants")) {
        JsonObject grant = (JsonObject) g;
        tokens.put(grant.getString("name"), FencingToken.parse(grant.getString("token")));
      }
      return new MultiGrant(reply.getString("owner"), tokens, Duration.ofMillis(reply.getLong("leaseMs", 0L)));
    }
  }

  /**
   * Takes every mutex of {@code names} for {@code owner}, all or none, waiting up to {@code timeout}: the owner joins
   * every queue in one transaction, so two callers asking for overlapping sets never deadlock, whatever order they
   * name them in. The caller heartbeats each grant ({@link #heartbeat}) more often than the lease and gives them
   * back with {@link #releaseAll}. Fails 409 timed_out (nothing left queued or held), 400 for bad names.
   */
  public Future<MultiGrant> acquireAll(Collection<String> names, String owner, Duration timeout) {
    return waiting(mutexAddress(), MutexWire.ACQUIRE_ALL, new JsonObject().put("names", new JsonArray(List.copyOf(names)))
        .put("owner", owner), timeout).map(MultiGrant::of);
  }

  /** Releases every grant of {@code grants} in one transaction (none when one of them had ended otherwise: 409). */
  public Future<List<LockEvent>> releaseAll(MultiGrant grants) {
    JsonArray list = new JsonArray();
    grants.tokens().forEach((name, token) -> list.add(new JsonObject().put("name", name).put("token", token.toString())));
    return request(mutexAddress(), MutexWire.RELEASE_ALL, new JsonObject().put("owner", grants.owner())
        .put("grants", list)).map(reply -> reply.getJsonArray("events").stream()
            .map(e -> MutexWire.event((JsonObject) e)).toList());
  }

  /** Keeps a held mutex: completes with the owner record; fails 409 not_owner / not_held when it is lost. */
  public Future<MutexOwner> heartbeat(String name, String owner, FencingToken token) {
    return request(mutexAddress(), MutexWire.HEARTBEAT, new JsonObject().put("name", name).put("owner", owner)
        .put("token", token == null ? null : token.toString()))
        .map(MutexWire::owner);
  }

  /**
   * Keeps a waiter that queued through {@link #tryAcquire} alive (call it more often than the
   * service's lease, as a holder heartbeats): a waiter that stops is removed from the queue after the
   * lease. Completes with its position, or with its grant (held, with the token) once it was granted
   * the mutex, whose heartbeat it then also is. Fails with CONFLICT when it neither waits nor holds.
   */
  public Future<Grant> heartbeatWaiter(String name, String owner) {
    return request(mutexAddress(), MutexWire.HEARTBEAT, new JsonObject().put("name", name).put("owner", owner))
        .map(Grant::of);
  }

  /** Takes {@code owner} out of the queue of mutex {@code name}; completes with whether it was queued. */
  public Future<Boolean> leave(String name, String owner) {
    return request(mutexAddress(), MutexWire.LEAVE, new JsonObject().put("name", name).put("owner", owner))
        .map(j -> j.getBoolean("left"));
  }

  /** Names of held mutexes after {@code after} (null: from the first), at most {@code limit} (1..10,000). */
  public Future<List<String>> heldMutexes(String after, int limit) {
    return request(mutexAddress(), MutexWire.HELD, new JsonObject().put("after", after).put("limit", limit))
        .map(MutexWire::heldNames);
  }

  /**
   * Ends the waiting acquires of {@code owner} for mutex {@code name} sent through the serving node
   * (they fail with 409 abandoned) and takes the owner out of the queue; completes with how many
   * waits it ended. For a requester that went away without waiting for its reply.
   */
  public Future<Integer> abandon(String name, String owner) {
    return request(mutexAddress(), MutexWire.ABANDON, new JsonObject().put("name", name).put("owner", owner))
        .map(j -> j.getInteger("abandoned"));
  }

  /** Mutex {@code name} as an operator looks at it: its state, how long it is held and its lease left. */
  public Future<MutexInspection> inspect(String name) {
    return request(mutexAddress(), MutexWire.INSPECT, new JsonObject().put("name", name))
        .map(MutexWire::inspection);
  }

  /** A consistent snapshot of mutex {@code name}: owner record and queue. */
  public Future<MutexState> mutexState(String name) {
    return request(mutexAddress(), MutexWire.STATE, new JsonObject().put("name", name)).map(MutexWire::state);
  }

  /**
   * Events of a mutex may have been missed: the service no longer had them when this client asked
   * (its event log keeps them for {@code mutex.eventRetentionMs}, or the serving node came back with
   * another store).
   *
   * @param mutex the mutex whose events may have been missed
   * @param lastDelivered the sequence of the last event delivered before the gap; empty when none was
   */
  public record EventGap(String mutex, Optional<FencingToken> lastDelivered) {}

  /**
   * As {@link #lockEvents(String, Handler, Handler)}, with gaps logged as warnings.
   */
  public Future<MessageConsumer<JsonObject>> lockEvents(String name, Handler<LockEvent> handler) {
    return lockEvents(name, handler, gap -> LOG.warn("lock events of mutex '" + name
        + "' may have been missed after " + gap.lastDelivered().map(FencingToken::toString).orElse("the start")));
  }

  /**
   * Delivers the lock events of mutex {@code name} to {@code handler} (on the caller's context)
   * from now on, until the returned consumer is unregistered: each once and in sequence order, even
   * when several nodes publish it. The watch is renewed periodically; when the serving node restarts
   * (or another takes over), the renewal resumes from the last event delivered, replaying what was
   * missed from the service's event log, or calls {@code onGap} when events can no longer be replayed.
   */
  public Future<MessageConsumer<JsonObject>> lockEvents(String name, Handler<LockEvent> handler, Handler<EventGap> onGap) {
    Objects.requireNonNull(handler, "handler");
    Objects.requireNonNull(onGap, "onGap");
    LockEventStream stream = new LockEventStream(this, name, handler, onGap);
    return stream.start();
  }
}
