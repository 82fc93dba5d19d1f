/** {@link io.github.fdbcoord.client.CoordinationClient}: the typed event-bus client of the coordination service. */
@API(status = API.Status.EXPERIMENTAL, since = "0.1.0")
package io.github.fdbcoord.client;

import org.apiguardian.api.API;
