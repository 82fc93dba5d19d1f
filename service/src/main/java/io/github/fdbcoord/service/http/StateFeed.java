package io.github.fdbcoord.service.http;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.client.CoordinationClient;
import io.github.fdbcoord.mutex.MutexService;
import io.github.fdbcoord.service.eventbus.StatePublisher;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;

import java.util.function.Consumer;

/**
 * The semaphores' or read-write locks' subscriptions of a WebSocket: {@code {"type": "semaphore"|"rwlock", "name",
 * "version", "state"}} for the current state and each change, newest version only ({@link StatePublisher} publishes
 * them; its {@code watch} reply is the current state).
 */
final class StateFeed extends PushFeed {
  private final CoordinationClient client;
  private final String layerAddress;
  private final String type;
  private final String watcher;
  private final String what;

  /**
   * The {@code kind} subscriptions ({@code "semaphores"}) of the layer at {@code layerAddress}, pushed as
   * {@code type} messages; {@code what} names the primitive in errors.
   */
  StateFeed(String kind, String type, String what, Vertx vertx, CoordinationClient client, String layerAddress,
      String watcher, Consumer<JsonObject> send) {
    super(kind, vertx, send);
    this.client = client;
    this.layerAddress = layerAddress;
    this.type = type;
    this.watcher = watcher;
    this.what = what;
  }

  @Override
  void checkName(String name) {
    MutexService.checkName(name, what + " name");
  }

  @Override
  protected String address(String name) {
    return StatePublisher.eventsAddress(layerAddress, name);
  }

  @Override
  protected Future<Void> watch(Subscription s) {
    return client.request(layerAddress, StatePublisher.WATCH, new JsonObject().put("name", s.name)
        .put("watcher", watcher)).map(reply -> {
          onPublished(s, reply);
          return null;
        });
  }

  @Override
  protected void unwatch(String name) {
    client.request(layerAddress, StatePublisher.UNWATCH, new JsonObject().put("name", name).put("watcher", watcher));
  }

  @Override
  protected void onPublished(Subscription s, JsonObject event) {
    FencingToken version;
    try {
      version = FencingToken.parse(event.getString("version"));
    } catch (RuntimeException e) {
      return; // not a change the service published (it always has a version)
    }
    offer(s, version, new JsonObject().put("type", type).put("name", s.name).put("version", version.toString())
        .put("state", event.getJsonObject("state")));
  }
}
