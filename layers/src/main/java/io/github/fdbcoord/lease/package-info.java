/**
 * What the leased, queued primitives built after the mutex share ({@link io.github.fdbcoord.semaphore} and
 * {@link io.github.fdbcoord.rwlock}): their options of leases, heartbeats, reaper and queue.
 */
@API(status = API.Status.EXPERIMENTAL, since = "0.1.0")
package io.github.fdbcoord.lease;

import org.apiguardian.api.API;
