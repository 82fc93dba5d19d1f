/** Internal: the embedded engine's resolver: write-conflict history of the last five seconds. */
package io.github.fdbcoord.embedded.resolver;
