/**
 * Internal: the embedded engine's storage: the versioned in-memory index of the MVCC window (chains,
 * the sorted index with its own merge thread, hash table, range cursor) and, in durable mode, RocksDB
 * beneath it holding the state at its durable version.
 */
package io.github.fdbcoord.embedded.storage;
