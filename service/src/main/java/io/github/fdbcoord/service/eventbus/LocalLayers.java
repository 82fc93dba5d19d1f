package io.github.fdbcoord.service.eventbus;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;

import java.util.concurrent.ConcurrentHashMap;

/**
 * The layer verticles this service deployed, by event-bus address: the HTTP routes call a local
 * layer's action directly ({@link LayerVerticle#call}) instead of sending it over the event bus,
 * which would copy the body and cost a hop to the layer's event loop and one back. Addresses served
 * only elsewhere (or not registered here) still go over the event bus.
 */
public final class LocalLayers {
  private final ConcurrentHashMap<String, LayerVerticle> layers = new ConcurrentHashMap<>();

  /** None yet: each layer verticle served locally registers itself when it starts. */
  public LocalLayers() {
  }

  void serve(String address, LayerVerticle layer) {
    layers.put(address, layer);
  }

  void withdraw(String address, LayerVerticle layer) {
    layers.remove(address, layer);
  }

  /** The action's reply from the layer of this process at {@code address}, or null when none is deployed here. */
  public Future<JsonObject> call(String address, String action, JsonObject body) {
    LayerVerticle layer = layers.get(address);
    return layer == null ? null : layer.call(action, body);
  }
}
