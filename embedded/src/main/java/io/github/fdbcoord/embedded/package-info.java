/**
 * The embedded engine: an in-process database with FoundationDB's transaction semantics, in memory or
 * durable in a data directory. Its public surface is {@link io.github.fdbcoord.embedded.EmbeddedDatabase}
 * (fdb-java's {@code Database}) and {@link io.github.fdbcoord.embedded.EmbeddedOptions}; the subpackages
 * are its parts, laid out as FoundationDB's own roles are, and are internal (public only so that the
 * parts can reach each other):
 *
 * <ul>
 *   <li>{@code client}: transactions with read-your-writes, as fdbclient's {@code ReadYourWrites};
 *   <li>{@code engine}: the version clock and the commit pipeline (sequencer and commit proxy), watches,
 *       the applier that moves versions below the MVCC window into the storage, and opening/recovery;
 *   <li>{@code resolver}: the conflict history that decides whether a commit's reads were overwritten;
 *   <li>{@code storage}: the versioned in-memory index of the MVCC window and RocksDB beneath it, as a
 *       storage server keeps recent versions in memory above its disk store;
 *   <li>{@code log}: the commit log (group commit, recovery, manifest) and the file layer beneath it, as
 *       FoundationDB's transaction logs.
 * </ul>
 */
@API(status = API.Status.EXPERIMENTAL, since = "0.1.0")
package io.github.fdbcoord.embedded;

import org.apiguardian.api.API;
