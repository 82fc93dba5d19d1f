/** {@link io.github.fdbcoord.store.Store}: opens a {@code Database}, a real FoundationDB cluster or the embedded engine; the only user of fdb-java's {@code FDB} class. */
@API(status = API.Status.EXPERIMENTAL, since = "0.1.0")
package io.github.fdbcoord.store;

import org.apiguardian.api.API;
