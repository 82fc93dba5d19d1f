package io.github.fdbcoord.lease;

/**
 * Told when a committed transaction granted a semaphore permit or a read-write lock to an owner that waits in
 * another process (a release, a waiter leaving, the reaper), so that that process learns of its grant before its
 * watch fires, which on a real FoundationDB takes about 10 ms: deliver the hint there and call the service's {@code
 * recheck(name, owner)}. Waits in the granting process are told directly, without it.
 *
 * <p>A hint carries no authority: the receiver only reads the lock again and takes the grant only if the committed
 * state names its owner. A hint lost, late, duplicated or forged costs at most one read; the watch still tells.
 */
@FunctionalInterface
public interface GrantNotifier {
  /**
   * {@code owner} was granted {@code name} by a commit that succeeded. Called on the thread that completed the
   * commit: must not block (send a message and return). What it throws is logged and ignored.
   */
  void granted(String name, String owner);
}
