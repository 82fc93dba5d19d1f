package io.github.fdbcoord.service.eventbus;

import io.github.fdbcoord.client.wire.DirectoryWire;
import io.github.fdbcoord.api.DirectoryInfo;
import io.github.fdbcoord.api.DirectoryPage;
import io.github.fdbcoord.directory.DirectoryPaths;
import io.github.fdbcoord.directory.DirectoryService;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;

/**
 * The directory layer on its address ({@code <prefix>.directory}). Actions: create, createOrOpen,
 * open, exists, list, move, remove, removeIfExists (request and reply shapes in docs/vertx.md).
 *
 * <p>The service's own data (the allocator, interner and mutex layers under {@code rootDirectory})
 * lives in the same directory tree, so this address refuses every path at or under that root
 * (400 {@code reserved}), refuses to move or remove its ancestors, and leaves it out of listings:
 * one request must not be able to wipe every namespace or free a held mutex.
 */
public final class DirectoryVerticle extends LayerVerticle {
  private final DirectoryService directories;
  private final int maxPageSize;
  private final List<String> reserved;

  /**
   * {@code directories} must accept list limits up to {@code maxPageSize + 1} (one more name is
   * read when the reserved directory may be in the page).
   */
  public DirectoryVerticle(String address, DirectoryService directories, int maxPageSize, List<String> reserved,
      StoreWorkers workers, Metrics metrics) {
    super(address, workers, metrics);
    this.directories = directories;
    this.maxPageSize = maxPageSize;
    this.reserved = List.copyOf(reserved);
  }

  /** Registers the directory actions, each refusing the reserved root. */
  @Override
  protected void registerActions() {
    action(DirectoryWire.CREATE, body -> {
      List<String> path = usable(path(body, "path", false), false);
      String layer = Requests.optionalString(body, "layer");
      boolean partition = Requests.optionalBoolean(body, "partition", false);
      if (partition && layer != null && !layer.isEmpty() && !layer.equals(DirectoryInfo.PARTITION_LAYER)) {
        throw FailureCodes.badRequest("a partition's layer is '" + DirectoryInfo.PARTITION_LAYER + "', got '" + layer + "'");
      }
      return store(() -> partition ? directories.createPartition(path) : directories.create(path, layer))
          .map(DirectoryWire::info);
    });
    action(DirectoryWire.CREATE_OR_OPEN, body -> {
      List<String> path = usable(path(body, "path", false), false);
      String layer = Requests.optionalString(body, "layer");
      return store(() -> directories.createOrOpen(path, layer)).map(DirectoryWire::info);
    });
    action(DirectoryWire.OPEN, body -> {
      List<String> path = usable(path(body, "path", false), false);
      String layer = Requests.optionalString(body, "layer");
      return store(() -> directories.open(path, layer)).map(DirectoryWire::info);
    });
    action(DirectoryWire.EXISTS, body -> {
      List<String> path = usable(path(body, "path", false), false);
      return store(() -> directories.exists(path)).map(b -> DirectoryWire.exists(path, b));
    });
    action(DirectoryWire.LIST, body -> {
      List<String> path = usable(body.getValue("path") == null ? List.of() : path(body, "path", true), false);
      String startAfter = Requests.optionalString(body, "startAfter");
      int limit = Requests.optionalLong(body, "limit", 1, maxPageSize) == null ? Math.min(100, maxPageSize)
          : body.getInteger("limit");
      String hidden = path.size() == reserved.size() - 1 && startsWith(reserved, path) ? reserved.get(path.size())
          : null;
      if (hidden == null) {
        return store(() -> directories.list(path, startAfter, limit)).map(DirectoryWire::page);
      }
      return store(() -> directories.list(path, startAfter, limit + 1))
          .map(page -> DirectoryWire.page(without(page, hidden, limit)));
    });
    action(DirectoryWire.MOVE, body -> {
      List<String> from = usable(path(body, "from", false), true);
      List<String> to = usable(path(body, "to", false), true);
      return store(() -> directories.move(from, to)).map(DirectoryWire::info);
    });
    action(DirectoryWire.REMOVE, body -> {
      List<String> path = usable(path(body, "path", false), true);
      return store(() -> directories.remove(path)).map(v -> DirectoryWire.removed(path, true));
    });
    action(DirectoryWire.REMOVE_IF_EXISTS, body -> {
      List<String> path = usable(path(body, "path", false), true);
      return store(() -> directories.removeIfExists(path))
          .map(b -> DirectoryWire.removed(path, b));
    });
  }

  /**
   * {@code path}, unless it is the reserved directory or inside it; with {@code changesSubtree}
   * (move, remove) an ancestor of the reserved directory is refused too, since the change would
   * carry the service's data with it.
   */
  private List<String> usable(List<String> path, boolean changesSubtree) {
    if (startsWith(path, reserved) || (changesSubtree && startsWith(reserved, path))) {
      throw FailureCodes.failure(FailureCodes.BAD_REQUEST, "reserved", DirectoryPaths.format(path)
          + (path.size() >= reserved.size() ? " is" : " holds") + " the coordination service's own data ("
          + DirectoryPaths.format(reserved) + ", config 'rootDirectory'): the directory API cannot "
          + (changesSubtree ? "move or remove" : "use") + " it");
    }
    return path;
  }

  /** The page without {@code hidden}, cut to {@code limit} names. */
  private static DirectoryPage without(DirectoryPage page, String hidden, int limit) {
    List<String> names = new ArrayList<>(page.names());
    names.remove(hidden);
    if (names.size() > limit) {
      return new DirectoryPage(names.subList(0, limit), true);
    }
    return new DirectoryPage(names, page.hasMore());
  }

  private static boolean startsWith(List<String> path, List<String> prefix) {
    return path.size() >= prefix.size() && path.subList(0, prefix.size()).equals(prefix);
  }

  private static List<String> path(JsonObject body, String field, boolean allowRoot) {
    Object raw = body.getValue(field);
    if (raw == null) {
      throw FailureCodes.badRequest("field '" + field + "' is missing: expected an array of strings");
    }
    if (!(raw instanceof JsonArray)) {
      throw FailureCodes.badRequest("field '" + field + "' must be an array of strings, got " + Requests.describe(raw));
    }
    List<String> path;
    try {
      path = DirectoryPaths.validate(((JsonArray) raw).getList(), allowRoot);
    } catch (RuntimeException e) {
      throw FailureCodes.badRequest("field '" + field + "': " + e.getMessage());
    }
    for (int i = 0; i < path.size(); i++) {
      String name = path.get(i);
      if (name.isEmpty() || name.equals(".") || name.equals("..")) {
        // A URL cannot address these (/directories/a//b, /./, /../ are normalised away).
        throw FailureCodes.badRequest("field '" + field + "': element " + i + " is \"" + name
            + "\": empty, \".\" and \"..\" are not allowed as directory names");
      }
    }
    return path;
  }
}
