package io.github.fdbcoord.service;

import io.github.fdbcoord.client.CoordinationClient;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The HTTP/JSON face of the service (routes in docs/vertx.md). Requests are forwarded to the
 * layers' event-bus addresses, so HTTP and the event bus share one implementation and one set of
 * failure codes (the HTTP status is the failure code). Bad input of any kind is a 4xx with
 * {@code {"error": reason, "message": text}}; never a stack trace.
 */
public final class HttpVerticle extends VerticleBase {
  private final CoordinationConfig config;
  private final Metrics metrics;
  private final Supplier<Future<JsonObject>> health;
  private CoordinationClient client;
  private HttpServer server;
  private Router router;
  /** Acquire requests waiting for their reply: answered 503 closed when this verticle stops. */
  private final Map<RoutingContext, JsonObject> acquiring = new ConcurrentHashMap<>();
  private final Set<WebSocketSession> sessions = ConcurrentHashMap.newKeySet();
  private volatile boolean stopping;

  public HttpVerticle(CoordinationConfig config, Metrics metrics, Supplier<Future<JsonObject>> health) {
    this.config = config;
    this.metrics = metrics;
    this.health = health;
  }

  @Override
  public Future<?> start() {
    client = CoordinationClient.create(vertx, config.addressPrefix());
    Router router = Router.router(vertx);
    router.route().handler(this::measure);
    router.route().handler(this::requireValidPath);
    DashboardRoutes dashboard = new DashboardRoutes(vertx, config, client, this::forward, health);
    dashboard.mountPublic(router);
    if (config.httpToken() != null) {
      router.route().handler(this::authenticate);
    }
    router.get("/ws").handler(ctx -> ctx.request().toWebSocket()
        .onSuccess(ws -> new WebSocketSession(vertx, ws, config, client, sessions))
        .onFailure(e -> {
          if (!ctx.response().ended()) {
            error(ctx, 400, "bad_request", "WebSocket upgrade failed: " + e.getMessage());
          }
        }));
    router.route().handler(this::requireJsonBody);
    router.route().handler(BodyHandler.create(false).setBodyLimit(config.bodyLimit()));
    dashboard.mount(router);

    router.route("/health").method(HttpMethod.GET).method(HttpMethod.HEAD).handler(ctx -> health.get().onComplete(ar -> {
      if (ar.succeeded()) {
        json(ctx, 200, ar.result());
      } else {
        json(ctx, 503, new JsonObject().put("status", "DOWN").put("error", String.valueOf(ar.cause().getMessage())));
      }
    }));
    router.route("/metrics").method(HttpMethod.GET).method(HttpMethod.HEAD).handler(ctx -> ctx.response()
        .putHeader(HttpHeaders.CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")
        .end(metrics.scrape()));

    // Directories: the path is the URL path after /directories/, one segment per element (percent-encoded).
    router.post("/directories").handler(ctx -> {
      JsonObject body = body(ctx);
      if (body == null) {
        return;
      }
      boolean createOrOpen = Requests.optionalBoolean(body, "createOrOpen", false);
      body.remove("createOrOpen");
      forward(ctx, client.directoryAddress(), createOrOpen ? "createOrOpen" : "create", body,
          createOrOpen ? 200 : 201);
    });
    router.post("/directories/move").handler(ctx -> {
      JsonObject body = body(ctx);
      if (body != null) {
        forward(ctx, client.directoryAddress(), "move", body, 200);
      }
    });
    router.get("/directories").handler(ctx -> list(ctx, List.of()));
    router.getWithRegex("/directories/.+").handler(ctx -> {
      List<String> path = directoryPath(ctx);
      if (path == null) {
        return;
      }
      Boolean listing = booleanParam(ctx, "list");
      if (listing == null) {
        return;
      }
      if (listing) {
        list(ctx, path);
      } else {
        forward(ctx, client.directoryAddress(), "open", new JsonObject().put("path", new JsonArray(path))
            .put("layer", ctx.request().getParam("layer")), 200);
      }
    });
    router.deleteWithRegex("/directories/.+").handler(ctx -> {
      List<String> path = directoryPath(ctx);
      if (path != null) {
        Boolean ifExists = booleanParam(ctx, "ifExists");
        if (ifExists == null) {
          return;
        }
        forward(ctx, client.directoryAddress(), ifExists ? "removeIfExists" : "remove",
            new JsonObject().put("path", new JsonArray(path)), 200);
      }
    });

    router.post("/allocators/:name/allocate").handler(ctx -> forward(ctx, client.allocatorAddress(), "allocate",
        new JsonObject().put("name", ctx.pathParam("name")), 200));
    router.post("/allocators/:name/allocate-prefix").handler(ctx -> forward(ctx, client.allocatorAddress(),
        "allocatePrefix", new JsonObject().put("name", ctx.pathParam("name")), 200));

    router.get("/interners").handler(ctx -> forward(ctx, client.internerAddress(), "listNamespaces",
        new JsonObject(), 200));
    for (String action : List.of("intern", "lookup", "resolve")) {
      router.post("/interners/:ns/" + action).handler(ctx -> {
        JsonObject body = body(ctx);
        if (body != null) {
          forward(ctx, client.internerAddress(), action, body.put("namespace", ctx.pathParam("ns")), 200);
        }
      });
    }
    router.delete("/interners/:ns").handler(ctx -> forward(ctx, client.internerAddress(), "removeNamespace",
        new JsonObject().put("namespace", ctx.pathParam("ns")), 200));

    router.get("/mutexes").handler(ctx -> {
      JsonObject body = new JsonObject().put("after", ctx.request().getParam("after"));
      if (putLimit(ctx, body)) {
        forward(ctx, client.mutexAddress(), "held", body, 200);
      }
    });
    router.get("/mutexes/:name").handler(ctx -> forward(ctx, client.mutexAddress(), "state",
        new JsonObject().put("name", ctx.pathParam("name")), 200));
    router.post("/mutexes/:name/acquire").handler(ctx -> {
      JsonObject body = body(ctx);
      if (body == null) {
        return;
      }
      boolean wait = Requests.optionalBoolean(body, "wait", true);
      body.remove("wait");
      body.put("name", ctx.pathParam("name"));
      Long timeoutMs = Requests.optionalLong(body, "timeoutMs", 0, config.maxAcquireTimeout().toMillis());
      long sendTimeout = 30_000 + (timeoutMs == null ? config.maxAcquireTimeout().toMillis() : timeoutMs);
      if (wait) {
        acquire(ctx, body, sendTimeout);
      } else {
        forward(ctx, client.mutexAddress(), "tryAcquire", body, 200, sendTimeout);
      }
    });
    for (String action : List.of("release", "heartbeat", "leave")) {
      router.post("/mutexes/:name/" + action).handler(ctx -> {
        JsonObject body = body(ctx);
        if (body != null) {
          forward(ctx, client.mutexAddress(), action, body.put("name", ctx.pathParam("name")), 200);
        }
      });
    }

    // Everything that escapes a handler still answers JSON, never a stack trace.
    router.route().failureHandler(this::failure);
    for (int code : new int[] {400, 404, 405, 413, 414, 431, 500}) {
      router.errorHandler(code, this::failure);
    }

    server = vertx.createHttpServer(new HttpServerOptions()
        .setHost(config.httpHost()).setPort(config.httpPort())
        .addWebSocketSubProtocol(DashboardRoutes.WEBSOCKET_PROTOCOL)
        .setMaxWebSocketFrameSize(65536).setMaxWebSocketMessageSize((int) Math.min(Integer.MAX_VALUE, config.bodyLimit())));
    this.router = router;
    return server.requestHandler(router).listen().recover(e -> Future.failedFuture(new IllegalStateException(
        "cannot listen for HTTP on " + config.httpHost() + ":" + config.httpPort() + " (http.host, http.port): "
            + e.getMessage(), e)));
  }

  /**
   * A waiting acquire lives as long as its request: when the client goes away before the answer,
   * the waiter is abandoned (it leaves the queue at once); a grant that arrives after the client
   * went away is released.
   */
  private void acquire(RoutingContext ctx, JsonObject body, long sendTimeoutMs) {
    if (stopping) {
      error(ctx, 503, "closed", "the service on this node is stopping");
      return;
    }
    Object name = body.getValue("name");
    Object owner = body.getValue("owner");
    acquiring.put(ctx, new JsonObject().put("name", name).put("owner", owner));
    ctx.response().closeHandler(v -> {
      if (acquiring.remove(ctx) != null) {
        abandon(name, owner);
      }
    });
    client.request(client.mutexAddress(), "acquire", body, sendTimeoutMs).onComplete(ar -> {
      if (ar.succeeded() && Boolean.TRUE.equals(ar.result().getBoolean("held"))) {
        // One event-loop turn before writing a grant: a close the client already sent is handled
        // first, so the grant is given back at once instead of being written to nobody (and held
        // until its lease runs out).
        vertx.setTimer(1, id -> answerAcquire(ctx, ar, name, owner));
      } else {
        answerAcquire(ctx, ar, name, owner);
      }
    });
  }

  private void answerAcquire(RoutingContext ctx, io.vertx.core.AsyncResult<JsonObject> ar, Object name, Object owner) {
    if (acquiring.remove(ctx) == null) {
      // Nobody to answer (the client left, or 503 closed was sent): a late grant is given back.
      if (ar.succeeded() && Boolean.TRUE.equals(ar.result().getBoolean("held"))) {
        client.request(client.mutexAddress(), "release", new JsonObject().put("name", name).put("owner", owner)
            .put("token", ar.result().getString("token")));
      }
      return;
    }
    if (ar.succeeded()) {
      json(ctx, 200, ar.result());
    } else if (ar.cause() instanceof ReplyException) {
      ReplyException e = (ReplyException) ar.cause();
      error(ctx, FailureCodes.codeOf(e), FailureCodes.reasonOf(e), FailureCodes.detailOf(e));
    } else {
      error(ctx, 503, "unavailable", String.valueOf(ar.cause().getMessage()));
    }
  }

  private Future<JsonObject> abandon(Object name, Object owner) {
    if (!(name instanceof String) || !(owner instanceof String)) {
      return Future.succeededFuture(); // the acquire itself was refused as a bad request
    }
    return client.request(client.mutexAddress(), "abandon", new JsonObject().put("name", name).put("owner", owner));
  }

  /**
   * Answers every waiting acquirer 503 closed (and takes it out of its queue) and closes every
   * WebSocket with 1001 "going away" before the server stops accepting.
   */
  @Override
  public Future<?> stop() {
    stopping = true;
    List<Future<?>> abandoned = new ArrayList<>();
    for (RoutingContext ctx : new ArrayList<>(acquiring.keySet())) {
      JsonObject waiter = acquiring.remove(ctx);
      if (waiter != null) {
        error(ctx, 503, "closed", "the service on this node is stopping: the acquire was abandoned and its owner"
            + " left the queue");
        abandoned.add(abandon(waiter.getValue("name"), waiter.getValue("owner")));
      }
    }
    for (WebSocketSession session : new ArrayList<>(sessions)) {
      session.shutdown("the coordination service on this node is stopping");
    }
    return Future.join(abandoned).transform(x -> server == null ? Future.succeededFuture() : server.close());
  }



  /** The port the server listens on (useful with port 0). */
  public int actualPort() {
    return server.actualPort();
  }

  private void measure(RoutingContext ctx) {
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

  private void authenticate(RoutingContext ctx) {
    String header = ctx.request().getHeader(HttpHeaders.AUTHORIZATION);
    if (header == null && "/ws".equals(ctx.request().path())) {
      String offered = DashboardRoutes.webSocketToken(ctx.request());
      header = offered == null ? null : "Bearer " + offered;
    }
    // The scheme is case-insensitive (RFC 9110 section 11.1); the token is compared in constant time.
    String token = header != null && header.length() > 7 && header.regionMatches(true, 0, "Bearer ", 0, 7)
        ? header.substring(7).strip() : "";
    if (MessageDigest.isEqual(token.getBytes(StandardCharsets.UTF_8),
        config.httpToken().getBytes(StandardCharsets.UTF_8))) {
      ctx.next();
      return;
    }
    ctx.response().putHeader("WWW-Authenticate", "Bearer");
    error(ctx, 401, "unauthorized", header == null ? "this server requires 'Authorization: Bearer <token>'"
        : "the bearer token is wrong");
  }

  /**
   * Refuses a URL whose percent-encoding does not decode to UTF-8 (400): the router and the
   * decoders below would otherwise turn bad bytes into U+FFFD and look up another name.
   */
  private void requireValidPath(RoutingContext ctx) {
    String raw = ctx.request().path();
    if (raw != null && raw.indexOf('%') >= 0) {
      try {
        for (String segment : raw.split("/", -1)) {
          strictDecode(segment);
        }
      } catch (IllegalArgumentException e) {
        error(ctx, 400, "bad_request", "the URL path is not valid percent-encoded UTF-8: " + e.getMessage());
        return;
      }
    }
    ctx.next();
  }

  /** The percent-decoding of {@code segment} ('+' is itself), refusing malformed escapes and invalid UTF-8. */
  static String strictDecode(String segment) {
    byte[] bytes = segment.getBytes(StandardCharsets.UTF_8);
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(bytes.length);
    for (int i = 0; i < bytes.length; i++) {
      if (bytes[i] != '%') {
        out.write(bytes[i]);
        continue;
      }
      int hi = i + 2 < bytes.length ? Character.digit(bytes[i + 1], 16) : -1;
      int lo = i + 2 < bytes.length ? Character.digit(bytes[i + 2], 16) : -1;
      if (hi < 0 || lo < 0) {
        throw new IllegalArgumentException("malformed escape at '" + abbreviate(segment.substring(i)) + "'");
      }
      out.write(hi * 16 + lo);
      i += 2;
    }
    try {
      return StandardCharsets.UTF_8.newDecoder()
          .onMalformedInput(java.nio.charset.CodingErrorAction.REPORT)
          .onUnmappableCharacter(java.nio.charset.CodingErrorAction.REPORT)
          .decode(java.nio.ByteBuffer.wrap(out.toByteArray())).toString();
    } catch (java.nio.charset.CharacterCodingException e) {
      throw new IllegalArgumentException("'" + abbreviate(segment) + "' is not UTF-8");
    }
  }

  /**
   * Bodies are JSON. A body declared as something else (curl's default
   * application/x-www-form-urlencoded, multipart, text) is refused with 415 before the body handler
   * tries to parse it as a form.
   */
  private void requireJsonBody(RoutingContext ctx) {
    String type = ctx.request().getHeader(HttpHeaders.CONTENT_TYPE);
    String length = ctx.request().getHeader(HttpHeaders.CONTENT_LENGTH);
    boolean hasBody = (length != null && !length.equals("0"))
        || ctx.request().getHeader(HttpHeaders.TRANSFER_ENCODING) != null;
    if (type == null || !hasBody) {
      ctx.next();
      return;
    }
    String media = type.split(";", 2)[0].strip().toLowerCase(java.util.Locale.ROOT);
    if (media.equals("application/json") || (media.startsWith("application/") && media.endsWith("+json"))) {
      ctx.next();
      return;
    }
    error(ctx, 415, "unsupported_media_type", "request bodies are JSON: send 'Content-Type: application/json'"
        + " (with curl: -H 'Content-Type: application/json' or --json), got '" + abbreviate(type) + "'");
  }

  /** The optional boolean query parameter {@code name} (absent: false), or null after answering 400. */
  private static Boolean booleanParam(RoutingContext ctx, String name) {
    String value = ctx.request().getParam(name);
    if (value == null || value.equals("false")) {
      return false;
    }
    if (value.equals("true")) {
      return true;
    }
    error(ctx, 400, "bad_request", "query parameter '" + name + "' must be true or false, got '"
        + abbreviate(value) + "'");
    return null;
  }

  /** The methods some route accepts on {@code path}, for a 405's Allow header. */
  private String allowedMethods(String path) {
    java.util.Set<String> methods = new java.util.TreeSet<>();
    for (io.vertx.ext.web.Route route : router.getRoutes()) {
      // A path template ("/mutexes/:name") is in getPath(); a pure regex route has only its name (the regex).
      String regex = route.getPath() != null ? route.getPath().replaceAll(":[A-Za-z0-9_]+", "[^/]+")
          : route.isRegexPath() ? route.getName() : null;
      if (route.methods() == null || route.methods().isEmpty() || regex == null) {
        continue;
      }
      if (path.matches(regex)) {
        route.methods().forEach(m -> methods.add(m.name()));
      }
    }
    return String.join(", ", methods);
  }

  private void list(RoutingContext ctx, List<String> path) {
    JsonObject body = new JsonObject().put("path", new JsonArray(path))
        .put("startAfter", ctx.request().getParam("startAfter"));
    if (putLimit(ctx, body)) {
      forward(ctx, client.directoryAddress(), "list", body, 200);
    }
  }

  /** Copies the optional integer query parameter 'limit' into {@code body}; false (400 sent) when it is not one. */
  private boolean putLimit(RoutingContext ctx, JsonObject body) {
    String limit = ctx.request().getParam("limit");
    if (limit != null) {
      try {
        body.put("limit", Integer.parseInt(limit));
      } catch (NumberFormatException e) {
        error(ctx, 400, "bad_request", "query parameter 'limit' must be an integer, got '" + abbreviate(limit) + "'");
        return false;
      }
    }
    return true;
  }

  /** The directory path in the URL after /directories/, each segment percent-decoded. */
  private List<String> directoryPath(RoutingContext ctx) {
    String raw = ctx.request().path().substring("/directories/".length());
    List<String> out = new ArrayList<>();
    try {
      for (String segment : raw.split("/", -1)) {
        out.add(strictDecode(segment));
      }
    } catch (IllegalArgumentException e) {
      error(ctx, 400, "bad_request", "the directory path is not valid percent-encoding: " + e.getMessage());
      return null;
    }
    return out;
  }

  /** The request's JSON object (empty when there is no body), or null after answering 400. */
  private static JsonObject body(RoutingContext ctx) {
    if (ctx.body() == null || ctx.body().isEmpty()) {
      return new JsonObject();
    }
    Object value;
    try {
      value = io.vertx.core.json.Json.decodeValue(ctx.body().buffer());
    } catch (DecodeException e) {
      error(ctx, 400, "bad_request", "the body is not valid JSON: " + abbreviate(String.valueOf(e.getMessage())));
      return null;
    }
    if (!(value instanceof JsonObject)) {
      error(ctx, 400, "bad_request", "the body must be a JSON object, got " + Requests.describe(value));
      return null;
    }
    return (JsonObject) value;
  }

  private void forward(RoutingContext ctx, String address, String action, JsonObject body, int status) {
    forward(ctx, address, action, body, status, 30_000);
  }

  private void forward(RoutingContext ctx, String address, String action, JsonObject body, int status,
      long sendTimeoutMs) {
    client.request(address, action, body, sendTimeoutMs).onComplete(ar -> {
      if (ar.succeeded()) {
        json(ctx, status, ar.result());
      } else if (ar.cause() instanceof ReplyException) {
        ReplyException e = (ReplyException) ar.cause();
        error(ctx, FailureCodes.codeOf(e), FailureCodes.reasonOf(e), FailureCodes.detailOf(e));
      } else {
        error(ctx, 503, "unavailable", String.valueOf(ar.cause().getMessage()));
      }
    });
  }

  private void failure(RoutingContext ctx) {
    if (ctx.response().ended()) {
      return;
    }
    Throwable t = ctx.failure();
    int status = ctx.statusCode() > 0 ? ctx.statusCode() : 500;
    if (t instanceof ReplyException) {
      ReplyException e = (ReplyException) t;
      error(ctx, FailureCodes.codeOf(e), FailureCodes.reasonOf(e), FailureCodes.detailOf(e));
      return;
    }
    if (t instanceof IllegalArgumentException) {
      error(ctx, 400, "bad_request", t.getMessage());
      return;
    }
    if (t == null && status == 500 && !validPath(ctx)) {
      // The router could not decode the URL path; that is the client's mistake.
      error(ctx, 400, "bad_request", "the URL path is not valid percent-encoding: "
          + abbreviate(ctx.request().path()));
      return;
    }
    switch (status) {
      case 404:
        error(ctx, 404, "not_found", "no route for " + ctx.request().method() + " " + ctx.request().path());
        break;
      case 405:
        ctx.response().putHeader(HttpHeaders.ALLOW, allowedMethods(ctx.request().path()));
        error(ctx, 405, "method_not_allowed", ctx.request().method() + " is not allowed on " + ctx.request().path());
        break;
      case 413:
        error(ctx, 413, "too_large", "the body is larger than the limit of " + config.bodyLimit() + " bytes");
        break;
      case 400:
        error(ctx, 400, "bad_request", t == null ? "bad request" : String.valueOf(t.getMessage()));
        break;
      default:
        if (t != null) {
          io.vertx.core.internal.logging.LoggerFactory.getLogger(HttpVerticle.class)
              .warn("HTTP request failed", t);
        }
        error(ctx, status >= 400 && status < 500 ? status : 500, "internal", "the request failed"
            + (t == null ? "" : ": " + t.getClass().getSimpleName()));
    }
  }

  private static boolean validPath(RoutingContext ctx) {
    try {
      ctx.normalizedPath();
      return true;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  private static void json(RoutingContext ctx, int status, JsonObject body) {
    if (ctx.response().ended()) {
      return;
    }
    ctx.response().setStatusCode(status).putHeader(HttpHeaders.CONTENT_TYPE, "application/json")
        .end(body.encode());
  }

  static void error(RoutingContext ctx, int status, String reason, String message) {
    json(ctx, status, new JsonObject().put("error", reason).put("message", message));
  }

  static String abbreviate(String s) {
    return s.length() <= 200 ? s : s.substring(0, 200) + "...";
  }
}
