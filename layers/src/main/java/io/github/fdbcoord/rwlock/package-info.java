/**
 * Fenced read-write locks on FoundationDB: {@link io.github.fdbcoord.rwlock.ReadWriteLockService}
 * (many readers or one writer per lock, a FIFO queue that starves no writer, a fencing token per
 * grant, leases kept by heartbeats, hand-off on release and expiry, downgrade of a writer to a
 * reader, {@code fence} of the holder's own transaction), its options, handle and refusals, and
 * {@link io.github.fdbcoord.rwlock.ReadWriteLockSchema}, the whole key schema. Depends on
 * fdb-java's interfaces only. See docs/rwlock.md.
 */
@API(status = API.Status.EXPERIMENTAL, since = "0.1.0")
package io.github.fdbcoord.rwlock;

import org.apiguardian.api.API;
