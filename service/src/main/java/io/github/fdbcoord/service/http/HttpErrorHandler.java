package io.github.fdbcoord.service.http;

import io.github.fdbcoord.service.eventbus.FailureCodes;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;
import io.vertx.ext.web.Route;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

import java.util.Set;
import java.util.TreeSet;

import static io.github.fdbcoord.service.http.HttpResponses.abbreviate;
import static io.github.fdbcoord.service.http.HttpResponses.error;

/** Everything that escapes a route still answers JSON with a fitting status, never a stack trace. */
final class HttpErrorHandler {
  private static final Logger LOG = LoggerFactory.getLogger(HttpVerticle.class); // the logger name operators configure

  private final Router router;
  private final long bodyLimit;

  HttpErrorHandler(Router router, long bodyLimit) {
    this.router = router;
    this.bodyLimit = bodyLimit;
  }

  /** Installs this as the router's failure handler and as its handler of the error statuses. */
  void mount() {
    router.route().failureHandler(this::failure);
    for (int code : new int[] {400, 404, 405, 413, 414, 431, 500}) {
      router.errorHandler(code, this::failure);
    }
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
        error(ctx, 413, "too_large", "the body is larger than the limit of " + bodyLimit + " bytes");
        break;
      case 400:
        error(ctx, 400, "bad_request", t == null ? "bad request" : String.valueOf(t.getMessage()));
        break;
      default:
        if (t != null) {
          LOG.warn("HTTP request failed", t);
        }
        error(ctx, status >= 400 && status < 500 ? status : 500, "internal", "the request failed"
            + (t == null ? "" : ": " + t.getClass().getSimpleName()));
    }
  }

  /** The methods some route accepts on {@code path}, for a 405's Allow header. */
  private String allowedMethods(String path) {
    Set<String> methods = new TreeSet<>();
    for (Route route : router.getRoutes()) {
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

  private static boolean validPath(RoutingContext ctx) {
    try {
      ctx.normalizedPath();
      return true;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }
}
