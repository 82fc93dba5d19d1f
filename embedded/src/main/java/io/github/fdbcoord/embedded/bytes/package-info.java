/**
 * Internal: byte-string helpers every package of the embedded engine shares: FoundationDB's key order
 * and the hash of keys in the hash indexes. Depends on nothing else of the engine.
 */
package io.github.fdbcoord.embedded.bytes;
