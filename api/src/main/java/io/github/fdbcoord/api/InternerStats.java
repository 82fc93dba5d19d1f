package io.github.fdbcoord.api;

import java.util.Objects;

/**
 * What one interner namespace holds, read in one transaction.
 *
 * @param namespace the namespace
 * @param strings how many strings it has interned
 * @param sequencesInUse how many of its id sequences have handed out ids (at most
 *     {@code 2^sequenceBits - 1})
 * @param sequenceBits how many low bits of an id are its place in a sequence
 */
public record InternerStats(String namespace, long strings, long sequencesInUse, int sequenceBits) {
  public InternerStats {
    Objects.requireNonNull(namespace, "namespace");
  }
}
