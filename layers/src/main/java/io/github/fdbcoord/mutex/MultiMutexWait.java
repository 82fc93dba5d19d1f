package io.github.fdbcoord.mutex;

import io.github.fdbcoord.api.FencingToken;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * A wait for several mutexes at once, all or none, started by {@link MutexService#awaitAllGrants}: the owner's queue
 * entries are kept alive while it waits, and so are the grants it already has (a grant made while another mutex is
 * still awaited is heartbeated by the wait); once every mutex is granted the grants are handed over without being
 * heartbeated any more (their holder heartbeats each, with {@link MutexService#heartbeat(String, String,
 * FencingToken)}).
 */
public interface MultiMutexWait {
  /** The mutexes waited for: each name once, sorted (the order the owner was queued in). */
  List<String> names();

  String owner();

  /**
   * Completes with every grant's token, by mutex name in {@link #names()}' order, once the owner holds them all.
   * Fails as {@link MutexWait#granted()} does (timed out, closed, cancelled, a storage error), and also when a grant
   * already made was found ended by someone else before the others came. It fails only once every queue is left
   * and every grant made is released.
   */
  CompletableFuture<Map<String, FencingToken>> granted();

  /**
   * Ends the wait unless it already ended: every queue entry leaves (each in the one transaction that also checks for
   * a grant made meanwhile) and every grant made is released. Completes once that is done, with whether this call
   * ended the wait.
   */
  CompletableFuture<Boolean> cancel();
}
