/**
 * Internal: byte-string helpers every package of the embedded engine shares: FoundationDB's key order
 * and the hash of keys in the hash indexes. Depends on nothing else of the engine.
 */
@API(status = API.Status.INTERNAL, since = "0.1.0")
package io.github.fdbcoord.embedded.bytes;

import org.apiguardian.api.API;
