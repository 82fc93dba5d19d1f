package io.github.fdbcoord.service.http;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

import java.io.UncheckedIOException;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.concurrent.CompletionException;
import java.util.function.Function;

import static io.github.fdbcoord.service.http.HttpResponses.abbreviate;
import static io.github.fdbcoord.service.http.HttpResponses.error;
import static io.github.fdbcoord.service.http.HttpResponses.json;

/**
 * Operator routes under {@code /admin}: {@code POST /admin/backup} backs the durable embedded store up
 * into a directory on the service's machine. They act on the whole store, so they need the bearer token
 * even where other routes do not (a service on loopback without {@code http.token} refuses them, 403).
 */
final class AdminRoutes {
  private final HttpOptions options;
  private final Function<Path, Future<JsonObject>> backup;

  /** {@code backup}: backs the store up into a directory; fails as {@code EmbeddedDatabase.backup} does. */
  AdminRoutes(HttpOptions options, Function<Path, Future<JsonObject>> backup) {
    this.options = options;
    this.backup = backup;
  }

  void mount(Router router) {
    router.post("/admin/backup").handler(this::backup);
  }

  private void backup(RoutingContext ctx) {
    if (options.getToken() == null) {
      error(ctx, 403, "forbidden", "admin routes need a bearer token even on loopback: set http.token (or"
          + " FDBCOORD_HTTP_TOKEN) and send 'Authorization: Bearer <token>'");
      return;
    }
    JsonObject body = HttpRequests.body(ctx);
    if (body == null) {
      return;
    }
    Object directory = body.getValue("directory");
    if (!(directory instanceof String name) || name.isBlank()) {
      error(ctx, 400, "bad_request", "'directory' must be the absolute path of a missing or empty directory on the"
          + " service's machine, got " + (directory == null ? "none" : abbreviate(String.valueOf(directory))));
      return;
    }
    Path target;
    try {
      target = Path.of(name);
    } catch (InvalidPathException e) {
      error(ctx, 400, "bad_request", "'directory' is not a valid path: " + abbreviate(e.getMessage()));
      return;
    }
    if (!target.isAbsolute()) {
      error(ctx, 400, "bad_request", "'directory' must be an absolute path (the service's working directory is"
          + " not the caller's), got " + abbreviate(name));
      return;
    }
    backup.apply(target).onComplete(ar -> {
      if (ar.succeeded()) {
        json(ctx, 200, ar.result());
        return;
      }
      Throwable e = ar.cause() instanceof CompletionException c && c.getCause() != null
          ? c.getCause() : ar.cause();
      if (e instanceof IllegalArgumentException) {
        error(ctx, 400, "bad_request", e.getMessage());
      } else if (e instanceof IllegalStateException) {
        error(ctx, 409, "conflict", e.getMessage());
      } else if (e instanceof UncheckedIOException) {
        error(ctx, 500, "backup_failed", e.getMessage());
      } else {
        error(ctx, 503, "unavailable", String.valueOf(e.getMessage()));
      }
    });
  }
}
