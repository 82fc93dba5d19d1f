/**
 * The verticles that host the layers on the event bus: internal, not API (its types are public only so that
 * {@link io.github.fdbcoord.service.CoordinationVerticle} and the HTTP routes can reach them, and may change
 * in any release). One {@link io.github.fdbcoord.service.eventbus.LayerVerticle} per primitive, the failure
 * codes of the event-bus contract ({@link io.github.fdbcoord.service.eventbus.FailureCodes}), the readers of
 * request fields, the lock events a node publishes, the store's worker threads and the service's meters.
 * It depends on neither the HTTP face nor the package above it.
 */
@API(status = API.Status.INTERNAL, since = "0.1.0")
package io.github.fdbcoord.service.eventbus;

import org.apiguardian.api.API;
