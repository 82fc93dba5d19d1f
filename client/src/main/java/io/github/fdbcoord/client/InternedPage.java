package io.github.fdbcoord.client;

import java.util.List;
import java.util.OptionalLong;

/**
 * A page of an interner namespace's strings in id order, as {@link CoordinationClient#listInterned}
 * returns it. Ids are unsigned 64-bit values held in a {@code long} (see
 * {@link CoordinationClient#intern}).
 *
 * @param namespace the namespace
 * @param entries the page, in unsigned id order
 * @param nextAfter the id to pass as {@code after} for the next page; empty on the last page
 */
public record InternedPage(String namespace, List<Entry> entries, OptionalLong nextAfter) {
  /**
   * One interned string.
   *
   * @param id its id, unsigned ({@link Long#toUnsignedString(long)} prints it as HTTP does)
   * @param string the string
   */
  public record Entry(long id, String string) {}
}
