/** {@link io.github.fdbcoord.cluster.FdbClusterManager}: a Vert.x cluster manager on FoundationDB, and its options. See docs/cluster-manager.md. */
@API(status = API.Status.EXPERIMENTAL, since = "0.1.0")
package io.github.fdbcoord.cluster;

import org.apiguardian.api.API;
