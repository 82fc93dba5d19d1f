package io.github.fdbcoord.rwlock;

import java.util.List;

/**
 * A read-write lock's holders and queue, read in one transaction.
 *
 * @param holders every current grant (expired ones the reaper has not removed yet included), in owner order
 * @param queue the waiting requests, head first
 */
public record ReadWriteLockState(String lock, List<ReadWriteGrant> holders, List<Request> queue) {
  public ReadWriteLockState {
    holders = List.copyOf(holders);
    queue = List.copyOf(queue);
  }

  /** One waiting request: who waits and for which mode. */
  public record Request(String owner, LockMode mode) {}
}
