package io.github.fdbcoord.service.http;

import io.github.fdbcoord.client.CoordinationClient;
import io.github.fdbcoord.service.eventbus.LocalLayers;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

/**
 * An HTTP request answered by a layer's event-bus action: the HTTP routes and the event bus share
 * one implementation and one set of failure codes (the HTTP status is the failure code).
 */
final class LayerForward implements DashboardRoutes.Forward {
  /** How long a forwarded request without a wait of its own may take. */
  static final long SEND_TIMEOUT_MS = 30_000;

  private final CoordinationClient client;
  private final LocalLayers local;

  /** Forwards over the event bus only. */
  LayerForward(CoordinationClient client) {
    this(client, new LocalLayers());
  }

  /** Calls the layers deployed in this process directly ({@code local}), the others over the event bus. */
  LayerForward(CoordinationClient client, LocalLayers local) {
    this.client = client;
    this.local = local;
  }

  CoordinationClient client() {
    return client;
  }

  @Override
  public void to(RoutingContext ctx, String address, String action, JsonObject body, int status) {
    to(ctx, address, action, body, status, SEND_TIMEOUT_MS);
  }

  /**
   * Answers {@code action} of the layer at {@code address} with {@code status}: called directly
   * when that layer is deployed in this process (the same code the event-bus consumer runs, without
   * its copies and hops), else sent over the event bus.
   */
  void to(RoutingContext ctx, String address, String action, JsonObject body, int status, long sendTimeoutMs) {
    Future<JsonObject> reply = local.call(address, action, body);
    if (reply == null) {
      reply = client.request(address, action, body, sendTimeoutMs);
    }
    reply.onComplete(ar -> HttpResponses.reply(ctx, ar, status));
  }
}
