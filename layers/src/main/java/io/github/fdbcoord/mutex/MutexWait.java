package io.github.fdbcoord.mutex;

import io.github.fdbcoord.api.FencingToken;

import java.util.concurrent.CompletableFuture;

/**
 * A wait for a grant started by {@link MutexService#awaitGrant}: the owner's queue entry is kept
 * alive while it waits, and the grant, once made, is handed over without being heartbeated (its
 * holder heartbeats it, with {@link MutexService#heartbeat(String, String, FencingToken)}).
 */
public interface MutexWait {
  String name();

  String owner();

  /**
   * Completes with the grant's token once the owner holds the mutex. Fails with
   * {@link MutexTimeoutException} when the wait's time ran out (the owner has left the queue by
   * then), with a {@link MutexException} of kind CLOSED when the service closed, with a
   * {@code CancellationException} after {@link #cancel()}, or with the storage error that ended it.
   */
  CompletableFuture<FencingToken> granted();

  /**
   * Ends the wait unless it already ended: the owner leaves the queue in one transaction that also
   * checks for a grant made meanwhile, and such a grant, which nobody will use, is released.
   * Completes once that is done, with whether this call ended the wait.
   */
  CompletableFuture<Boolean> cancel();
}
