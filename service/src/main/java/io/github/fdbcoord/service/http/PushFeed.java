package io.github.fdbcoord.service.http;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.service.eventbus.FailureCodes;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;

import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * One kind of state a WebSocket subscribes to by name beside the mutexes' lock events ({@code "elections"},
 * {@code "semaphores"}, {@code "rwlocks"}): per name, a consumer of the address the service publishes its changes
 * on, a watch that keeps the publishing going, and the newest version pushed, so that the client gets the current
 * state first and then only newer ones (several nodes may publish one change). Runs on the WebSocket's event loop;
 * the store is reached through the layers' event-bus actions, never from here.
 */
abstract class PushFeed {
  /** The subscribe field this feed answers to ({@code "semaphores"}). */
  final String kind;
  protected final Vertx vertx;
  private final Consumer<JsonObject> send;
  private final Map<String, Subscription> subscriptions = new HashMap<>();

  /** The per-name state: its consumer and the newest version pushed. */
  protected static final class Subscription {
    final String name;
    MessageConsumer<Object> consumer;
    /** The newest version pushed, or null before the first push (or after a push without a version). */
    FencingToken last;
    boolean pushed;

    Subscription(String name) {
      this.name = name;
    }
  }

  PushFeed(String kind, Vertx vertx, Consumer<JsonObject> send) {
    this.kind = kind;
    this.vertx = vertx;
    this.send = send;
  }

  /** Checks a name ({@link IllegalArgumentException} naming what is wrong). */
  abstract void checkName(String name);

  /** Where the changes of {@code name} are published. */
  protected abstract String address(String name);

  /** Starts (or renews) the watch of {@code name}; the reply's current state goes to {@link #offer}. */
  protected abstract Future<Void> watch(Subscription s);

  /** Gives the watch of {@code name} back. */
  protected abstract void unwatch(String name);

  /** A change published on {@link #address}: its {@link #offer}. */
  protected abstract void onPublished(Subscription s, JsonObject event);

  int size() {
    return subscriptions.size();
  }

  boolean has(String name) {
    return subscriptions.containsKey(name);
  }

  /** Subscribes to {@code name} (nothing when already subscribed): done once the current state was pushed. */
  Future<Void> subscribe(String name) {
    if (subscriptions.containsKey(name)) {
      return Future.succeededFuture();
    }
    Subscription s = new Subscription(name);
    subscriptions.put(name, s);
    s.consumer = vertx.eventBus().consumer(address(name), m -> {
      if (!(m.body() instanceof JsonObject event)) {
        // Not a change the service published: kept from the client, and answered if it was a request.
        ReplyException malformed = FailureCodes.badRequest("a state change is a JSON object, got "
            + (m.body() == null ? "no body" : m.body().getClass().getSimpleName()));
        m.fail(malformed.failureCode(), malformed.getMessage());
        return;
      }
      if (subscriptions.get(name) == s) {
        onPublished(s, event);
      }
    });
    // Listening before the watch: a change published after the watch's reply is never missed.
    return s.consumer.completion().compose(v -> watch(s)).onFailure(e -> {
      if (subscriptions.remove(name, s)) {
        s.consumer.unregister();
        unwatch(name);
      }
    });
  }

  void unsubscribe(String name) {
    Subscription s = subscriptions.remove(name);
    if (s != null) {
      s.consumer.unregister();
      unwatch(name);
    }
  }

  /** Renews every watch (their leases run out otherwise). */
  void renew() {
    for (Subscription s : subscriptions.values()) {
      watch(s);
    }
  }

  void close() {
    for (String name : subscriptions.keySet().toArray(new String[0])) {
      unsubscribe(name);
    }
  }

  protected boolean current(Subscription s) {
    return subscriptions.get(s.name) == s;
  }

  /**
   * Pushes {@code message} when {@code version} is newer than the last pushed; a null version (nothing ever
   * happened) only as the first push.
   */
  protected void offer(Subscription s, FencingToken version, JsonObject message) {
    if (!current(s)) {
      return;
    }
    boolean newer = version == null ? !s.pushed : s.last == null || version.isNewerThan(s.last);
    if (!newer) {
      return;
    }
    if (version != null) {
      s.last = version;
    }
    s.pushed = true;
    send.accept(message);
  }
}
