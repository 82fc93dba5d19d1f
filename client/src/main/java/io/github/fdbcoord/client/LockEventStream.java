package io.github.fdbcoord.client;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.client.wire.MutexWire;
import io.github.fdbcoord.client.wire.WireProtocol;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * One {@link CoordinationClient#lockEvents} subscription: the consumer, the renewals and the replay after a gap in
 * delivery.
 */
final class LockEventStream {
  private final CoordinationClient client;
  private final String name;
  private final Handler<LockEvent> handler;
  private final Handler<CoordinationClient.EventGap> onGap;
  private final String watcher = "client-" + UUID.randomUUID();
  private final Context context;
  private MessageConsumer<JsonObject> consumer;
  private FencingToken last;
  /** Events published while a renewal (and its replay) is under way: delivered after it, in order. */
  private List<LockEvent> held;
  private long renewAfterMs = 1000;

  LockEventStream(CoordinationClient client, String name, Handler<LockEvent> handler,
      Handler<CoordinationClient.EventGap> onGap) {
    this.client = client;
    this.context = client.vertx().getOrCreateContext();
    this.name = name;
    this.handler = handler;
    this.onGap = onGap;
  }

  Future<MessageConsumer<JsonObject>> start() {
    held = new ArrayList<>();
    consumer = client.vertx().eventBus().consumer(WireProtocol.mutexEventsAddress(client.prefix(), name), m -> {
      LockEvent e = MutexWire.event(m.body());
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
    return client.request(client.mutexAddress(), MutexWire.WATCH, watcherBody()
        .put("after", last == null ? null : last.toString()));
  }

  private void renew() {
    if (!consumer.isRegistered()) {
      unwatch();
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
      onGap.handle(new CoordinationClient.EventGap(name, Optional.ofNullable(last)));
    }
    if (replay != null) {
      for (Object o : replay) {
        deliver(MutexWire.event((JsonObject) o));
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
      client.vertx().setTimer(delayMs, id -> context.runOnContext(v -> renew()));
    } else {
      unwatch();
    }
  }

  private void deliver(LockEvent e) {
    if (last == null || e.sequence().isNewerThan(last)) {
      last = e.sequence();
      handler.handle(e);
    }
  }

  private void unwatch() {
    client.request(client.mutexAddress(), MutexWire.UNWATCH, watcherBody());
  }

  private JsonObject watcherBody() {
    return new JsonObject().put("name", name).put("watcher", watcher);
  }
}
