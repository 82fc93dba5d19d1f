/** FoundationDB error codes and versionstamp operands, without fdb-java's native library. */
@API(status = API.Status.EXPERIMENTAL, since = "0.1.0")
package io.github.fdbcoord.fdb;

import org.apiguardian.api.API;
