/**
 * Internal: the embedded engine's commit log: {@link io.github.fdbcoord.embedded.log.CommitLog} (the API,
 * snapshots and truncation) over a group-commit writer, the segments and their manifest, and the recovery
 * that tells a torn tail from corruption; the legacy snapshot format, and the file layer every file
 * operation goes through. Depends on no other package of the engine.
 */
package io.github.fdbcoord.embedded.log;
