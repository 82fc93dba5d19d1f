package io.github.fdbcoord.service.http;

import io.github.fdbcoord.client.wire.MutexWire;
import io.github.fdbcoord.client.wire.InternerWire;
import io.github.fdbcoord.client.CoordinationClient;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.StaticHandler;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.function.Supplier;

/**
 * The dashboard (docs/dashboard.md): its static files under {@code /dashboard/}, {@code GET /}
 * redirecting there, and the read-only routes only the dashboard needed ({@code /nodes},
 * interner stats and pages, mutex inspection, the event log's position). Mounted by {@link HttpVerticle}.
 *
 * <p>The static files are public: a browser's navigation cannot carry a bearer token, and they hold
 * no data; everything they show comes from routes that need the token. A browser's WebSocket cannot
 * send an {@code Authorization} header either, so the page offers the token as a sub-protocol
 * {@code fdbcoord.bearer.<base64url(token)>} beside {@link #WEBSOCKET_PROTOCOL}, which the server
 * selects (the token itself is never echoed).
 */
public final class DashboardRoutes {
  /** The sub-protocol the server selects for a browser that offers a token as a sub-protocol. */
  public static final String WEBSOCKET_PROTOCOL = "fdbcoord.v1";
  private static final String BEARER_PROTOCOL_PREFIX = "fdbcoord.bearer.";

  /** Forwards a request to a layer address and answers with its reply (HttpVerticle's forward). */
  interface Forward {
    void to(RoutingContext ctx, String address, String action, JsonObject body, int status);
  }

  private final Vertx vertx;
  private final HttpOptions options;
  private final CoordinationClient client;
  private final Forward forward;
  private final Supplier<Future<JsonObject>> health;
  private final ClusterMembers members;

  DashboardRoutes(Vertx vertx, HttpOptions options, CoordinationClient client, Forward forward,
      Supplier<Future<JsonObject>> health, ClusterMembers members) {
    this.vertx = vertx;
    this.members = members;
    this.options = options;
    this.client = client;
    this.forward = forward;
    this.health = health;
  }

  /** Routes that need no token: the redirect and the static files. Mount before authentication. */
  void mountPublic(Router router) {
    router.get("/").handler(ctx -> ctx.redirect("/dashboard/"));
    router.get("/dashboard/*").handler(ctx -> {
      if (!ctx.request().path().startsWith("/dashboard/")) {
        // The page's relative links need the trailing slash.
        ctx.redirect("/dashboard/");
        return;
      }
      // Everything the page runs is its own files: no inline script, nothing from elsewhere.
      ctx.response()
          .putHeader("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; "
              + "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
          .putHeader("X-Content-Type-Options", "nosniff")
          .putHeader("Referrer-Policy", "no-referrer");
      ctx.next();
    }).handler(StaticHandler.create("dashboard").setIndexPage("index.html").setCachingEnabled(false)
        .setDirectoryListing(false));
  }

  /** The read-only data routes the page needs; mount after authentication and the body handler. */
  void mount(Router router) {
    router.get("/nodes").handler(this::nodes);
    router.get("/interners/:ns/stats").handler(ctx -> forward.to(ctx, client.internerAddress(), InternerWire.STATS,
        new JsonObject().put("namespace", ctx.pathParam("ns")), 200));
    router.get("/interners/:ns/strings").handler(ctx -> {
      JsonObject body = new JsonObject().put("namespace", ctx.pathParam("ns"))
          .put("after", ctx.request().getParam("after"));
      if (putLimit(ctx, body)) {
        forward.to(ctx, client.internerAddress(), InternerWire.LIST, body, 200);
      }
    });
    router.get("/events/position").handler(ctx -> forward.to(ctx, client.mutexAddress(), MutexWire.POSITION,
        new JsonObject(), 200));
    router.get("/mutexes/:name/inspect").handler(ctx -> forward.to(ctx, client.mutexAddress(), MutexWire.INSPECT,
        new JsonObject().put("name", ctx.pathParam("name")), 200));
  }

  /**
   * The nodes of the service: this node with its health, then, when clustered, the other members
   * of the Vert.x cluster; apart ({@code departed}), those that went lately ({@link ClusterMembers}).
   */
  private void nodes(RoutingContext ctx) {
    health.get().onComplete(ar -> {
      JsonObject self = members.self()
          .put("self", true)
          .put("status", ar.succeeded() ? "UP" : "DOWN")
          .put("store", ar.succeeded() ? ar.result().getString("store") : null)
          .put("storeWriteMs", ar.succeeded() ? ar.result().getValue("writeMs") : null)
          .put("error", ar.succeeded() ? null : String.valueOf(ar.cause().getMessage()))
          .put("clustered", vertx.isClustered())
          .put("http", options.getHost() + ":" + ctx.request().localAddress().port())
          .put("addressPrefix", options.getAddressPrefix())
          .put("leaseMs", options.getLease().toMillis());
      if (!ctx.response().ended()) {
        ctx.response().putHeader(HttpHeaders.CONTENT_TYPE, "application/json")
            .end(new JsonObject().put("nodes", new JsonArray().add(self).addAll(members.others()))
                .put("departed", members.departed()).encode());
      }
    });
  }

  private static boolean putLimit(RoutingContext ctx, JsonObject body) {
    String limit = ctx.request().getParam("limit");
    if (limit == null) {
      return true;
    }
    try {
      body.put("limit", Integer.parseInt(limit));
      return true;
    } catch (NumberFormatException e) {
      HttpResponses.error(ctx, 400, "bad_request", "query parameter 'limit' must be an integer, got '"
          + HttpResponses.abbreviate(limit) + "'");
      return false;
    }
  }

  /**
   * The token a browser offered as the sub-protocol {@code fdbcoord.bearer.<base64url>} of a
   * WebSocket upgrade, or null (no such sub-protocol, or not valid base64url).
   */
  static String webSocketToken(HttpServerRequest request) {
    String offered = request.getHeader("Sec-WebSocket-Protocol");
    if (offered == null) {
      return null;
    }
    for (String protocol : offered.split(",")) {
      String p = protocol.trim();
      if (p.startsWith(BEARER_PROTOCOL_PREFIX)) {
        try {
          return new String(Base64.getUrlDecoder().decode(p.substring(BEARER_PROTOCOL_PREFIX.length())),
              StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
          return null;
        }
      }
    }
    return null;
  }
}
