/**
 * Internal: the embedded engine's transactions, with read-your-writes, conflict ranges as FoundationDB's
 * client computes them, snapshot reads, atomic operations, versionstamps and watches.
 * {@link io.github.fdbcoord.embedded.client.EmbeddedTransaction} is the state machine; its parts are the
 * write map, the merged view (range scans, selectors, the read cache), the conflict ranges, the options
 * and retry state, its own watches and the commit attempt. It reaches the engine only through
 * {@link io.github.fdbcoord.embedded.engine.TransactionEngine} and the database through
 * {@link io.github.fdbcoord.embedded.client.DatabaseContext}: this package depends on {@code engine} and
 * {@code storage}, never on the root package.
 */
@API(status = API.Status.INTERNAL, since = "0.1.0")
package io.github.fdbcoord.embedded.client;

import org.apiguardian.api.API;
