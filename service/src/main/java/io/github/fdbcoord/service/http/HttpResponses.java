package io.github.fdbcoord.service.http;

import io.github.fdbcoord.service.eventbus.FailureCodes;
import io.vertx.core.AsyncResult;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

/**
 * How the HTTP face answers: JSON bodies, and failures as {@code {"error": reason, "message":
 * text}} with the event-bus failure code as the status.
 */
final class HttpResponses {
  private HttpResponses() {}

  /** Answers {@code body} with {@code status}, unless the response already ended. */
  static void json(RoutingContext ctx, int status, JsonObject body) {
    if (ctx.response().ended()) {
      return;
    }
    ctx.response().setStatusCode(status).putHeader(HttpHeaders.CONTENT_TYPE, "application/json")
        .end(body.encode());
  }

  /** Answers a failure: {@code status} with {@code {"error": reason, "message": message}}. */
  static void error(RoutingContext ctx, int status, String reason, String message) {
    json(ctx, status, new JsonObject().put("error", reason).put("message", message));
  }

  /** Answers a layer's reply with {@code status}, or its failure with the failure's code. */
  static void reply(RoutingContext ctx, AsyncResult<JsonObject> ar, int status) {
    if (ar.succeeded()) {
      json(ctx, status, ar.result());
    } else if (ar.cause() instanceof ReplyException) {
      ReplyException e = (ReplyException) ar.cause();
      error(ctx, FailureCodes.codeOf(e), FailureCodes.reasonOf(e), FailureCodes.detailOf(e));
    } else {
      error(ctx, 503, "unavailable", String.valueOf(ar.cause().getMessage()));
    }
  }

  /** {@code s}, cut to 200 characters: user input echoed in a message stays small. */
  static String abbreviate(String s) {
    return s.length() <= 200 ? s : s.substring(0, 200) + "...";
  }
}
