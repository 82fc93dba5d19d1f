package io.github.fdbcoord.semaphore;

import io.github.fdbcoord.api.FencingToken;

import java.util.concurrent.CompletableFuture;

/**
 * A wait for a permit started by {@link SemaphoreService#awaitGrant}: the owner's queue entry is kept alive while it
 * waits, and the grant, once made, is handed over without being heartbeated (its holder heartbeats it, with
 * {@link SemaphoreService#heartbeat}), as a grant made for a remote requester must lapse when that requester stops.
 */
public interface SemaphoreWait {
  String name();

  String owner();

  /**
   * Completes with the grant's token once the owner holds a permit. Fails with a {@link SemaphoreException} of kind
   * TIMED_OUT when the wait's time ran out (the owner has left the queue by then), CLOSED when the service closed,
   * with a {@code CancellationException} after {@link #cancel()}, or with the storage error that ended it.
   */
  CompletableFuture<FencingToken> granted();

  /**
   * Ends the wait unless it already ended: the owner leaves the queue in one transaction that also checks for a
   * grant made meanwhile, and such a grant, which nobody will use, is released. Completes once that is done, with
   * whether this call ended the wait.
   */
  CompletableFuture<Boolean> cancel();
}
