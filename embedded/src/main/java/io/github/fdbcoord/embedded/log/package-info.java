/**
 * Internal: the embedded engine's commit log: segments with group commit, recovery that tells a torn
 * tail from corruption, the legacy snapshot format, and the file layer every file operation goes through.
 */
package io.github.fdbcoord.embedded.log;
