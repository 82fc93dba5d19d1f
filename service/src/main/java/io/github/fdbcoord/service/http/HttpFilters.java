package io.github.fdbcoord.service.http;

import io.github.fdbcoord.service.eventbus.Metrics;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.HostAndPort;
import io.vertx.ext.web.RoutingContext;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;

import static io.github.fdbcoord.service.http.HttpResponses.abbreviate;
import static io.github.fdbcoord.service.http.HttpResponses.error;

/**
 * The handlers every request passes before its route: metrics, the {@code Host}, the origin of
 * browser requests, URL validation, the bearer token and the JSON content type.
 *
 * <p>The service without a token trusts whoever reaches its loopback port, and a browser on that
 * machine reaches it for any page it shows. So, token or not, a request for a name the server does
 * not answer to (a page whose DNS name was rebound to 127.0.0.1) is refused, a request that changes
 * state is refused when it comes from another site's page, and a WebSocket is refused to another
 * site's page (browsers send no preflight for either, and a WebSocket is not bound by the
 * same-origin policy).
 */
final class HttpFilters {
  private static final Set<String> LOOPBACK_NAMES = Set.of("localhost", "127.0.0.1", "::1");
  private static final Set<HttpMethod> SAFE_METHODS = Set.of(HttpMethod.GET, HttpMethod.HEAD, HttpMethod.OPTIONS);

  private final HttpOptions options;
  private final Metrics metrics;
  private final Set<String> allowedHosts;

  HttpFilters(HttpOptions options, Metrics metrics) {
    this.options = options;
    this.metrics = metrics;
    Set<String> hosts = new HashSet<>(LOOPBACK_NAMES);
    hosts.add(unbracketed(options.getHost().toLowerCase(Locale.ROOT)));
    options.getAllowedHosts().forEach(h -> hosts.add(unbracketed(h)));
    this.allowedHosts = Set.copyOf(hosts);
  }

  /**
   * Refuses (421) a request whose {@code Host} is none of the names the server answers:
   * loopback, {@code http.host} and {@code http.allowedHosts}. A request without a {@code Host}
   * (HTTP/1.0) comes from no browser and passes.
   */
  void requireKnownHost(RoutingContext ctx) {
    HostAndPort authority = ctx.request().authority();
    if (authority == null || allowedHosts.contains("*")
        || allowedHosts.contains(unbracketed(authority.host().toLowerCase(Locale.ROOT)))) {
      ctx.next();
      return;
    }
    refuse(ctx, 421, "unknown_host", "Host: " + abbreviate(authority.host()), "http.allowedHosts",
        "this server does not answer to the name '" + abbreviate(authority.host()) + "' (a page whose DNS name"
            + " points at this machine is not this service): add the name to http.allowedHosts to allow it");
  }

  /**
   * Refuses (403) a request that may change state (any method but GET, HEAD and OPTIONS) from a
   * page of another site: an {@code Origin} that is neither the server's own nor in
   * {@code http.allowedOrigins}, or, without one, {@code Sec-Fetch-Site: cross-site}.
   */
  void refuseCrossSite(RoutingContext ctx) {
    HttpServerRequest request = ctx.request();
    if (SAFE_METHODS.contains(request.method())) {
      ctx.next();
      return;
    }
    String origin = request.getHeader(HttpHeaders.ORIGIN);
    if (origin != null) {
      if (originAllowed(request, origin)) {
        ctx.next();
      } else {
        refuseOrigin(ctx, origin, request.method() + " " + abbreviate(request.path()));
      }
      return;
    }
    String site = request.getHeader("Sec-Fetch-Site");
    if (site != null && site.strip().equalsIgnoreCase("cross-site")) {
      refuse(ctx, 403, "cross_site_request", "Sec-Fetch-Site: cross-site", "http.allowedOrigins",
          "a page of another site may not " + request.method() + " " + abbreviate(request.path())
              + ": the browser said so (Sec-Fetch-Site: cross-site) without naming the origin, which"
              + " http.allowedOrigins could allow");
      return;
    }
    ctx.next();
  }

  /**
   * Refuses (403) a WebSocket upgrade from a page of another origin (browsers always send
   * {@code Origin} with one); answers whether the upgrade may go on.
   */
  boolean allowWebSocket(RoutingContext ctx) {
    String origin = ctx.request().getHeader(HttpHeaders.ORIGIN);
    if (origin == null || originAllowed(ctx.request(), origin)) {
      return true;
    }
    refuseOrigin(ctx, origin, "a WebSocket to /ws");
    return false;
  }

  private void refuseOrigin(RoutingContext ctx, String origin, String what) {
    refuse(ctx, 403, "forbidden_origin", "Origin: " + abbreviate(origin), "http.allowedOrigins",
        "a page of origin '" + abbreviate(origin) + "' may not open " + what + ": only this server's own pages"
            + " and the origins in http.allowedOrigins may; add the origin there to allow it");
  }

  private static void refuse(RoutingContext ctx, int status, String reason, String refused, String configKey,
      String message) {
    HttpResponses.json(ctx, status, new JsonObject().put("error", reason).put("message", message)
        .put("refused", refused).put("configKey", configKey));
  }

  /** Whether {@code origin} is the request's own (same scheme's host and port as its Host) or an allowed one. */
  private boolean originAllowed(HttpServerRequest request, String origin) {
    String o = origin.strip().toLowerCase(Locale.ROOT);
    if (options.getAllowedOrigins().contains("*") || options.getAllowedOrigins().contains(o)) {
      return true;
    }
    HostAndPort authority = request.authority();
    if (authority == null) {
      return false;
    }
    URI uri;
    try {
      uri = new URI(o);
    } catch (URISyntaxException e) {
      return false; // "null" (a sandboxed frame, a file) and garbage are no origin of this server
    }
    if (uri.getScheme() == null || uri.getHost() == null) {
      return false;
    }
    int defaultPort = switch (uri.getScheme()) {
      case "http", "ws" -> 80;
      case "https", "wss" -> 443;
      default -> -1;
    };
    int originPort = uri.getPort() >= 0 ? uri.getPort() : defaultPort;
    // Behind a proxy the Host carries no port when it is the scheme's default.
    int hostPort = authority.port() >= 0 ? authority.port() : defaultPort;
    return originPort >= 0 && originPort == hostPort
        && unbracketed(uri.getHost()).equals(unbracketed(authority.host().toLowerCase(Locale.ROOT)));
  }

  private static String unbracketed(String host) {
    return host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
  }

  /**
   * Records the request's route, status and duration when it ends; the time an acquire waited for
   * its grant (between {@link #ACQUIRE_WAIT_STARTED} and {@link #ACQUIRE_WAIT_ENDED}, or the end
   * when the client left first) is recorded as acquire wait instead of request time.
   */
  void measure(RoutingContext ctx) {
    long start = System.nanoTime();
    ctx.addEndHandler(v -> {
      long end = System.nanoTime();
      String route = ctx.currentRoute() == null || ctx.currentRoute().getPath() == null ? routeName(ctx)
          : ctx.currentRoute().getPath();
      int status = ctx.response().getStatusCode();
      long nanos = end - start;
      Long waitStarted = ctx.get(ACQUIRE_WAIT_STARTED);
      if (waitStarted != null) {
        Long waitEnded = ctx.get(ACQUIRE_WAIT_ENDED);
        long waited = Math.max(0, (waitEnded == null ? end : waitEnded) - waitStarted);
        metrics.acquireWait(status, waited);
        nanos = Math.max(0, nanos - waited);
      }
      metrics.http(route, status, nanos);
    });
    ctx.next();
  }

  /** Context key: {@link System#nanoTime()} when an acquire was sent to the mutex layer. */
  static final String ACQUIRE_WAIT_STARTED = "fdbcoord.acquireWaitStarted";
  /** Context key: {@link System#nanoTime()} when the mutex layer answered that acquire. */
  static final String ACQUIRE_WAIT_ENDED = "fdbcoord.acquireWaitEnded";

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
   * application/x-www-form-urlencoded, multipart, text) or not declared at all is refused with 415
   * before the body handler tries to parse it as a form. This also keeps other sites' pages out:
   * the only bodies a page may send to another origin without a CORS preflight (which this server
   * never grants) are forms, text and undeclared blobs.
   */
  void requireJsonBody(RoutingContext ctx) {
    String type = ctx.request().getHeader(HttpHeaders.CONTENT_TYPE);
    String length = ctx.request().getHeader(HttpHeaders.CONTENT_LENGTH);
    boolean hasBody = (length != null && !length.equals("0"))
        || ctx.request().getHeader(HttpHeaders.TRANSFER_ENCODING) != null;
    if (!hasBody) {
      ctx.next();
      return;
    }
    if (type == null) {
      error(ctx, 415, "unsupported_media_type", "request bodies are JSON: send 'Content-Type: application/json'"
          + " (with curl: -H 'Content-Type: application/json' or --json); this request declared no type");
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
