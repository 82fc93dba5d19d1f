/**
 * Named distributed mutexes on FoundationDB: {@link io.github.fdbcoord.mutex.MutexService} (FIFO
 * queue, heartbeats, reaper hand-off of silent owners, fencing tokens, lock events), its options,
 * results, events and refusals, and {@link io.github.fdbcoord.mutex.MutexSchema}, the whole key
 * schema. Depends on fdb-java's interfaces only. See docs/mutex.md.
 */
@API(status = API.Status.EXPERIMENTAL, since = "0.1.0")
package io.github.fdbcoord.mutex;

import org.apiguardian.api.API;
