/** Internal: the coalescer that lets concurrent requests of the allocator and the interner share a transaction. */
@API(status = API.Status.INTERNAL, since = "0.1.0")
package io.github.fdbcoord.coalescing;

import org.apiguardian.api.API;
