/**
 * Internal: the embedded engine's core: versions, the commit pipeline (resolve, apply to the MVCC window,
 * log), watches, the applier that moves versions older than the window into the storage, and opening a
 * data directory (recovery and migration).
 */
package io.github.fdbcoord.embedded.engine;
