package io.github.fdbcoord.semaphore;

import com.apple.foundationdb.Transaction;
import io.github.fdbcoord.api.FencingToken;

import java.util.concurrent.CompletableFuture;

/**
 * One permit of a semaphore, held by {@link #owner()} under the grant {@link #token()}, heartbeated by the service
 * every {@link SemaphoreOptions#heartbeatInterval()} until released, lost or the service closes.
 */
public interface SemaphoreHandle extends AutoCloseable {
  String semaphore();

  String owner();

  /** The grant's fencing token: strictly greater than every earlier grant's of the same semaphore. */
  FencingToken token();

  /** False once a heartbeat found the grant ended (taken over after its lease) or the permit was released. */
  boolean isHeld();

  /** Releases the permit (its next waiter gets it in the same transaction) and stops the heartbeats. */
  CompletableFuture<Void> release();

  /** {@link SemaphoreService#fence} with this grant. */
  CompletableFuture<Void> fence(Transaction tr);

  /** {@link #release()}, waiting for it; a grant that already ended is not an error here. */
  @Override
  void close();
}
