package io.github.fdbcoord.service.http;

import io.github.fdbcoord.client.CoordinationClient;
import io.github.fdbcoord.service.eventbus.Requests;
import io.vertx.core.AsyncResult;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BinaryOperator;
import java.util.function.Predicate;

import static io.github.fdbcoord.service.http.HttpResponses.error;

/**
 * Waiting requests (a mutex acquire, an election campaign, a semaphore acquire) that live as long as their HTTP
 * request, one instance per kind: when the client goes away before the answer, the wait is abandoned (its owner leaves
 * the queue at once); a grant that arrives after the client went away, or after the node answered 503 closed, is
 * given back; on {@link #close()} every wait is answered 503 closed and abandoned, and later ones are refused.
 */
final class AcquireWaits {
  /**
   * What a kind of wait sends and reads: its actions, the fields naming the thing waited for (a name, or an array of
   * them) and the waiter, and the body of the action that gives a late grant back, from the waiter's
   * {@code {nameField, ownerField}} and the grant.
   */
  record Kind(String address, String waitAction, String abandonAction, String giveBackAction, String nameField,
      String ownerField, Predicate<JsonObject> isGrant, String what, BinaryOperator<JsonObject> giveBackBody) {
    /** A wait for one lock, given back with its name, owner and the grant's {@code tokenField}. */
    Kind(String address, String waitAction, String abandonAction, String giveBackAction, String nameField,
        String ownerField, String tokenField, Predicate<JsonObject> isGrant, String what) {
      this(address, waitAction, abandonAction, giveBackAction, nameField, ownerField, isGrant, what,
          (waiter, grant) -> waiter.copy().put(tokenField, grant.getString(tokenField)));
    }
  }

  private final Vertx vertx;
  private final CoordinationClient client;
  private final Kind kind;
  /** Requests waiting for their reply, to the name and owner they wait as: answered 503 closed on close. */
  private final Map<RoutingContext, JsonObject> waiting = new ConcurrentHashMap<>();
  private volatile boolean stopping;

  AcquireWaits(Vertx vertx, CoordinationClient client, Kind kind) {
    this.vertx = vertx;
    this.client = client;
    this.kind = kind;
  }

  /**
   * How long to wait for the reply of a wait whose body may carry {@code timeoutMs}: its own wait (the longest
   * allowed when absent) and a forwarded request's own time. A bad {@code timeoutMs} fails as a bad request.
   */
  static long sendTimeoutMs(JsonObject body, HttpOptions options) {
    Long timeoutMs = Requests.optionalLong(body, "timeoutMs", 0, options.getMaxAcquireTimeout().toMillis());
    return LayerForward.SEND_TIMEOUT_MS + (timeoutMs == null ? options.getMaxAcquireTimeout().toMillis() : timeoutMs);
  }

  /** Sends the wait with {@code body} and answers {@code ctx} with its reply, unless the client left first. */
  void send(RoutingContext ctx, JsonObject body, long sendTimeoutMs) {
    if (stopping) {
      error(ctx, 503, "closed", "the service on this node is stopping");
      return;
    }
    Object name = body.getValue(kind.nameField());
    Object owner = body.getValue(kind.ownerField());
    waiting.put(ctx, new JsonObject().put(kind.nameField(), name).put(kind.ownerField(), owner));
    ctx.response().closeHandler(v -> {
      if (waiting.remove(ctx) != null) {
        abandon(name, owner);
      }
    });
    ctx.put(HttpFilters.ACQUIRE_WAIT_STARTED, System.nanoTime());
    client.request(kind.address(), kind.waitAction(), body, sendTimeoutMs).onComplete(ar -> {
      ctx.put(HttpFilters.ACQUIRE_WAIT_ENDED, System.nanoTime());
      if (ar.succeeded() && kind.isGrant().test(ar.result())) {
        // One event-loop turn before writing a grant: a close the client already sent is handled first, so the
        // grant is given back at once instead of being written to nobody (and held until its lease runs out).
        vertx.setTimer(1, id -> answer(ctx, ar, name, owner));
      } else {
        answer(ctx, ar, name, owner);
      }
    });
  }

  private void answer(RoutingContext ctx, AsyncResult<JsonObject> ar, Object name, Object owner) {
    if (waiting.remove(ctx) == null) {
      // Nobody to answer (the client left, or 503 closed was sent): a late grant is given back.
      if (ar.succeeded() && kind.isGrant().test(ar.result())) {
        client.request(kind.address(), kind.giveBackAction(), kind.giveBackBody().apply(
            new JsonObject().put(kind.nameField(), name).put(kind.ownerField(), owner), ar.result()));
      }
      return;
    }
    HttpResponses.reply(ctx, ar, 200);
  }

  private Future<JsonObject> abandon(Object name, Object owner) {
    if (!(name instanceof String || name instanceof JsonArray) || !(owner instanceof String)) {
      return Future.succeededFuture(); // the wait itself was refused as a bad request
    }
    return client.request(kind.address(), kind.abandonAction(), new JsonObject().put(kind.nameField(), name)
        .put(kind.ownerField(), owner));
  }

  /** Answers every waiting request 503 closed and takes its owner out of the queue; later waits are refused. */
  Future<?> close() {
    stopping = true;
    List<Future<?>> abandoned = new ArrayList<>();
    for (RoutingContext ctx : new ArrayList<>(waiting.keySet())) {
      JsonObject waiter = waiting.remove(ctx);
      if (waiter != null) {
        error(ctx, 503, "closed", "the service on this node is stopping: the " + kind.what() + " was abandoned and"
            + " left the queue");
        abandoned.add(abandon(waiter.getValue(kind.nameField()), waiter.getValue(kind.ownerField())));
      }
    }
    return Future.join(abandoned);
  }
}
