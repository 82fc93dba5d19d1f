package io.github.fdbcoord.vertx;

import io.github.fdbcoord.directory.DirectoryInfo;
import io.github.fdbcoord.directory.DirectoryPaths;
import io.github.fdbcoord.directory.DirectoryService;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;

import java.util.List;

/**
 * The directory layer on its address ({@code <prefix>.directory}). Actions: create, createOrOpen,
 * open, exists, list, move, remove, removeIfExists (request and reply shapes in docs/vertx.md).
 */
public final class DirectoryVerticle extends LayerVerticle {
  private final DirectoryService directories;
  private final int maxPageSize;

  public DirectoryVerticle(String address, DirectoryService directories, int maxPageSize, StoreWorkers workers,
      Metrics metrics) {
    super(address, workers, metrics);
    this.directories = directories;
    this.maxPageSize = maxPageSize;
  }

  @Override
  protected void registerActions() {
    action("create", body -> {
      List<String> path = path(body, "path", false);
      String layer = Requests.optionalString(body, "layer");
      boolean partition = Requests.optionalBoolean(body, "partition", false);
      if (partition && layer != null && !layer.isEmpty() && !layer.equals(DirectoryInfo.PARTITION_LAYER)) {
        throw FailureCodes.badRequest("a partition's layer is '" + DirectoryInfo.PARTITION_LAYER + "', got '" + layer + "'");
      }
      return store(() -> partition ? directories.createPartition(path) : directories.create(path, layer))
          .map(DirectoryVerticle::info);
    });
    action("createOrOpen", body -> {
      List<String> path = path(body, "path", false);
      String layer = Requests.optionalString(body, "layer");
      return store(() -> directories.createOrOpen(path, layer)).map(DirectoryVerticle::info);
    });
    action("open", body -> {
      List<String> path = path(body, "path", false);
      String layer = Requests.optionalString(body, "layer");
      return store(() -> directories.open(path, layer)).map(DirectoryVerticle::info);
    });
    action("exists", body -> {
      List<String> path = path(body, "path", false);
      return store(() -> directories.exists(path)).map(b -> new JsonObject().put("path", path).put("exists", b));
    });
    action("list", body -> {
      List<String> path = body.getValue("path") == null ? List.of() : path(body, "path", true);
      String startAfter = Requests.optionalString(body, "startAfter");
      int limit = Requests.optionalLong(body, "limit", 1, maxPageSize) == null ? Math.min(100, maxPageSize)
          : body.getInteger("limit");
      return store(() -> directories.list(path, startAfter, limit)).map(page -> new JsonObject(page.toJsonMap()));
    });
    action("move", body -> {
      List<String> from = path(body, "from", false);
      List<String> to = path(body, "to", false);
      return store(() -> directories.move(from, to)).map(DirectoryVerticle::info);
    });
    action("remove", body -> {
      List<String> path = path(body, "path", false);
      return store(() -> directories.remove(path)).map(v -> new JsonObject().put("path", path).put("removed", true));
    });
    action("removeIfExists", body -> {
      List<String> path = path(body, "path", false);
      return store(() -> directories.removeIfExists(path))
          .map(b -> new JsonObject().put("path", path).put("removed", b));
    });
  }

  private static List<String> path(JsonObject body, String field, boolean allowRoot) {
    Object raw = body.getValue(field);
    if (raw == null) {
      throw FailureCodes.badRequest("field '" + field + "' is missing: expected an array of strings");
    }
    if (!(raw instanceof io.vertx.core.json.JsonArray)) {
      throw FailureCodes.badRequest("field '" + field + "' must be an array of strings, got " + Requests.describe(raw));
    }
    try {
      return DirectoryPaths.validate(((io.vertx.core.json.JsonArray) raw).getList(), allowRoot);
    } catch (RuntimeException e) {
      throw FailureCodes.badRequest("field '" + field + "': " + e.getMessage());
    }
  }

  static JsonObject info(DirectoryInfo info) {
    return new JsonObject(info.toJsonMap());
  }
}
