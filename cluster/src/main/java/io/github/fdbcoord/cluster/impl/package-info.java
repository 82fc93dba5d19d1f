/**
 * The implementation of {@link io.github.fdbcoord.cluster.FdbClusterManager}: internal, not API
 * (its types are public only so that the façade in {@code io.github.fdbcoord.cluster} can reach
 * them, and may change in any release). One class per concern: {@link io.github.fdbcoord.cluster.impl.Membership}
 * (node records, leases, heartbeats, reaper, node events), {@link io.github.fdbcoord.cluster.impl.Registrations}
 * (event-bus registrations), {@link io.github.fdbcoord.cluster.impl.Locks} (SharedData locks on the mutex
 * layer), one class per shared-data primitive, the key schema and the store helpers.
 */
@API(status = API.Status.INTERNAL, since = "0.1.0")
package io.github.fdbcoord.cluster.impl;

import org.apiguardian.api.API;
