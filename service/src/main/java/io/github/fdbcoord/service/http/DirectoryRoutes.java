package io.github.fdbcoord.service.http;

import io.github.fdbcoord.client.wire.DirectoryWire;
import io.github.fdbcoord.service.eventbus.Requests;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

import java.util.ArrayList;
import java.util.List;

import static io.github.fdbcoord.service.http.HttpRequests.body;
import static io.github.fdbcoord.service.http.HttpRequests.booleanParam;
import static io.github.fdbcoord.service.http.HttpResponses.error;

/**
 * The directory routes: the path is the URL path after {@code /directories/}, one segment per
 * element (percent-encoded).
 */
final class DirectoryRoutes {
  private final LayerForward forward;
  private final String address;

  DirectoryRoutes(LayerForward forward) {
    this.forward = forward;
    this.address = forward.client().directoryAddress();
  }

  void mount(Router router) {
    router.post("/directories").handler(ctx -> {
      JsonObject body = body(ctx);
      if (body == null) {
        return;
      }
      boolean createOrOpen = Requests.optionalBoolean(body, "createOrOpen", false);
      body.remove("createOrOpen");
      forward.to(ctx, address, createOrOpen ? DirectoryWire.CREATE_OR_OPEN : DirectoryWire.CREATE, body,
          createOrOpen ? 200 : 201);
    });
    router.post("/directories/move").handler(ctx -> {
      JsonObject body = body(ctx);
      if (body != null) {
        forward.to(ctx, address, DirectoryWire.MOVE, body, 200);
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
        forward.to(ctx, address, DirectoryWire.OPEN, new JsonObject().put("path", new JsonArray(path))
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
        forward.to(ctx, address, ifExists ? DirectoryWire.REMOVE_IF_EXISTS : DirectoryWire.REMOVE,
            new JsonObject().put("path", new JsonArray(path)), 200);
      }
    });
  }

  private void list(RoutingContext ctx, List<String> path) {
    JsonObject body = new JsonObject().put("path", new JsonArray(path))
        .put("startAfter", ctx.request().getParam("startAfter"));
    if (HttpRequests.putLimit(ctx, body)) {
      forward.to(ctx, address, DirectoryWire.LIST, body, 200);
    }
  }

  /** The directory path in the URL after /directories/, each segment percent-decoded; null after answering 400. */
  private static List<String> directoryPath(RoutingContext ctx) {
    String raw = ctx.request().path().substring("/directories/".length());
    List<String> out = new ArrayList<>();
    try {
      for (String segment : raw.split("/", -1)) {
        out.add(HttpRequests.strictDecode(segment));
      }
    } catch (IllegalArgumentException e) {
      error(ctx, 400, "bad_request", "the directory path is not valid percent-encoding: " + e.getMessage());
      return null;
    }
    return out;
  }
}
