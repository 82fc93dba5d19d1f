/**
 * The service's HTTP face: internal, not API (its types are public only so that
 * {@link io.github.fdbcoord.service.CoordinationVerticle} can deploy them, and may change in any release).
 * {@link io.github.fdbcoord.service.http.HttpVerticle} assembles the server from the filters, the routes of
 * each primitive (which forward to the layers' event-bus actions, or call them directly when they run in this
 * process), the WebSocket lock events, the dashboard and its static files, health and metrics. It is
 * configured by {@link io.github.fdbcoord.service.http.HttpOptions}, which the service's configuration builds;
 * it depends on {@code io.github.fdbcoord.service.eventbus}, never on the package above it.
 */
@API(status = API.Status.INTERNAL, since = "0.1.0")
package io.github.fdbcoord.service.http;

import org.apiguardian.api.API;
