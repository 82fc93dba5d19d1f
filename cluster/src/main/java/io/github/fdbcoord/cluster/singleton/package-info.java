/**
 * {@link io.github.fdbcoord.cluster.singleton.ClusterSingleton}: a verticle deployed on exactly one node of a cluster at
 * a time, on a leader election of the layers module. See docs/election.md, "Cluster singleton".
 */
@API(status = API.Status.EXPERIMENTAL, since = "0.1.0")
package io.github.fdbcoord.cluster.singleton;

import org.apiguardian.api.API;
