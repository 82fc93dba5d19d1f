package io.github.fdbcoord.service.eventbus;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.mutex.MutexService;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;

/** Field readers for request bodies that fail with a BAD_REQUEST naming the field and what was wrong. */
public final class Requests {
  private Requests() {}

  static JsonObject body(Object body) {
    if (body == null) {
      return new JsonObject();
    }
    if (!(body instanceof JsonObject)) {
      throw FailureCodes.badRequest("the body must be a JSON object, got " + body.getClass().getSimpleName());
    }
    return (JsonObject) body;
  }

  static String requiredString(JsonObject body, String field) {
    String s = optionalString(body, field);
    if (s == null) {
      throw FailureCodes.badRequest("field '" + field + "' is missing: expected a string");
    }
    return s;
  }

  static String optionalString(JsonObject body, String field) {
    Object v = body.getValue(field);
    if (v == null) {
      return null;
    }
    if (!(v instanceof String)) {
      throw FailureCodes.badRequest("field '" + field + "' must be a string, got " + describe(v));
    }
    return (String) v;
  }

  /** The boolean {@code field}, or {@code def} when absent. */
  public static boolean optionalBoolean(JsonObject body, String field, boolean def) {
    Object v = body.getValue(field);
    if (v == null) {
      return def;
    }
    if (!(v instanceof Boolean)) {
      throw FailureCodes.badRequest("field '" + field + "' must be true or false, got " + describe(v));
    }
    return (Boolean) v;
  }

  /** The integer {@code field} between {@code min} and {@code max}, or null when absent. */
  public static Long optionalLong(JsonObject body, String field, long min, long max) {
    Object v = body.getValue(field);
    if (v == null) {
      return null;
    }
    if (!(v instanceof Integer || v instanceof Long)) {
      throw FailureCodes.badRequest("field '" + field + "' must be an integer, got " + describe(v));
    }
    long n = ((Number) v).longValue();
    if (n < min || n > max) {
      throw FailureCodes.badRequest("field '" + field + "' must be between " + min + " and " + max + ", got " + n);
    }
    return n;
  }

  /** A JSON array as a Java list for the layers' own validation (which names the bad element). */
  static List<Object> requiredList(JsonObject body, String field, int maxItems) {
    Object v = body.getValue(field);
    if (v == null) {
      throw FailureCodes.badRequest("field '" + field + "' is missing: expected an array");
    }
    if (!(v instanceof JsonArray)) {
      throw FailureCodes.badRequest("field '" + field + "' must be an array, got " + describe(v));
    }
    JsonArray a = (JsonArray) v;
    if (a.size() > maxItems) {
      throw FailureCodes.badRequest("field '" + field + "' has " + a.size() + " items, at most " + maxItems
          + " are allowed per request");
    }
    return new ArrayList<>(a.getList());
  }

  /** The array of strings {@code field}, of at most {@code maxItems}. */
  public static List<String> requiredStrings(JsonObject body, String field, int maxItems) {
    List<Object> raw = requiredList(body, field, maxItems);
    List<String> out = new ArrayList<>(raw.size());
    for (int i = 0; i < raw.size(); i++) {
      Object o = raw.get(i);
      if (!(o instanceof String)) {
        throw FailureCodes.badRequest("field '" + field + "' item " + i + " must be a string, got " + describe(o));
      }
      out.add((String) o);
    }
    return out;
  }

  /** A mutex, owner or host name ({@link MutexService#checkName}'s rules). */
  static String mutexName(JsonObject body, String field) {
    try {
      return MutexService.checkName(requiredString(body, field), field);
    } catch (IllegalArgumentException e) {
      throw FailureCodes.badRequest(e.getMessage());
    }
  }

  /** A fencing token or event sequence in its hex form, or null when the field is absent. */
  static FencingToken optionalToken(JsonObject body, String field) {
    String hex = optionalString(body, field);
    if (hex == null) {
      return null;
    }
    try {
      return FencingToken.parse(hex);
    } catch (IllegalArgumentException e) {
      throw FailureCodes.badRequest("field '" + field + "': " + e.getMessage());
    }
  }

  /** {@code v}'s JSON kind and its text, cut short, for a message about a wrong value. */
  public static String describe(Object v) {
    if (v == null) {
      return "null";
    }
    String kind = v instanceof JsonObject ? "object" : v instanceof JsonArray ? "array"
        : v instanceof String ? "string" : v instanceof Boolean ? "boolean" : v instanceof Number ? "number"
        : v.getClass().getSimpleName();
    String text = String.valueOf(v);
    if (v instanceof String) {
      text = "\"" + text + "\"";
    }
    return kind + " " + (text.length() > 60 ? text.substring(0, 60) + "..." : text);
  }
}
