package io.github.fdbcoord.api;

import java.util.Objects;

/**
 * One interned string and its id.
 *
 * @param id the id, an unsigned 64-bit value held in a {@code long}: compare ids with
 *     {@link Long#compareUnsigned} and print them with {@link Long#toUnsignedString(long)}, the
 *     decimal form JSON and HTTP carry
 * @param string the string
 */
public record InternedString(long id, String string) {
  public InternedString {
    Objects.requireNonNull(string, "string");
  }
}
