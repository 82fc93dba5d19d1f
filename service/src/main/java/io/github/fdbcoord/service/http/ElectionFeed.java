package io.github.fdbcoord.service.http;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.client.CoordinationClient;
import io.github.fdbcoord.client.wire.ElectionWire;
import io.github.fdbcoord.client.wire.MutexWire;
import io.github.fdbcoord.client.wire.WireProtocol;
import io.github.fdbcoord.mutex.MutexService;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;

import java.util.function.Consumer;

/**
 * The elections' subscriptions of a WebSocket: {@code {"type": "election", "election", "leader": {"candidate",
 * "epoch"} | null}} for the current leader and each change, in epoch order. An election is the mutex of its name
 * (the election verticle serves the mutex verticle's mutexes), so its changes are that mutex's lock events: the
 * leader after an event is its owner, the epoch its sequence. The current leader is the one after the newest event
 * (the mutex {@code watch} reply carries it), or, when the log holds none, what the election's {@code leader} says.
 */
final class ElectionFeed extends PushFeed {
  private final CoordinationClient client;
  private final String prefix;
  private final String watcher;

  ElectionFeed(Vertx vertx, CoordinationClient client, String prefix, String watcher, Consumer<JsonObject> send) {
    super("elections", vertx, send);
    this.client = client;
    this.prefix = prefix;
    this.watcher = watcher;
  }

  @Override
  void checkName(String name) {
    MutexService.checkName(name, "election name");
  }

  @Override
  protected String address(String name) {
    return WireProtocol.mutexEventsAddress(prefix, name);
  }

  @Override
  protected Future<Void> watch(Subscription s) {
    boolean first = !s.pushed;
    return client.request(client.mutexAddress(), MutexWire.WATCH, new JsonObject().put("name", s.name)
        .put("watcher", watcher)).compose(reply -> {
          JsonObject latest = reply.getJsonObject("latestEvent");
          if (latest != null) {
            onPublished(s, latest);
            return Future.succeededFuture();
          }
          if (!first) {
            return Future.succeededFuture(); // a renewal: the events tell the rest
          }
          return client.request(client.electionAddress(), ElectionWire.LEADER, new JsonObject().put("election", s.name))
              .map(leader -> {
                JsonObject l = leader.getJsonObject("leader");
                offer(s, l == null ? null : FencingToken.parse(l.getString("epoch")), message(s.name, l));
                return null;
              });
        });
  }

  @Override
  protected void unwatch(String name) {
    client.request(client.mutexAddress(), MutexWire.UNWATCH, new JsonObject().put("name", name).put("watcher", watcher));
  }

  @Override
  protected void onPublished(Subscription s, JsonObject event) {
    FencingToken sequence;
    try {
      sequence = FencingToken.parse(event.getString("sequence"));
    } catch (RuntimeException e) {
      return; // not a lock event of the service
    }
    String owner = event.getString("owner");
    offer(s, sequence, message(s.name, owner == null ? null : ElectionWire.leader(owner, sequence)));
  }

  private static JsonObject message(String election, JsonObject leader) {
    return new JsonObject().put("type", "election").put("election", election).put("leader", leader);
  }
}
