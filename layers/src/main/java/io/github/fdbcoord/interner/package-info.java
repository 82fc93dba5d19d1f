/** The string interner: strings to collision-free 64-bit ids and back, on sharded sequences. See docs/interner.md. */
@API(status = API.Status.EXPERIMENTAL, since = "0.1.0")
package io.github.fdbcoord.interner;

import org.apiguardian.api.API;
