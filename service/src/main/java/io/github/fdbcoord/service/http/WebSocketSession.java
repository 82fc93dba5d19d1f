package io.github.fdbcoord.service.http;

import io.github.fdbcoord.client.wire.MutexWire;
import io.github.fdbcoord.client.CoordinationClient;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.mutex.MutexService;
import io.github.fdbcoord.service.eventbus.FailureCodes;
import io.github.fdbcoord.service.eventbus.Requests;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.http.ServerWebSocket;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * One WebSocket client. It sends {@code {"subscribe": ["m1", ...]}} / {@code {"unsubscribe": [...]}};
 * the server answers {@code {"type": "subscribed"|"unsubscribed", "mutexes": [...]}} and then pushes
 * every lock event of the subscribed mutexes as {@code {"type": "lock", "event": "HANDED_OFF", ...}}
 * (fields of docs/vertx.md), each once, in sequence order. Bad messages get
 * {@code {"type": "error", "message": ...}} and the connection stays open.
 *
 * <p>A subscriber that comes back (a reconnect, a restart of the service) resumes with {@code
 * "after": {"m1": "<sequence of the last event it got>"}}: the events since then are replayed from
 * the mutex's event log before the live ones, or, when the log no longer holds that point (trimmed
 * after {@code mutex.eventRetentionMs}, or another store), a {@code {"type": "gap", "mutex", "after"}}
 * message says that events were missed before those that follow.
 *
 * <p>{@code "since": "<position>"} (of {@code GET /events/position}, taken before the client knew
 * which mutexes it would want) replays, for each subscribed mutex without an {@code after}, every
 * event logged after that position: the dashboard's "every event since the page opened".
 *
 * <p>{@code {"subscribe": {"elections": [...], "semaphores": [...], "rwlocks": [...], "mutexes": [...]}}} subscribes to
 * the other kinds too ({@link PushFeed}): the current leader or state first, then each change, never an older one
 * after a newer ({@link ElectionFeed}, {@link StateFeed}). Every kind counts against one limit per connection.
 */
final class WebSocketSession {
  private final ServerWebSocket ws;
  private final HttpOptions options;
  private final CoordinationClient client;
  private final Vertx vertx;
  private final Map<String, MessageConsumer<Object>> consumers = new HashMap<>();
  private final Map<String, FencingToken> lastSequence = new HashMap<>();
  /** Live events of mutexes whose replay is under way: pushed after it, in sequence order. */
  private final Map<String, List<JsonObject>> held = new HashMap<>();
  /** This connection's watcher id: its watches are renewed while it lives and given back when it ends. */
  private final String watcher = "ws-" + UUID.randomUUID();
  private final Set<WebSocketSession> sessions;
  private final long renewTimer;
  /** The other kinds a connection subscribes to, by their subscribe field: elections, semaphores, rwlocks. */
  private final Map<String, PushFeed> feeds = new LinkedHashMap<>();

  WebSocketSession(Vertx vertx, ServerWebSocket ws, HttpOptions options, CoordinationClient client,
      Set<WebSocketSession> sessions) {
    this.vertx = vertx;
    this.ws = ws;
    this.options = options;
    this.client = client;
    this.sessions = sessions;
    sessions.add(this);
    // Watcher ids apart from the mutexes': a connection may watch the mutex and the election of one name, and
    // giving one back must not end the other's watch.
    feeds.put("elections", new ElectionFeed(vertx, client, options.getAddressPrefix(), watcher + "-election",
        this::send));
    feeds.put("semaphores", new StateFeed("semaphores", "semaphore", "semaphore", vertx, client,
        client.semaphoreAddress(), watcher, this::send));
    feeds.put("rwlocks", new StateFeed("rwlocks", "rwlock", "read-write lock", vertx, client,
        client.readWriteLockAddress(), watcher, this::send));
    ws.textMessageHandler(this::onText);
    ws.binaryMessageHandler(b -> error("binary messages are not supported: send JSON text"));
    ws.closeHandler(v -> close());
    ws.exceptionHandler(e -> close());
    renewTimer = vertx.setPeriodic(Math.max(100, options.getWatchLease().toMillis() / 3), id -> renewWatches());
  }

  /** Closes the connection with 1001 (going away) and {@code reason}: the server is stopping. */
  void shutdown(String reason) {
    close();
    if (!ws.isClosed()) {
      ws.close((short) 1001, reason);
    }
  }

  private void renewWatches() {
    for (String name : consumers.keySet()) {
      watch(name);
    }
    feeds.values().forEach(PushFeed::renew);
  }

  private Future<JsonObject> watch(String name) {
    return watch(name, null, null);
  }

  private Future<JsonObject> watch(String name, FencingToken after, FencingToken since) {
    return client.request(client.mutexAddress(), MutexWire.WATCH, new JsonObject().put("name", name)
        .put("watcher", watcher).put("after", after == null ? null : after.toString())
        .put("since", since == null ? null : since.toString()));
  }

  private void unwatch(String name) {
    client.request(client.mutexAddress(), MutexWire.UNWATCH, new JsonObject().put("name", name).put("watcher", watcher));
  }

  private void onText(String text) {
    JsonObject msg;
    try {
      Object v = Json.decodeValue(text);
      if (!(v instanceof JsonObject)) {
        error("a message must be a JSON object, got " + Requests.describe(v));
        return;
      }
      msg = (JsonObject) v;
    } catch (DecodeException e) {
      error("the message is not valid JSON: " + HttpResponses.abbreviate(String.valueOf(e.getMessage())));
      return;
    }
    try {
      if (msg.getValue("subscribe") instanceof JsonObject kinds) {
        subscribeByKind(kinds, msg);
      } else if (msg.getValue("unsubscribe") instanceof JsonObject kinds) {
        unsubscribeByKind(kinds);
      } else if (msg.containsKey("subscribe")) {
        List<String> names = names(msg, "subscribe");
        subscribe(names, resumePoints(msg, names), position(msg));
      } else if (msg.containsKey("unsubscribe")) {
        unsubscribe(names(msg, "unsubscribe"));
      } else {
        error("expected {\"subscribe\": [mutex names]} or {\"subscribe\": {\"elections\": [names], \"semaphores\":"
            + " [names], \"rwlocks\": [names], \"mutexes\": [names]}}, or the same with \"unsubscribe\"");
      }
    } catch (ReplyException | IllegalArgumentException e) {
      error(e instanceof ReplyException ? FailureCodes.detailOf((ReplyException) e) : e.getMessage());
    }
  }

  private List<String> names(JsonObject msg, String field) {
    List<String> names = Requests.requiredStrings(msg, field, options.getMaxWebSocketSubscriptions());
    for (String n : names) {
      MutexService.checkName(n, "mutex name");
    }
    return names;
  }

  /** The {@code after} object of a subscribe: a sequence per mutex to resume after. */
  private static Map<String, FencingToken> resumePoints(JsonObject msg, List<String> names) {
    Object after = msg.getValue("after");
    if (after == null) {
      return Map.of();
    }
    if (!(after instanceof JsonObject)) {
      throw new IllegalArgumentException("field 'after' must be an object of mutex name to sequence, got "
          + Requests.describe(after));
    }
    Map<String, FencingToken> points = new HashMap<>();
    for (Map.Entry<String, Object> e : (JsonObject) after) {
      if (!names.contains(e.getKey())) {
        throw new IllegalArgumentException("field 'after' names '" + e.getKey() + "', which is not subscribed to");
      }
      if (!(e.getValue() instanceof String)) {
        throw new IllegalArgumentException("field 'after." + e.getKey() + "' must be a sequence (20 hex digits)");
      }
      points.put(e.getKey(), FencingToken.parse((String) e.getValue()));
    }
    return points;
  }

  /** The {@code since} of a subscribe: a position to replay from, or null. */
  private static FencingToken position(JsonObject msg) {
    Object since = msg.getValue("since");
    if (since == null) {
      return null;
    }
    if (!(since instanceof String)) {
      throw new IllegalArgumentException("field 'since' must be a position (20 hex digits), got "
          + Requests.describe(since));
    }
    try {
      return FencingToken.parse((String) since);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("field 'since': " + e.getMessage());
    }
  }

  /** Subscriptions of every kind this connection holds: they count together against the limit. */
  private int subscriptionCount() {
    return consumers.size() + feeds.values().stream().mapToInt(PushFeed::size).sum();
  }

  private void tooMany() {
    error("at most " + options.getMaxWebSocketSubscriptions() + " subscriptions per connection, mutexes, elections,"
        + " semaphores and read-write locks together (http.maxWebSocketSubscriptions)");
  }

  /** The names of each kind in a subscribe or unsubscribe object, checked. */
  private Map<String, List<String>> namesByKind(JsonObject kinds, String field) {
    if (kinds.isEmpty()) {
      throw new IllegalArgumentException("field '" + field + "' names no kind: expected some of " + kindList());
    }
    Map<String, List<String>> out = new LinkedHashMap<>();
    for (String kind : kinds.fieldNames()) {
      PushFeed feed = feeds.get(kind);
      if (feed == null && !kind.equals("mutexes")) {
        throw new IllegalArgumentException("field '" + field + "." + kind + "': unknown kind, expected " + kindList());
      }
      List<String> names = Requests.requiredStrings(kinds, kind, options.getMaxWebSocketSubscriptions());
      for (String n : names) {
        if (feed == null) {
          MutexService.checkName(n, "mutex name");
        } else {
          feed.checkName(n);
        }
      }
      out.put(kind, names);
    }
    return out;
  }

  private String kindList() {
    return "mutexes, " + String.join(", ", feeds.keySet());
  }

  private void subscribeByKind(JsonObject kinds, JsonObject msg) {
    Map<String, List<String>> byKind = namesByKind(kinds, "subscribe");
    long fresh = 0;
    for (Map.Entry<String, List<String>> e : byKind.entrySet()) {
      PushFeed feed = feeds.get(e.getKey());
      fresh += e.getValue().stream().distinct().filter(n -> feed == null ? !consumers.containsKey(n) : !feed.has(n))
          .count();
    }
    if (subscriptionCount() + fresh > options.getMaxWebSocketSubscriptions()) {
      tooMany();
      return;
    }
    // The mutexes' resume points checked before anything is subscribed: a bad one refuses the whole message.
    List<String> mutexes = byKind.getOrDefault("mutexes", List.of());
    Map<String, FencingToken> resume = resumePoints(msg, mutexes);
    FencingToken since = position(msg);
    for (Map.Entry<String, List<String>> e : byKind.entrySet()) {
      List<String> names = e.getValue();
      PushFeed feed = feeds.get(e.getKey());
      if (feed == null) {
        subscribe(names, resume, since);
        continue;
      }
      List<Future<Void>> ready = new ArrayList<>();
      for (String name : names) {
        ready.add(feed.subscribe(name));
      }
      Future.all(ready).onComplete(ar -> {
        if (ar.succeeded()) {
          send(new JsonObject().put("type", "subscribed").put(feed.kind, new JsonArray(new ArrayList<>(names))));
        } else {
          Throwable x = ar.cause();
          error("subscription to " + feed.kind + " " + names + " failed: " + (x instanceof ReplyException
              ? FailureCodes.detailOf((ReplyException) x) : x.getMessage()));
        }
      });
    }
  }

  private void unsubscribeByKind(JsonObject kinds) {
    for (Map.Entry<String, List<String>> e : namesByKind(kinds, "unsubscribe").entrySet()) {
      PushFeed feed = feeds.get(e.getKey());
      if (feed == null) {
        unsubscribe(e.getValue());
        continue;
      }
      e.getValue().forEach(feed::unsubscribe);
      send(new JsonObject().put("type", "unsubscribed").put(feed.kind, new JsonArray(new ArrayList<>(e.getValue()))));
    }
  }

  private void subscribe(List<String> names, Map<String, FencingToken> resume, FencingToken since) {
    long fresh = names.stream().distinct().filter(n -> !consumers.containsKey(n)).count();
    if (subscriptionCount() + fresh > options.getMaxWebSocketSubscriptions()) {
      if (feeds.values().stream().allMatch(f -> f.size() == 0)) {
        error("at most " + options.getMaxWebSocketSubscriptions() + " mutexes per connection (http.maxWebSocketSubscriptions)");
      } else {
        tooMany();
      }
      return;
    }
    List<Future<?>> ready = new ArrayList<>();
    for (String name : names) {
      if (consumers.containsKey(name)) {
        continue;
      }
      FencingToken after = resume.getOrDefault(name, since);
      held.put(name, new ArrayList<>());
      MessageConsumer<Object> c = vertx.eventBus().consumer(options.mutexEventsAddress(name), m -> {
        if (!(m.body() instanceof JsonObject event)) {
          // Not an event of the service: kept from the client, and answered if it was a request.
          ReplyException malformed = FailureCodes.badRequest("a lock event is a JSON object, got "
              + (m.body() == null ? "no body" : m.body().getClass().getSimpleName()));
          m.fail(malformed.failureCode(), malformed.getMessage());
          return;
        }
        List<JsonObject> waiting = held.get(name);
        if (waiting != null) {
          waiting.add(event);
        } else {
          push(name, event);
        }
      });
      consumers.put(name, c);
      boolean isPosition = !resume.containsKey(name) && since != null;
      ready.add(c.completion().compose(v -> watch(name, isPosition ? null : after, isPosition ? since : null))
          .andThen(ar -> replay(name, after, ar.result())));
    }
    Future.all(ready).onComplete(ar -> {
      if (ar.succeeded()) {
        send(new JsonObject().put("type", "subscribed").put("mutexes", new JsonArray(new ArrayList<>(names))));
      } else {
        Throwable e = ar.cause();
        error("subscription failed: " + (e instanceof ReplyException ? FailureCodes.detailOf((ReplyException) e)
            : e.getMessage()));
      }
    });
  }

  private void unsubscribe(List<String> names) {
    for (String name : names) {
      MessageConsumer<Object> c = consumers.remove(name);
      lastSequence.remove(name);
      held.remove(name);
      if (c != null) {
        c.unregister();
        unwatch(name);
      }
    }
    send(new JsonObject().put("type", "unsubscribed").put("mutexes", new JsonArray(new ArrayList<>(names))));
  }

  /**
   * Pushes the watch reply's replay after {@code after} (an event's sequence or a position; or a gap
   * message), then the live events
   * that arrived meanwhile; a failed watch (null reply) pushes those alone.
   */
  private void replay(String name, FencingToken after, JsonObject reply) {
    if (after != null && reply != null && consumers.containsKey(name)) {
      lastSequence.put(name, after);
      if (Boolean.TRUE.equals(reply.getBoolean("gap"))) {
        send(new JsonObject().put("type", "gap").put("mutex", name).put("after", after.toString()));
      }
      JsonArray events = reply.getJsonArray("events");
      if (events != null) {
        events.forEach(e -> push(name, (JsonObject) e));
      }
    }
    List<JsonObject> live = held.remove(name);
    if (live != null) {
      live.sort((a, b) -> a.getString("sequence").compareTo(b.getString("sequence")));
      live.forEach(e -> push(name, e));
    }
  }

  /** Forwards an event once: several nodes may publish the same transition. */
  private void push(String name, JsonObject event) {
    FencingToken seq = FencingToken.parse(event.getString("sequence"));
    FencingToken last = lastSequence.get(name);
    if (last != null && !seq.isNewerThan(last)) {
      return;
    }
    lastSequence.put(name, seq);
    JsonObject out = new JsonObject().put("type", "lock").put("event", event.getString("type"));
    event.forEach(e -> {
      if (!e.getKey().equals("type")) {
        out.put(e.getKey(), e.getValue());
      }
    });
    send(out);
  }

  private void error(String message) {
    send(new JsonObject().put("type", "error").put("message", message));
  }

  private void send(JsonObject json) {
    if (!ws.isClosed()) {
      ws.writeTextMessage(json.encode());
    }
  }

  private void close() {
    if (!sessions.remove(this)) {
      return;
    }
    vertx.cancelTimer(renewTimer);
    consumers.values().forEach(MessageConsumer::unregister);
    consumers.keySet().forEach(this::unwatch);
    consumers.clear();
    feeds.values().forEach(PushFeed::close);
  }
}
