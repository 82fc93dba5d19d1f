package io.github.fdbcoord.mutex;

import io.github.fdbcoord.api.FencingToken;

/**
 * Told when a committed transaction of a {@link MutexService} handed a mutex to a waiter (a
 * release, an eviction by the reaper or by {@link MutexService#removeOwnersIn}, the clean-up at
 * open), so that the waiter's process can learn of its grant before its watch fires: deliver the
 * hint there and call {@link MutexService#recheck} on that process's service.
 *
 * <p>A hint carries no authority: the receiver only reads the mutex again, and acquires it only if
 * the committed owner record names the waiting owner. A hint lost, late, duplicated or forged costs
 * at most one read; the watch still hands off.
 */
@FunctionalInterface
public interface HandOffNotifier {
  /**
   * Mutex {@code name} was granted to {@code owner} with fencing token {@code token} by a commit that
   * succeeded. Called on the thread that completed the commit: must not block (send a message and
   * return). What it throws is logged and ignored.
   */
  void handedOff(String name, String owner, FencingToken token);
}
