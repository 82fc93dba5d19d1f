/**
 * Internal: the embedded engine's storage: the versioned in-memory index of the MVCC window (chains,
 * the sorted index with its own merge thread, hash table, range cursor) and, in durable mode, RocksDB
 * beneath it holding the state at its durable version.
 */
@API(status = API.Status.INTERNAL, since = "0.1.0")
package io.github.fdbcoord.embedded.storage;

import org.apiguardian.api.API;
