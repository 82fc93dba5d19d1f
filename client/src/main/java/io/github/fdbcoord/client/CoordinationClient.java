package io.github.fdbcoord.client;

import io.github.fdbcoord.api.DirectoryInfo;
import io.github.fdbcoord.api.DirectoryPage;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.api.MutexOwner;
import io.github.fdbcoord.api.MutexState;
import io.github.fdbcoord.api.QueueEntry;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.HashMap;
import java.util.Map;
import java.util.WeakHashMap;
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
 * </pre>
 */
public final class CoordinationClient {
  /** The header that names a request's action; the body carries its arguments. */
  public static final String ACTION_HEADER = "action";
  private static final HexFormat HEX = HexFormat.of();

  /**
   * Failure code of a request that got no reply in time (reason {@code no_reply}) or found nothing
   * serving its address (reason {@code no_handlers}): the node serving it died, stopped or is cut
   * off. The {@link io.vertx.core.eventbus.ReplyException} keeps Vert.x's failure type (TIMEOUT,
   * NO_HANDLERS); its {@code failureCode()} is this. A request without reply may or may not have
   * taken effect.
   */
  public static final int HOST_UNAVAILABLE = 503;
  /** Default limit of a request without a wait of its own: a store transaction's 5 s plus a margin. */
  public static final Duration DEFAULT_SEND_TIMEOUT = Duration.ofSeconds(10);
  /** Default margin beyond a request's own wait (acquire's timeout) before it fails with {@link #HOST_UNAVAILABLE}. */
  public static final Duration DEFAULT_REPLY_GRACE = Duration.ofSeconds(5);
  private static final Logger LOG = LoggerFactory.getLogger(CoordinationClient.class);
  /** Liveness addresses per Vert.x instance and address prefix (weak: a closed Vert.x is forgotten). */
  private static final Map<Vertx, Map<String, String>> LIVENESS = new WeakHashMap<>();

  private final Vertx vertx;
  private final String prefix;
  private final long sendTimeoutMs;
  private final long replyGraceMs;

  private CoordinationClient(Vertx vertx, String prefix, long sendTimeoutMs, long replyGraceMs) {
    this.vertx = Objects.requireNonNull(vertx, "vertx");
    this.prefix = Objects.requireNonNull(prefix, "prefix");
    this.sendTimeoutMs = sendTimeoutMs;
    this.replyGraceMs = replyGraceMs;
  }

  /** A client of the service under the default address prefix "fdb". */
  public static CoordinationClient create(Vertx vertx) {
    return create(vertx, "fdb");
  }

  public static CoordinationClient create(Vertx vertx, String addressPrefix) {
    return new CoordinationClient(vertx, addressPrefix, DEFAULT_SEND_TIMEOUT.toMillis(), DEFAULT_REPLY_GRACE.toMillis());
  }

  /** The same client with another limit for requests that have no wait of their own (default 10 s). */
  public CoordinationClient withSendTimeout(Duration timeout) {
    return new CoordinationClient(vertx, prefix, positive(timeout, "send timeout"), replyGraceMs);
  }

  /**
   * The same client with another margin beyond a request's own wait (default 5 s): an
   * {@link #acquire} with timeout {@code t} fails with {@link #HOST_UNAVAILABLE} when no reply came
   * within {@code t + grace} (the serving node died, or is cut off).
   */
  public CoordinationClient withReplyGrace(Duration grace) {
    return new CoordinationClient(vertx, prefix, sendTimeoutMs, positive(grace, "reply grace"));
  }

  private static long positive(Duration d, String what) {
    if (d == null || d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(what + " must be positive, got " + d);
    }
    return d.toMillis();
  }

  public String directoryAddress() {
    return prefix + ".directory";
  }

  public String allocatorAddress() {
    return prefix + ".allocator";
  }

  public String internerAddress() {
    return prefix + ".interner";
  }

  public String mutexAddress() {
    return prefix + ".mutex";
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

  public Future<DirectoryInfo> createDirectory(List<String> path, String layer) {
    return directory("create", new JsonObject().put("path", new JsonArray(path)).put("layer", layer))
        .map(CoordinationClient::directoryInfo);
  }

  public Future<DirectoryInfo> createPartition(List<String> path) {
    return directory("create", new JsonObject().put("path", new JsonArray(path)).put("partition", true))
        .map(CoordinationClient::directoryInfo);
  }

  public Future<DirectoryInfo> createOrOpenDirectory(List<String> path, String layer) {
    return directory("createOrOpen", new JsonObject().put("path", new JsonArray(path)).put("layer", layer))
        .map(CoordinationClient::directoryInfo);
  }

  public Future<DirectoryInfo> openDirectory(List<String> path, String layer) {
    return directory("open", new JsonObject().put("path", new JsonArray(path)).put("layer", layer))
        .map(CoordinationClient::directoryInfo);
  }

  public Future<Boolean> directoryExists(List<String> path) {
    return directory("exists", new JsonObject().put("path", new JsonArray(path))).map(j -> j.getBoolean("exists"));
  }

  /** A page of the subdirectory names of {@code path} (empty: the root), after {@code startAfter} (null: first page). */
  public Future<DirectoryPage> listDirectory(List<String> path, String startAfter, int limit) {
    return directory("list", new JsonObject().put("path", new JsonArray(path)).put("startAfter", startAfter)
        .put("limit", limit))
        .map(j -> new DirectoryPage(strings(j.getJsonArray("names")), j.getBoolean("hasMore")));
  }

  public Future<DirectoryInfo> moveDirectory(List<String> from, List<String> to) {
    return directory("move", new JsonObject().put("from", new JsonArray(from)).put("to", new JsonArray(to)))
        .map(CoordinationClient::directoryInfo);
  }

  public Future<Void> removeDirectory(List<String> path) {
    return directory("remove", new JsonObject().put("path", new JsonArray(path))).mapEmpty();
  }

  public Future<Boolean> removeDirectoryIfExists(List<String> path) {
    return directory("removeIfExists", new JsonObject().put("path", new JsonArray(path)))
        .map(j -> j.getBoolean("removed"));
  }

  private Future<JsonObject> directory(String action, JsonObject body) {
    return request(directoryAddress(), action, body);
  }

  static DirectoryInfo directoryInfo(JsonObject j) {
    return new DirectoryInfo(strings(j.getJsonArray("path")), j.getString("layer").getBytes(StandardCharsets.UTF_8),
        HEX.parseHex(j.getString("prefix")));
  }

  // ------------------------------------------------------------------ allocator

  public Future<Long> allocate(String name) {
    return request(allocatorAddress(), "allocate", new JsonObject().put("name", name)).map(j -> j.getLong("value"));
  }

  public Future<byte[]> allocatePrefix(String name) {
    return request(allocatorAddress(), "allocatePrefix", new JsonObject().put("name", name))
        .map(j -> HEX.parseHex(j.getString("prefix")));
  }

  // ------------------------------------------------------------------ interner

  public Future<List<Long>> intern(String namespace, List<String> strings) {
    return request(internerAddress(), "intern", new JsonObject().put("namespace", namespace)
        .put("strings", new JsonArray(new ArrayList<>(strings))))
        .map(j -> {
          List<Long> ids = new ArrayList<>();
          for (Object o : j.getJsonArray("ids")) {
            ids.add(Long.parseUnsignedLong((String) o));
          }
          return ids;
        });
  }

  public Future<List<OptionalLong>> resolve(String namespace, List<String> strings) {
    return request(internerAddress(), "resolve", new JsonObject().put("namespace", namespace)
        .put("strings", new JsonArray(new ArrayList<>(strings))))
        .map(j -> {
          List<OptionalLong> ids = new ArrayList<>();
          for (Object o : j.getJsonArray("ids")) {
            ids.add(o == null ? OptionalLong.empty() : OptionalLong.of(Long.parseUnsignedLong((String) o)));
          }
          return ids;
        });
  }

  public Future<List<Optional<String>>> lookup(String namespace, List<Long> ids) {
    JsonArray idArray = new JsonArray();
    ids.forEach(id -> idArray.add(Long.toUnsignedString(id)));
    return request(internerAddress(), "lookup", new JsonObject().put("namespace", namespace).put("ids", idArray))
        .map(j -> {
          List<Optional<String>> out = new ArrayList<>();
          for (Object o : j.getJsonArray("strings")) {
            out.add(Optional.ofNullable((String) o));
          }
          return out;
        });
  }

  public Future<List<String>> listNamespaces() {
    return request(internerAddress(), "listNamespaces", new JsonObject())
        .map(j -> strings(j.getJsonArray("namespaces")));
  }

  public Future<Boolean> removeNamespace(String namespace) {
    return request(internerAddress(), "removeNamespace", new JsonObject().put("namespace", namespace))
        .map(j -> j.getBoolean("removed"));
  }

  // ------------------------------------------------------------------ mutex

  /** The outcome of an acquire: held with a fencing token, or (tryAcquire only) queued at a position. */
  public record Grant(String name, String owner, boolean held, Optional<FencingToken> token, int position) {
    static Grant of(JsonObject j) {
      boolean held = j.getBoolean("held");
      return new Grant(j.getString("name"), j.getString("owner"), held,
          held ? Optional.of(FencingToken.parse(j.getString("token"))) : Optional.empty(),
          held ? 0 : j.getInteger("position"));
    }
  }

  /** Takes the mutex if free, else joins its queue; never waits. */
  public Future<Grant> tryAcquire(String name, String owner) {
    return request(mutexAddress(), "tryAcquire", new JsonObject().put("name", name).put("owner", owner))
        .map(Grant::of);
  }

  /**
   * Waits up to {@code timeout} for the mutex; fails with code CONFLICT (reason timed_out) after
   * leaving the queue. The holder must then {@link #heartbeat} more often than the service's lease.
   */
  public Future<Grant> acquire(String name, String owner, Duration timeout) {
    return liveness().compose(address -> request(mutexAddress(), "acquire", new JsonObject().put("name", name)
        .put("owner", owner).put("timeoutMs", timeout.toMillis()).put("liveness", address),
        replyGraceMs + timeout.toMillis()))
        .map(Grant::of);
  }

  /**
   * The address at which this Vert.x instance answers the service's liveness pings while its
   * {@code acquire} requests wait: when the node dies, its registration goes with it, and the
   * service takes its waiters out of the queues. One per Vert.x instance and address prefix.
   */
  private Future<String> liveness() {
    String address;
    synchronized (LIVENESS) {
      Map<String, String> byPrefix = LIVENESS.computeIfAbsent(vertx, v -> new HashMap<>());
      address = byPrefix.get(prefix);
      if (address != null) {
        return Future.succeededFuture(address);
      }
      address = prefix + ".liveness." + java.util.UUID.randomUUID();
      byPrefix.put(prefix, address);
    }
    String registered = address;
    return vertx.eventBus().<JsonObject>consumer(address, m -> m.reply(new JsonObject())).completion()
        .map(registered)
        .onFailure(e -> {
          synchronized (LIVENESS) {
            LIVENESS.getOrDefault(vertx, new HashMap<>()).remove(prefix, registered);
          }
        });
  }

  /** Releases; the token (nullable) limits the release to that grant. */
  public Future<LockEvent> release(String name, String owner, FencingToken token) {
    return request(mutexAddress(), "release", new JsonObject().put("name", name).put("owner", owner)
        .put("token", token == null ? null : token.toString()))
        .map(CoordinationClient::lockEvent);
  }

  public Future<MutexOwner> heartbeat(String name, String owner, FencingToken token) {
    return request(mutexAddress(), "heartbeat", new JsonObject().put("name", name).put("owner", owner)
        .put("token", token == null ? null : token.toString()))
        .map(j -> new MutexOwner(j.getString("owner"), FencingToken.parse(j.getString("token")),
            j.getLong("heartbeats")));
  }

  /**
   * Keeps a waiter that queued through {@link #tryAcquire} alive (call it more often than the
   * service's lease, as a holder heartbeats): a waiter that stops is removed from the queue after the
   * lease. Completes with its position, or with its grant (held, with the token) once it was granted
   * the mutex, whose heartbeat it then also is. Fails with CONFLICT when it neither waits nor holds.
   */
  public Future<Grant> heartbeatWaiter(String name, String owner) {
    return request(mutexAddress(), "heartbeat", new JsonObject().put("name", name).put("owner", owner))
        .map(Grant::of);
  }

  public Future<Boolean> leave(String name, String owner) {
    return request(mutexAddress(), "leave", new JsonObject().put("name", name).put("owner", owner))
        .map(j -> j.getBoolean("left"));
  }

  /** Names of held mutexes after {@code after} (null: from the first), at most {@code limit} (1..10,000). */
  public Future<List<String>> heldMutexes(String after, int limit) {
    return request(mutexAddress(), "held", new JsonObject().put("after", after).put("limit", limit))
        .map(j -> strings(j.getJsonArray("names")));
  }

  public Future<MutexState> mutexState(String name) {
    return request(mutexAddress(), "state", new JsonObject().put("name", name)).map(j -> {
      JsonObject o = j.getJsonObject("owner");
      List<QueueEntry> queue = new ArrayList<>();
      for (Object q : j.getJsonArray("queue")) {
        JsonObject e = (JsonObject) q;
        queue.add(new QueueEntry(e.getString("owner"), ticket(e.getString("ticket"))));
      }
      return new MutexState(j.getString("name"), o == null ? Optional.empty()
          : Optional.of(new MutexOwner(o.getString("owner"), FencingToken.parse(o.getString("token")),
              o.getLong("heartbeats"))), queue);
    });
  }

  /**
   * Events of a mutex may have been missed: the service no longer had them when this client asked
   * (its event log keeps them for {@code mutex.eventRetentionMs}, or the serving node came back with
   * another store). {@code lastDelivered} is the sequence of the last event delivered before the gap.
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
    LockEventStream stream = new LockEventStream(name, handler, onGap);
    return stream.start();
  }

  /** One {@link #lockEvents} subscription: the consumer, the renewals and the replay after a gap in delivery. */
  private final class LockEventStream {
    private final String name;
    private final Handler<LockEvent> handler;
    private final Handler<EventGap> onGap;
    private final String watcher = "client-" + java.util.UUID.randomUUID();
    private final Context context = vertx.getOrCreateContext();
    private MessageConsumer<JsonObject> consumer;
    private FencingToken last;
    /** Events published while a renewal (and its replay) is under way: delivered after it, in order. */
    private List<LockEvent> held;
    private long renewAfterMs = 1000;

    LockEventStream(String name, Handler<LockEvent> handler, Handler<EventGap> onGap) {
      this.name = name;
      this.handler = handler;
      this.onGap = onGap;
    }

    Future<MessageConsumer<JsonObject>> start() {
      held = new ArrayList<>();
      consumer = vertx.eventBus().consumer(prefix + ".mutex.events." + name, m -> {
        LockEvent e = lockEvent(m.body());
        if (held != null) {
          held.add(e);
        } else {
          deliver(e);
        }
      });
      return consumer.completion()
          .compose(v -> watch())
          .onSuccess(reply -> {
            String latest = reply.getString("latest");
            if (latest != null) {
              last = FencingToken.parse(latest); // where this subscription starts
            }
            settle(reply);
          })
          .map(consumer)
          .onFailure(e -> {
            held = null;
            consumer.unregister();
          });
    }

    private Future<JsonObject> watch() {
      return request(mutexAddress(), "watch", new JsonObject().put("name", name).put("watcher", watcher)
          .put("after", last == null ? null : last.toString()));
    }

    private void renew() {
      if (!consumer.isRegistered()) {
        request(mutexAddress(), "unwatch", new JsonObject().put("name", name).put("watcher", watcher));
        return;
      }
      held = new ArrayList<>();
      watch().onComplete(ar -> {
        if (ar.succeeded()) {
          settle(ar.result());
        } else {
          // The serving node is gone for now: try again soon; the replay will tell what was missed.
          flushHeld();
          schedule(Math.min(1000, renewAfterMs));
        }
      });
    }

    /** Delivers a watch reply's replay (or its gap), then what was published meanwhile; schedules the next renewal. */
    private void settle(JsonObject reply) {
      JsonArray replay = reply.getJsonArray("events");
      if (Boolean.TRUE.equals(reply.getBoolean("gap"))) {
        onGap.handle(new EventGap(name, Optional.ofNullable(last)));
      }
      if (replay != null) {
        for (Object o : replay) {
          deliver(lockEvent((JsonObject) o));
        }
      }
      flushHeld();
      Long leaseMs = reply.getLong("leaseMs");
      renewAfterMs = leaseMs == null ? 10_000 : Math.max(100, leaseMs / 3);
      schedule(renewAfterMs);
    }

    private void flushHeld() {
      List<LockEvent> pending = held;
      held = null;
      if (pending != null) {
        pending.sort((a, b) -> a.sequence().compareTo(b.sequence()));
        pending.forEach(this::deliver);
      }
    }

    private void schedule(long delayMs) {
      if (consumer.isRegistered()) {
        vertx.setTimer(delayMs, id -> context.runOnContext(v -> renew()));
      } else {
        request(mutexAddress(), "unwatch", new JsonObject().put("name", name).put("watcher", watcher));
      }
    }

    private void deliver(LockEvent e) {
      if (last == null || e.sequence().isNewerThan(last)) {
        last = e.sequence();
        handler.handle(e);
      }
    }
  }

  static LockEvent lockEvent(JsonObject j) {
    return new LockEvent(LockEvent.Type.valueOf(j.getString("type")), j.getString("mutex"),
        FencingToken.parse(j.getString("sequence")), Optional.ofNullable(j.getString("previousOwner")),
        Optional.ofNullable(j.getString("previousToken")).map(FencingToken::parse),
        Optional.ofNullable(j.getString("owner")));
  }

  private static List<String> strings(JsonArray a) {
    List<String> out = new ArrayList<>(a.size());
    for (Object o : a) {
      out.add((String) o);
    }
    return out;
  }

  /** A queue ticket as the service sends it: the 12-byte versionstamp (user version 0) in hex. */
  private static FencingToken ticket(String hex) {
    return FencingToken.of(Arrays.copyOf(HEX.parseHex(hex), FencingToken.LENGTH));
  }

}
