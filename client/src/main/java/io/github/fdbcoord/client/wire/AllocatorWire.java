package io.github.fdbcoord.client.wire;

import io.vertx.core.json.JsonObject;

import java.util.HexFormat;

/** The allocator's messages: action names, {@code value} (a JSON number), {@code prefix} (hex). */
public final class AllocatorWire {
  /** The allocator's action "allocate". */
  public static final String ALLOCATE = "allocate";
  /** The allocator's action "allocatePrefix". */
  public static final String ALLOCATE_PREFIX = "allocatePrefix";

  private static final HexFormat HEX = HexFormat.of();

  private AllocatorWire() {}

  /** The reply of allocate. */
  public static JsonObject value(String name, long value) {
    return new JsonObject().put("name", name).put("value", value);
  }

  /** The value an allocate reply carries. */
  public static long value(JsonObject j) {
    return j.getLong("value");
  }

  /** The reply of allocatePrefix. */
  public static JsonObject prefix(String name, byte[] prefix) {
    return new JsonObject().put("name", name).put("prefix", HEX.formatHex(prefix));
  }

  /** The prefix an allocatePrefix reply carries. */
  public static byte[] prefix(JsonObject j) {
    return HEX.parseHex(j.getString("prefix"));
  }
}
