package io.github.fdbcoord.mutex;

import com.apple.foundationdb.Transaction;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Several mutexes held together, returned by {@link MutexService#acquireAll}: each grant heartbeats as a
 * {@link MutexHandle} does, and they are released together, in one transaction.
 */
public interface MultiMutexHandle {
  String owner();

  /** The grants, by mutex name, in the order the mutexes were queued (their names' order). */
  Map<String, MutexHandle> handles();

  /** The fencing token of each grant, by mutex name. */
  default Map<String, FencingToken> tokens() {
    Map<String, FencingToken> tokens = new LinkedHashMap<>();
    handles().forEach((name, handle) -> tokens.put(name, handle.token()));
    return tokens;
  }

  /** Whether every grant is believed held: none released and none known lost. */
  boolean isHeld();

  /**
   * Releases every grant in one transaction (each mutex handed to its next waiter, or freed); completes with the
   * transitions, in the handles' order. Fails, releasing nothing, with the store's refusal when a grant was lost.
   */
  CompletableFuture<List<LockEvent>> release();

  /** Fences the caller's own transaction with every grant ({@link MutexHandle#fence} for each). */
  CompletableFuture<Void> fence(Transaction tr);

  /** Completes, with its refusal, when any of the grants is found ended by someone else. */
  CompletableFuture<MutexException> lost();
}
