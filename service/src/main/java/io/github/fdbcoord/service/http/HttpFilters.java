package io.github.fdbcoord.service.http;

import io.github.fdbcoord.service.eventbus.Metrics;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.RoutingContext;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Locale;

import static io.github.fdbcoord.service.http.HttpResponses.abbreviate;
import static io.github.fdbcoord.service.http.HttpResponses.error;

/**
 * The handlers every request passes before its route: metrics, URL validation, the bearer token
 * and the JSON content type.
 */
final class HttpFilters {
  private final HttpOptions options;
  private final Metrics metrics;

  HttpFilters(HttpOptions options, Metrics metrics) {
    this.options = options;
    this.metrics = metrics;
  }

  /** Records the request's route, status and duration when it ends. */
  void measure(RoutingContext ctx) {
    long start = System.nanoTime();
    ctx.addEndHandler(v -> {
      String route = ctx.currentRoute() == null || ctx.currentRoute().getPath() == null ? routeName(ctx)
          : ctx.currentRoute().getPath();
      metrics.http(route, ctx.response().getStatusCode(), System.nanoTime() - start);
    });
    ctx.next();
  }

  /** A bounded label for routes without a path template (never the raw path: unbounded cardinality). */
  private static String routeName(RoutingContext ctx) {
    String p = ctx.request().path();
    if (p != null && p.startsWith("/directories/")) {
      return "/directories/*";
    }
    return "other";
  }

  /** Requires {@code Authorization: Bearer <http.token>} (or the WebSocket's token sub-protocol on /ws): 401 otherwise. */
  void authenticate(RoutingContext ctx) {
    String header = ctx.request().getHeader(HttpHeaders.AUTHORIZATION);
    if (header == null && "/ws".equals(ctx.request().path())) {
      String offered = DashboardRoutes.webSocketToken(ctx.request());
      header = offered == null ? null : "Bearer " + offered;
    }
    // The scheme is case-insensitive (RFC 9110 section 11.1); the token is compared in constant time.
    String token = header != null && header.length() > 7 && header.regionMatches(true, 0, "Bearer ", 0, 7)
        ? header.substring(7).strip() : "";
    if (MessageDigest.isEqual(token.getBytes(StandardCharsets.UTF_8),
        options.getToken().getBytes(StandardCharsets.UTF_8))) {
      ctx.next();
      return;
    }
    ctx.response().putHeader("WWW-Authenticate", "Bearer");
    error(ctx, 401, "unauthorized", header == null ? "this server requires 'Authorization: Bearer <token>'"
        : "the bearer token is wrong");
  }

  /**
   * Refuses a URL whose percent-encoding does not decode to UTF-8 (400): the router and the
   * decoders of the routes would otherwise turn bad bytes into U+FFFD and look up another name.
   */
  void requireValidPath(RoutingContext ctx) {
    String raw = ctx.request().path();
    if (raw != null && raw.indexOf('%') >= 0) {
      try {
        for (String segment : raw.split("/", -1)) {
          HttpRequests.strictDecode(segment);
        }
      } catch (IllegalArgumentException e) {
        error(ctx, 400, "bad_request", "the URL path is not valid percent-encoded UTF-8: " + e.getMessage());
        return;
      }
    }
    ctx.next();
  }

  /**
   * Bodies are JSON. A body declared as something else (curl's default
   * application/x-www-form-urlencoded, multipart, text) is refused with 415 before the body handler
   * tries to parse it as a form.
   */
  void requireJsonBody(RoutingContext ctx) {
    String type = ctx.request().getHeader(HttpHeaders.CONTENT_TYPE);
    String length = ctx.request().getHeader(HttpHeaders.CONTENT_LENGTH);
    boolean hasBody = (length != null && !length.equals("0"))
        || ctx.request().getHeader(HttpHeaders.TRANSFER_ENCODING) != null;
    if (type == null || !hasBody) {
      ctx.next();
      return;
    }
    String media = type.split(";", 2)[0].strip().toLowerCase(Locale.ROOT);
    if (media.equals("application/json") || (media.startsWith("application/") && media.endsWith("+json"))) {
      ctx.next();
      return;
    }
    error(ctx, 415, "unsupported_media_type", "request bodies are JSON: send 'Content-Type: application/json'"
        + " (with curl: -H 'Content-Type: application/json' or --json), got '" + abbreviate(type) + "'");
  }
}
