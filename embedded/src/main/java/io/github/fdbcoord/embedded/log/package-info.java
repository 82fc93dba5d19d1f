/**
 * Internal: the embedded engine's commit log: {@link io.github.fdbcoord.embedded.log.CommitLog} (the API,
 * snapshots and truncation) over a group-commit writer, the segments and their manifest, and the recovery
 * that tells a torn tail from corruption; the legacy snapshot format, and the file layer every file
 * operation goes through. Depends on no other package of the engine.
 */
@API(status = API.Status.INTERNAL, since = "0.1.0")
package io.github.fdbcoord.embedded.log;

import org.apiguardian.api.API;
