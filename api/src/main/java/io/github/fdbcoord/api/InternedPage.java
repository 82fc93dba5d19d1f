package io.github.fdbcoord.api;

import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * A page of an interner namespace's strings in unsigned id order. Ask for the next page with
 * {@link #nextAfter()} as {@code after}.
 *
 * @param namespace the namespace
 * @param entries the page, in unsigned id order
 * @param nextAfter the id to pass as {@code after} for the next page; empty on the last page
 */
public record InternedPage(String namespace, List<InternedString> entries, OptionalLong nextAfter) {
  public InternedPage {
    Objects.requireNonNull(namespace, "namespace");
    entries = List.copyOf(entries);
    Objects.requireNonNull(nextAfter, "nextAfter");
  }
}
