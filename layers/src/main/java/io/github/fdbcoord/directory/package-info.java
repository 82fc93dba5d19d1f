/** The directory: paths mapped to short key prefixes (fdb-java's {@code DirectoryLayer}), with caching and paging. See docs/directory.md. */
@API(status = API.Status.EXPERIMENTAL, since = "0.1.0")
package io.github.fdbcoord.directory;

import org.apiguardian.api.API;
