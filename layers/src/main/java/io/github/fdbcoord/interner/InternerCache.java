package io.github.fdbcoord.interner;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;

/**
 * Read-through cache of assigned ids, both directions, shared by all namespaces of one service.
 * Read-through: entries come from store reads only. Intern and resolve cache the
 * {@code string -> id} records they read, lookup caches both directions (a reverse record proves
 * both). Ids that intern assigns are not cached at assignment: inserting them cost about a quarter
 * of interning throughput (two Caffeine inserts per new string, and as many long-lived objects), to
 * save one store read the first time the string comes back.
 * An id never changes once its transaction committed, so an entry never goes stale while its
 * namespace exists; entries are only added after a commit (or a read) proved them, and only
 * positive results are kept (an absent string may be interned a moment later).
 *
 * <p>Entries are keyed by the namespace's incarnation token, not its name, so a namespace removed
 * and created again never sees the old incarnation's ids.
 */
final class InternerCache {
  /** Rough per-entry overhead in bytes: key record, boxed value, Caffeine node. */
  private static final int ENTRY_OVERHEAD = 96;

  private record StringKey(long namespace, String value) {}

  private record IdKey(long namespace, long id) {}

  private final Cache<StringKey, Long> ids;
  private final Cache<IdKey, String> strings;

  InternerCache(long maxBytes) {
    if (maxBytes == 0) {
      this.ids = null;
      this.strings = null;
    } else {
      long half = Math.max(1, maxBytes / 2);
      this.ids = Caffeine.newBuilder()
          .maximumWeight(half)
          .weigher((StringKey k, Long v) -> weigh(k.value()))
          .build();
      this.strings = Caffeine.newBuilder()
          .maximumWeight(half)
          .weigher((IdKey k, String v) -> weigh(v))
          .build();
    }
  }

  private static int weigh(String s) {
    return (int) Math.min(Integer.MAX_VALUE, ENTRY_OVERHEAD + 2L * s.length());
  }

  /** The cached id of {@code s}, or null. */
  Long id(long namespace, String s) {
    return ids == null ? null : ids.getIfPresent(new StringKey(namespace, s));
  }

  /** The cached string of {@code id}, or null. */
  String string(long namespace, long id) {
    return strings == null ? null : strings.getIfPresent(new IdKey(namespace, id));
  }

  /** Caches {@code s -> id} only: what intern and resolve read; the other direction fills on lookup. */
  void putId(long namespace, String s, long id) {
    if (ids != null) {
      ids.put(new StringKey(namespace, s), id);
    }
  }

  /** Caches both directions: a reverse record read by lookup proves both. */
  void put(long namespace, String s, long id) {
    if (ids != null) {
      ids.put(new StringKey(namespace, s), id);
      strings.put(new IdKey(namespace, id), s);
    }
  }

  /** Drops every entry of one namespace incarnation (after it was removed). */
  void invalidate(long namespace) {
    if (ids != null) {
      ids.asMap().keySet().removeIf(k -> k.namespace() == namespace);
      strings.asMap().keySet().removeIf(k -> k.namespace() == namespace);
    }
  }

  long estimatedSize() {
    return ids == null ? 0 : ids.estimatedSize() + strings.estimatedSize();
  }
}
