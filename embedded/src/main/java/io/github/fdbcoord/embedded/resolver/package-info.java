/** Internal: the embedded engine's resolver: write-conflict history of the last five seconds. */
@API(status = API.Status.INTERNAL, since = "0.1.0")
package io.github.fdbcoord.embedded.resolver;

import org.apiguardian.api.API;
