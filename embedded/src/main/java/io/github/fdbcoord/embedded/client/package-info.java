/**
 * Internal: the embedded engine's transactions, with read-your-writes, conflict ranges as FoundationDB's
 * client computes them, snapshot reads, atomic operations, versionstamps and watches.
 */
package io.github.fdbcoord.embedded.client;
