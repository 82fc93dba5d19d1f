/** The high-contention allocator: unique small integers and short prefixes under heavy concurrency (windowed random allocation). See docs/allocator.md. */
@API(status = API.Status.EXPERIMENTAL, since = "0.1.0")
package io.github.fdbcoord.allocator;

import org.apiguardian.api.API;
