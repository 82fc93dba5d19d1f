package io.github.fdbcoord.service;

import io.github.fdbcoord.client.CoordinationClient;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.handler.BodyHandler;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Supplier;

import static io.github.fdbcoord.service.HttpResponses.error;
import static io.github.fdbcoord.service.HttpResponses.json;

/**
 * The HTTP/JSON face of the service (routes in docs/vertx.md). Requests are forwarded to the
 * layers' event-bus addresses ({@link LayerForward}), so HTTP and the event bus share one
 * implementation and one set of failure codes (the HTTP status is the failure code). Bad input of
 * any kind is a 4xx with {@code {"error": reason, "message": text}}; never a stack trace.
 *
 * <p>This class assembles the server: the filters ({@link HttpFilters}), the routes of each
 * primitive ({@link DirectoryRoutes}, {@link AllocatorRoutes}, {@link InternerRoutes},
 * {@link MutexRoutes}), the dashboard, health and metrics, and the error mapping
 * ({@link HttpErrorHandler}).
 */
public final class HttpVerticle extends VerticleBase {
  private final CoordinationConfig config;
  private final Metrics metrics;
  private final Supplier<Future<JsonObject>> health;
  private final LocalLayers local;
  private final Function<Path, Future<JsonObject>> backup;
  private HttpServer server;
  private MutexRoutes mutexRoutes;
  private final Set<WebSocketSession> sessions = ConcurrentHashMap.newKeySet();

  public HttpVerticle(CoordinationConfig config, Metrics metrics, Supplier<Future<JsonObject>> health) {
    this(config, metrics, health, new LocalLayers(), target -> Future.failedFuture(new IllegalStateException(
        "this server has no store to back up")));
  }

  /**
   * A server whose routes call the layers in {@code local} directly, the others over the event bus;
   * {@code backup} backs the store up into a directory ({@link AdminRoutes}).
   */
  HttpVerticle(CoordinationConfig config, Metrics metrics, Supplier<Future<JsonObject>> health, LocalLayers local,
      Function<Path, Future<JsonObject>> backup) {
    this.config = config;
    this.metrics = metrics;
    this.health = health;
    this.local = local;
    this.backup = backup;
  }

  @Override
  public Future<?> start() {
    CoordinationClient client = CoordinationClient.create(vertx, config.addressPrefix());
    LayerForward forward = new LayerForward(client, local);
    HttpFilters filters = new HttpFilters(config, metrics);
    Router router = Router.router(vertx);
    router.route().handler(filters::measure);
    router.route().handler(filters::requireValidPath);
    DashboardRoutes dashboard = new DashboardRoutes(vertx, config, client, forward, health);
    dashboard.mountPublic(router);
    if (config.httpToken() != null) {
      router.route().handler(filters::authenticate);
    }
    router.get("/ws").handler(ctx -> ctx.request().toWebSocket()
        .onSuccess(ws -> new WebSocketSession(vertx, ws, config, client, sessions))
        .onFailure(e -> {
          if (!ctx.response().ended()) {
            error(ctx, 400, "bad_request", "WebSocket upgrade failed: " + e.getMessage());
          }
        }));
    router.route().handler(filters::requireJsonBody);
    router.route().handler(BodyHandler.create(false).setBodyLimit(config.bodyLimit()));
    dashboard.mount(router);
    mountOperations(router);
    new AdminRoutes(config, backup).mount(router);
    new DirectoryRoutes(forward).mount(router);
    new AllocatorRoutes(forward).mount(router);
    new InternerRoutes(forward).mount(router);
    mutexRoutes = new MutexRoutes(vertx, config, forward);
    mutexRoutes.mount(router);
    new HttpErrorHandler(router, config.bodyLimit()).mount();

    server = vertx.createHttpServer(new HttpServerOptions()
        .setHost(config.httpHost()).setPort(config.httpPort())
        .addWebSocketSubProtocol(DashboardRoutes.WEBSOCKET_PROTOCOL)
        .setMaxWebSocketFrameSize(65536).setMaxWebSocketMessageSize((int) Math.min(Integer.MAX_VALUE, config.bodyLimit())));
    return server.requestHandler(router).listen().recover(e -> Future.failedFuture(new IllegalStateException(
        "cannot listen for HTTP on " + config.httpHost() + ":" + config.httpPort() + " (http.host, http.port): "
            + e.getMessage(), e)));
  }

  /** {@code /health} (200 UP or 503 DOWN) and {@code /metrics} (Prometheus text). */
  private void mountOperations(Router router) {
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
  }

  /**
   * Answers every waiting acquirer 503 closed (and takes it out of its queue) and closes every
   * WebSocket with 1001 "going away" before the server stops accepting.
   */
  @Override
  public Future<?> stop() {
    Future<?> abandoned = mutexRoutes == null ? Future.succeededFuture() : mutexRoutes.close();
    for (WebSocketSession session : new ArrayList<>(sessions)) {
      session.shutdown("the coordination service on this node is stopping");
    }
    return abandoned.transform(x -> server == null ? Future.succeededFuture() : server.close());
  }

  /** The port the server listens on (useful with port 0). */
  public int actualPort() {
    return server.actualPort();
  }
}
