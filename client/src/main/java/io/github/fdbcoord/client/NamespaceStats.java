package io.github.fdbcoord.client;

/**
 * The counts {@link CoordinationClient#internerStats} reports of an interner namespace.
 *
 * @param namespace the namespace
 * @param strings how many strings it holds
 * @param sequencesInUse how many id sequences have been allocated to it
 * @param sequenceBits how many low bits of an id are its place in a sequence
 */
public record NamespaceStats(String namespace, long strings, long sequencesInUse, int sequenceBits) {}
