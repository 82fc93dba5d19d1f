package io.github.fdbcoord.client.wire;

import io.github.fdbcoord.api.DirectoryInfo;
import io.github.fdbcoord.api.DirectoryPage;
import io.vertx.core.json.JsonObject;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;

/**
 * The directory layer's messages: action names, and the replies as JSON ({@code path}, {@code
 * layer}, {@code prefix} in hex, {@code partition}; pages as {@code names}, {@code hasMore},
 * {@code nextStartAfter}).
 */
public final class DirectoryWire {
  /** The directory's action "create". */
  public static final String CREATE = "create";
  /** The directory's action "createOrOpen". */
  public static final String CREATE_OR_OPEN = "createOrOpen";
  /** The directory's action "open". */
  public static final String OPEN = "open";
  /** The directory's action "exists". */
  public static final String EXISTS = "exists";
  /** The directory's action "list". */
  public static final String LIST = "list";
  /** The directory's action "move". */
  public static final String MOVE = "move";
  /** The directory's action "remove". */
  public static final String REMOVE = "remove";
  /** The directory's action "removeIfExists". */
  public static final String REMOVE_IF_EXISTS = "removeIfExists";

  private static final HexFormat HEX = HexFormat.of();

  private DirectoryWire() {}

  /** The reply of create, createOrOpen, open and move. */
  public static JsonObject info(DirectoryInfo info) {
    return new JsonObject(info.toJsonMap());
  }

  /** The directory a reply of {@link #info(DirectoryInfo)} describes. */
  public static DirectoryInfo info(JsonObject j) {
    return new DirectoryInfo(WireProtocol.strings(j.getJsonArray("path")),
        j.getString("layer").getBytes(StandardCharsets.UTF_8), HEX.parseHex(j.getString("prefix")));
  }

  /** The reply of list. */
  public static JsonObject page(DirectoryPage page) {
    return new JsonObject(page.toJsonMap());
  }

  /** The page a reply of {@link #page(DirectoryPage)} holds. */
  public static DirectoryPage page(JsonObject j) {
    return new DirectoryPage(WireProtocol.strings(j.getJsonArray("names")), j.getBoolean("hasMore"));
  }

  /** The reply of exists. */
  public static JsonObject exists(List<String> path, boolean exists) {
    return new JsonObject().put("path", WireProtocol.array(path)).put("exists", exists);
  }

  /** Whether the directory of an exists reply exists. */
  public static boolean exists(JsonObject j) {
    return j.getBoolean("exists");
  }

  /** The reply of remove and removeIfExists. */
  public static JsonObject removed(List<String> path, boolean removed) {
    return new JsonObject().put("path", WireProtocol.array(path)).put("removed", removed);
  }

  /** Whether a remove reply removed something. */
  public static boolean removed(JsonObject j) {
    return j.getBoolean("removed");
  }
}
