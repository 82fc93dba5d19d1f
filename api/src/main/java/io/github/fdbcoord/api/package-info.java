/**
 * The value types shared by the layers, the client and the service (fencing tokens, lock events,
 * mutex, directory and interner views), and what the layers' refusals mean
 * ({@link io.github.fdbcoord.api.CoordinationException}, {@link io.github.fdbcoord.api.FailureKind}).
 */
@API(status = API.Status.EXPERIMENTAL, since = "0.1.0")
package io.github.fdbcoord.api;

import org.apiguardian.api.API;
