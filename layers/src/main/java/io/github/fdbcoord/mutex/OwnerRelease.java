package io.github.fdbcoord.mutex;

import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.tuple.Versionstamp;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.api.MutexOwner;
import io.github.fdbcoord.mutex.MutexSchema.Waiter;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;

/**
 * The end of a grant by its owner, inside the caller's transaction: a release (the queue's head gets the mutex, or it
 * becomes free) and a hand-over to a named waiter ({@link MutexService#releaseTo}). Both are idempotent: a retry
 * after {@code commit_unknown_result} that finds the grant ended looks for its own transition in the event log.
 */
final class OwnerRelease {
  private final MutexSchema schema;
  private final MutexTransitions transitions;

  OwnerRelease(MutexSchema schema, MutexTransitions transitions) {
    this.schema = schema;
    this.transitions = transitions;
  }

  /**
   * Reads the owner record and the queue's head together: a release that ends the grant needs both,
   * and one refused reads the head for nothing (its transaction commits no writes).
   */
  CompletableFuture<AfterCommit<LockEvent>> releaseIn(Transaction tr, String name, String owner, FencingToken token) {
    CompletableFuture<MutexOwner> currentRead = schema.readOwner(tr, name);
    CompletableFuture<Waiter> headRead = transitions.readQueueHead(tr, name);
    return currentRead.thenCompose(current -> MutexTransitions.isGrant(current, owner, token)
        ? transitions.endGrant(tr, name, current, true, headRead)
        : findEarlier(tr, name, owner, token, current,
            e -> e.type() == LockEvent.Type.RELEASED || e.type() == LockEvent.Type.HANDED_OFF));
  }

  /**
   * The hand-over of {@code owner}'s grant {@code token} to {@code successor}: the owner record and the successor's
   * ticket are read together, with conflict, then the entry under the ticket (for the host it is kept alive
   * through), also with conflict: a leave, a reaper's removal or a heartbeat of either side committed meanwhile
   * makes the attempt conflict, and its retry decides again on what committed.
   */
  CompletableFuture<AfterCommit<LockEvent>> releaseToIn(Transaction tr, String name, String owner, FencingToken token,
      String successor) {
    CompletableFuture<MutexOwner> currentRead = schema.readOwner(tr, name);
    CompletableFuture<Versionstamp> ticketRead = schema.readTicket(tr, name, successor);
    return currentRead.thenCombine(ticketRead, (current, ticket) -> {
      if (!MutexTransitions.isGrant(current, owner, token)) {
        return findEarlier(tr, name, owner, token, current,
            e -> e.type() == LockEvent.Type.HANDED_OFF && e.owner().equals(Optional.of(successor)));
      }
      if (ticket == null) {
        return CompletableFuture.<AfterCommit<LockEvent>>failedFuture(new NotQueuedException(name, owner, successor));
      }
      return schema.readWaiter(tr, name, ticket).thenApply(waiter -> {
        if (waiter == null || !waiter.owner().equals(successor)) {
          // The owner index names an entry that is gone (never written so): the successor does not wait.
          throw new NotQueuedException(name, owner, successor);
        }
        return transitions.handTo(tr, name, current, waiter);
      });
    }).thenCompose(f -> f);
  }

  /**
   * The grant {@code token} is no longer current: when the event right after it ended it by {@code owner}'s own
   * transition ({@code isThis}; a retried commit that had succeeded), completes with that event; otherwise fails with
   * the refusal. Without a token there is no telling a grant from a later one of the same owner: refused.
   */
  private CompletableFuture<AfterCommit<LockEvent>> findEarlier(Transaction tr, String name, String owner,
      FencingToken token, MutexOwner current, Predicate<LockEvent> isThis) {
    if (token == null) {
      return CompletableFuture.failedFuture(MutexTransitions.refusal(name, owner, null, current));
    }
    return schema.readEventsAfter(tr.snapshot(), name, token, 1).thenApply(next -> {
      if (!next.isEmpty()) {
        LockEvent e = next.get(0);
        if (isThis.test(e) && e.previousToken().equals(Optional.of(token))
            && e.previousOwner().equals(Optional.of(owner))) {
          return AfterCommit.now(e);
        }
      }
      throw MutexTransitions.refusal(name, owner, token, current);
    });
  }
}
