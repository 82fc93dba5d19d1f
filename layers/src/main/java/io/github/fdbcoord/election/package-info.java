/**
 * Leader election with epochs over the mutex layer: {@link io.github.fdbcoord.election.LeaderElection}
 * (campaign, observe, resign, hand over), whose epoch is the leadership's fencing token and fences the leader's own
 * transactions. See docs/election.md.
 */
@API(status = API.Status.EXPERIMENTAL, since = "0.1.0")
package io.github.fdbcoord.election;

import org.apiguardian.api.API;
