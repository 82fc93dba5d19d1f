package io.github.fdbcoord.service.http;

import io.github.fdbcoord.client.CoordinationClient;
import io.github.fdbcoord.service.eventbus.LocalLayers;
import io.github.fdbcoord.service.eventbus.Metrics;
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

import static io.github.fdbcoord.service.http.HttpResponses.error;
import static io.github.fdbcoord.service.http.HttpResponses.json;

/**
 * The HTTP/JSON face of the service (routes in docs/vertx.md). Requests are forwarded to the
 * layers' event-bus addresses ({@link LayerForward}), so HTTP and the event bus share one
 * implementation and one set of failure codes (the HTTP status is the failure code). Bad input of
 * any kind is a 4xx with {@code {"error": reason, "message": text}}; never a stack trace.
 *
 * <p>This class assembles the server: the filters ({@link HttpFilters}), the routes of each
 * primitive ({@link DirectoryRoutes}, {@link AllocatorRoutes}, {@link InternerRoutes},
 * {@link MutexRoutes}, {@link ElectionRoutes}, {@link SemaphoreRoutes}, {@link ReadWriteLockRoutes}), the dashboard, health and metrics, and the error mapping
 * ({@link HttpErrorHandler}).
 */
public final class HttpVerticle extends VerticleBase {
  private final HttpOptions options;
  private final Metrics metrics;
  private final Supplier<Future<JsonObject>> health;
  private final LocalLayers local;
  private final Function<Path, Future<JsonObject>> backup;
  private HttpServer server;
  private MutexRoutes mutexRoutes;
  private ElectionRoutes electionRoutes;
  private SemaphoreRoutes semaphoreRoutes;
  private ReadWriteLockRoutes readWriteLockRoutes;
  private ClusterMembers members;
  private final Set<WebSocketSession> sessions = ConcurrentHashMap.newKeySet();

  /**
   * A server whose routes reach every layer over the event bus, without backups; {@code health}
   * answers {@code /health} (a failed future is 503 DOWN).
   */
  public HttpVerticle(HttpOptions options, Metrics metrics, Supplier<Future<JsonObject>> health) {
    this(options, metrics, health, new LocalLayers(), target -> Future.failedFuture(new IllegalStateException(
        "this server has no store to back up")));
  }

  /**
   * A server whose routes call the layers in {@code local} directly, the others over the event bus;
   * {@code backup} backs the store up into a directory ({@link AdminRoutes}).
   */
  public HttpVerticle(HttpOptions options, Metrics metrics, Supplier<Future<JsonObject>> health, LocalLayers local,
      Function<Path, Future<JsonObject>> backup) {
    this.options = options;
    this.metrics = metrics;
    this.health = health;
    this.local = local;
    this.backup = backup;
  }

  /** Mounts the routes and listens; fails when the server cannot listen on {@code host:port}. */
  @Override
  public Future<?> start() {
    CoordinationClient client = CoordinationClient.create(vertx, options.getAddressPrefix());
    LayerForward forward = new LayerForward(client, local);
    HttpFilters filters = new HttpFilters(options, metrics);
    Router router = Router.router(vertx);
    router.route().handler(filters::measure);
    router.route().handler(filters::requireKnownHost);
    router.route().handler(filters::requireValidPath);
    router.route().handler(filters::refuseCrossSite);
    members = new ClusterMembers(vertx, options, () -> server.actualPort());
    DashboardRoutes dashboard = new DashboardRoutes(vertx, options, client, forward, health, members);
    dashboard.mountPublic(router);
    if (options.getToken() != null) {
      router.route().handler(filters::authenticate);
    }
    router.get("/ws").handler(ctx -> {
      if (filters.allowWebSocket(ctx)) {
        ctx.next();
      }
    }).handler(ctx -> ctx.request().toWebSocket()
        .onSuccess(ws -> new WebSocketSession(vertx, ws, options, client, sessions))
        .onFailure(e -> {
          if (!ctx.response().ended()) {
            error(ctx, 400, "bad_request", "WebSocket upgrade failed: " + e.getMessage());
          }
        }));
    router.route().handler(filters::requireJsonBody);
    router.route().handler(BodyHandler.create(false).setBodyLimit(options.getBodyLimit()));
    dashboard.mount(router);
    mountOperations(router);
    new AdminRoutes(options, backup).mount(router);
    new DirectoryRoutes(forward).mount(router);
    new AllocatorRoutes(forward).mount(router);
    new InternerRoutes(forward).mount(router);
    mutexRoutes = new MutexRoutes(vertx, options, forward);
    mutexRoutes.mount(router);
    electionRoutes = new ElectionRoutes(vertx, options, forward);
    electionRoutes.mount(router);
    semaphoreRoutes = new SemaphoreRoutes(vertx, options, forward);
    semaphoreRoutes.mount(router);
    readWriteLockRoutes = new ReadWriteLockRoutes(vertx, options, forward);
    readWriteLockRoutes.mount(router);
    new HttpErrorHandler(router, options.getBodyLimit()).mount();

    server = vertx.createHttpServer(new HttpServerOptions()
        .setHost(options.getHost()).setPort(options.getPort())
        .addWebSocketSubProtocol(DashboardRoutes.WEBSOCKET_PROTOCOL)
        .setMaxWebSocketFrameSize(65536).setMaxWebSocketMessageSize((int) Math.min(Integer.MAX_VALUE, options.getBodyLimit())));
    return server.requestHandler(router).listen().onSuccess(s -> members.start()).recover(e -> Future.failedFuture(new IllegalStateException(
        "cannot listen for HTTP on " + options.getHost() + ":" + options.getPort() + " (http.host, http.port): "
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
   * Answers every waiting acquirer (mutex and semaphore) and campaign 503 closed (and takes it out of its queue) and closes every
   * WebSocket with 1001 "going away" before the server stops accepting.
   */
  @Override
  public Future<?> stop() {
    if (members != null) {
      members.stop();
    }
    Future<?> abandoned = Future.join(mutexRoutes == null ? Future.succeededFuture() : mutexRoutes.close(),
        electionRoutes == null ? Future.succeededFuture() : electionRoutes.close(),
        semaphoreRoutes == null ? Future.succeededFuture() : semaphoreRoutes.close(),
        readWriteLockRoutes == null ? Future.succeededFuture() : readWriteLockRoutes.close());
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
