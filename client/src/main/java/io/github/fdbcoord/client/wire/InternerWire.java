package io.github.fdbcoord.client.wire;

import io.github.fdbcoord.api.InternedPage;
import io.github.fdbcoord.api.InternedString;
import io.github.fdbcoord.api.InternerStats;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The interner's messages. Ids travel as unsigned decimal strings: JSON numbers lose precision
 * above 2^53, and ids use all 64 bits.
 */
public final class InternerWire {
  /** The interner's action "intern". */
  public static final String INTERN = "intern";
  /** The interner's action "resolve". */
  public static final String RESOLVE = "resolve";
  /** The interner's action "lookup". */
  public static final String LOOKUP = "lookup";
  /** The interner's action "stats". */
  public static final String STATS = "stats";
  /** The interner's action "list". */
  public static final String LIST = "list";
  /** The interner's action "listNamespaces". */
  public static final String LIST_NAMESPACES = "listNamespaces";
  /** The interner's action "removeNamespace". */
  public static final String REMOVE_NAMESPACE = "removeNamespace";

  private InternerWire() {}

  /** An id as it travels. */
  public static String id(long id) {
    return Long.toUnsignedString(id);
  }

  /** The ids of an intern request's strings, as {@link #id(long)} strings. */
  public static JsonArray ids(List<Long> ids) {
    JsonArray out = new JsonArray();
    ids.forEach(id -> out.add(id(id)));
    return out;
  }

  /** The ids of an array of {@link #id(long)} strings. */
  public static List<Long> ids(JsonArray array) {
    List<Long> out = new ArrayList<>(array.size());
    for (Object o : array) {
      out.add(Long.parseUnsignedLong((String) o));
    }
    return out;
  }

  /** The reply of intern. */
  public static JsonObject interned(String namespace, List<Long> ids) {
    return new JsonObject().put("namespace", namespace).put("ids", ids(ids));
  }

  /** The ids of an intern reply. */
  public static List<Long> interned(JsonObject j) {
    return ids(j.getJsonArray("ids"));
  }

  /** The reply of resolve: an id per string, null for a string never interned. */
  public static JsonObject resolved(String namespace, List<OptionalLong> ids) {
    JsonArray out = new JsonArray();
    for (OptionalLong id : ids) {
      out.add(id.isPresent() ? id(id.getAsLong()) : null);
    }
    return new JsonObject().put("namespace", namespace).put("ids", out);
  }

  /** The ids of a resolve reply. */
  public static List<OptionalLong> resolved(JsonObject j) {
    List<OptionalLong> out = new ArrayList<>();
    for (Object o : j.getJsonArray("ids")) {
      out.add(o == null ? OptionalLong.empty() : OptionalLong.of(Long.parseUnsignedLong((String) o)));
    }
    return out;
  }

  /** The reply of lookup: a string per id, null for an unknown id. */
  public static JsonObject lookedUp(String namespace, List<Optional<String>> strings) {
    JsonArray out = new JsonArray();
    strings.forEach(s -> out.add(s.orElse(null)));
    return new JsonObject().put("namespace", namespace).put("strings", out);
  }

  /** The strings of a lookup reply. */
  public static List<Optional<String>> lookedUp(JsonObject j) {
    List<Optional<String>> out = new ArrayList<>();
    for (Object o : j.getJsonArray("strings")) {
      out.add(Optional.ofNullable((String) o));
    }
    return out;
  }

  /** The reply of stats. */
  public static JsonObject stats(InternerStats s) {
    return new JsonObject().put("namespace", s.namespace()).put("strings", s.strings())
        .put("sequencesInUse", s.sequencesInUse()).put("sequenceBits", s.sequenceBits());
  }

  /** The counts of a stats reply. */
  public static InternerStats stats(JsonObject j) {
    return new InternerStats(j.getString("namespace"), j.getLong("strings"), j.getLong("sequencesInUse"),
        j.getInteger("sequenceBits"));
  }

  /**
   * The reply of list: the strings the store returned for a request of {@code limit}, with
   * {@code nextAfter} when the page is full (more may follow).
   */
  public static JsonObject page(String namespace, List<InternedString> entries, int limit) {
    JsonArray out = new JsonArray();
    entries.forEach(e -> out.add(new JsonObject().put("id", id(e.id())).put("string", e.string())));
    return new JsonObject().put("namespace", namespace).put("entries", out)
        .put("nextAfter", entries.size() == limit ? id(entries.get(entries.size() - 1).id()) : null);
  }

  /** The page of a list reply. */
  public static InternedPage page(JsonObject j) {
    List<InternedString> entries = new ArrayList<>();
    for (Object o : j.getJsonArray("entries")) {
      JsonObject e = (JsonObject) o;
      entries.add(new InternedString(Long.parseUnsignedLong(e.getString("id")), e.getString("string")));
    }
    String next = j.getString("nextAfter");
    return new InternedPage(j.getString("namespace"), entries,
        next == null ? OptionalLong.empty() : OptionalLong.of(Long.parseUnsignedLong(next)));
  }

  /** The reply of listNamespaces. */
  public static JsonObject namespaces(List<String> names) {
    return new JsonObject().put("namespaces", WireProtocol.array(names));
  }

  /** The names of a listNamespaces reply. */
  public static List<String> namespaces(JsonObject j) {
    return WireProtocol.strings(j.getJsonArray("namespaces"));
  }

  /** The reply of removeNamespace. */
  public static JsonObject removed(String namespace, boolean removed) {
    return new JsonObject().put("namespace", namespace).put("removed", removed);
  }

  /** Whether a removeNamespace reply removed the namespace. */
  public static boolean removed(JsonObject j) {
    return j.getBoolean("removed");
  }
}
