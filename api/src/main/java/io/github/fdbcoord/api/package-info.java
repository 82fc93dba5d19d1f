/** The value types shared by the layers, the client and the service: fencing tokens, lock events, mutex and directory views. */
@API(status = API.Status.EXPERIMENTAL, since = "0.1.0")
package io.github.fdbcoord.api;

import org.apiguardian.api.API;
