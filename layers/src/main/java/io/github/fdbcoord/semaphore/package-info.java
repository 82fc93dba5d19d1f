/**
 * Fenced counting semaphores on FoundationDB: {@link io.github.fdbcoord.semaphore.SemaphoreService} (N permits per
 * named semaphore, a FIFO queue of waiters, leases kept by heartbeats, hand-off of silent holders by a reaper, a
 * fencing token per grant), its options, handle and refusals, and
 * {@link io.github.fdbcoord.semaphore.SemaphoreSchema}, the whole key schema. Depends on fdb-java's interfaces only.
 * See docs/semaphore.md.
 */
@API(status = API.Status.EXPERIMENTAL, since = "0.1.0")
package io.github.fdbcoord.semaphore;

import org.apiguardian.api.API;
