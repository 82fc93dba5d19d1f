/**
 * Internal: the embedded engine's core: the version clock and commit pipeline ({@code Engine}: resolve,
 * apply to the MVCC window, log), held commits and the disk-space gate, watches, the applier that moves
 * versions older than the window into the storage, and opening a data directory (recovery and migration,
 * {@code DurableStore}). Configured by an {@code EngineConfig}, which the root package's options hold;
 * depends on {@code log}, {@code storage} and {@code resolver}, never on {@code client} or the
 * root package.
 */
@API(status = API.Status.INTERNAL, since = "0.1.0")
package io.github.fdbcoord.embedded.engine;

import org.apiguardian.api.API;
