package io.github.fdbcoord.interner;

/**
 * What one namespace holds, read in one transaction: how many strings it has interned and how many
 * of its sequences have handed out ids (at most {@code 2^sequenceBits - 1}).
 */
public record InternerStats(String namespace, long strings, long sequencesInUse, int sequenceBits) {}
