package io.github.fdbcoord.service;

import io.github.fdbcoord.client.CoordinationClient;
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

  LayerForward(CoordinationClient client) {
    this.client = client;
  }

  CoordinationClient client() {
    return client;
  }

  @Override
  public void to(RoutingContext ctx, String address, String action, JsonObject body, int status) {
    to(ctx, address, action, body, status, SEND_TIMEOUT_MS);
  }

  /** Sends {@code action} to {@code address} and answers its reply with {@code status}. */
  void to(RoutingContext ctx, String address, String action, JsonObject body, int status, long sendTimeoutMs) {
    client.request(address, action, body, sendTimeoutMs).onComplete(ar -> HttpResponses.reply(ctx, ar, status));
  }
}
