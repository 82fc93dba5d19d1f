package io.github.fdbcoord.api;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One page of a directory's subdirectory names, in key order (UTF-8 byte order of the names).
 * Ask for the next page with {@link #nextStartAfter()} as {@code startAfter}.
 */
public final class DirectoryPage {
  private final List<String> names;
  private final boolean hasMore;

  public DirectoryPage(List<String> names, boolean hasMore) {
    this.names = List.copyOf(names);
    this.hasMore = hasMore;
  }

  public List<String> names() {
    return names;
  }

  /** Whether names follow this page. */
  public boolean hasMore() {
    return hasMore;
  }

  /** The {@code startAfter} of the next page, or null on the last page. */
  public String nextStartAfter() {
    return hasMore ? names.get(names.size() - 1) : null;
  }

  /** A JSON-ready view: {@code names}, {@code hasMore}, {@code nextStartAfter} (absent on the last page). */
  public Map<String, Object> toJsonMap() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("names", names);
    m.put("hasMore", hasMore);
    if (hasMore) {
      m.put("nextStartAfter", nextStartAfter());
    }
    return m;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof DirectoryPage && ((DirectoryPage) o).names.equals(names) && ((DirectoryPage) o).hasMore == hasMore;
  }

  @Override
  public int hashCode() {
    return names.hashCode() * 31 + (hasMore ? 1 : 0);
  }

  @Override
  public String toString() {
    return "DirectoryPage{names=" + names + ", hasMore=" + hasMore + "}";
  }
}
