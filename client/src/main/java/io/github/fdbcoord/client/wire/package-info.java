/** Internal: the event-bus wire format shared by the client and the service (action names, request and reply bodies); may change in any release. */
@API(status = API.Status.INTERNAL, since = "0.1.0")
package io.github.fdbcoord.client.wire;

import org.apiguardian.api.API;
