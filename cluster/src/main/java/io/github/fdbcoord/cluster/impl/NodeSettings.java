package io.github.fdbcoord.cluster.impl;

import java.time.Duration;
import java.util.List;

/**
 * What the implementation needs of the manager's options, handed down by the façade so that this
 * package never depends on the public {@code cluster} package (no package cycle).
 *
 * @param directory the cluster's own directory
 * @param lockDirectory the directory of the mutexes behind {@code SharedData} locks
 * @param nodeLease how long a node record may stay unchanged before eviction (also the locks' lease)
 * @param heartbeatInterval how often a node renews its record
 * @param reaperInterval how often a node checks the others' leases
 * @param logRetention how long membership and registration log entries are kept
 */
public record NodeSettings(List<String> directory, List<String> lockDirectory, Duration nodeLease,
    Duration heartbeatInterval, Duration reaperInterval, Duration logRetention) {
}
