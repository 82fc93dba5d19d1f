package io.github.fdbcoord.mutex;

import com.apple.foundationdb.Transaction;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.api.MutexOwner;
import com.apple.foundationdb.tuple.Versionstamp;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A release that hands the grant to a named waiter instead of the queue's head ({@link MutexService#releaseTo}):
 * one transaction reads the owner record and the successor's queue entry with conflict, then ends the grant and
 * grants the successor ({@link MutexTransitions#handTo}). A leave, a reaper's removal or a heartbeat of either side
 * committed meanwhile makes the attempt conflict, and its retry decides again on what committed.
 */
final class DirectedHandOff {
  private final MutexSchema schema;
  private final MutexTransitions transitions;

  DirectedHandOff(MutexSchema schema, MutexTransitions transitions) {
    this.schema = schema;
    this.transitions = transitions;
  }

  /**
   * The hand-over of {@code owner}'s grant {@code token} to {@code successor}, inside {@code tr}. The owner record
   * and the successor's ticket are read together; the entry under the ticket (for the host it is kept alive
   * through) after. A grant already ended is looked up in the event log first: a retry after
   * {@code commit_unknown_result} finds its own hand-over there and succeeds with it.
   */
  CompletableFuture<AfterCommit<LockEvent>> releaseToIn(Transaction tr, String name, String owner, FencingToken token,
      String successor) {
    CompletableFuture<MutexOwner> currentRead = schema.readOwner(tr, name);
    CompletableFuture<Versionstamp> ticketRead = schema.readTicket(tr, name, successor);
    return currentRead.thenCombine(ticketRead, (current, ticket) -> {
      if (!MutexTransitions.isGrant(current, owner, token)) {
        return findEarlierHandOff(tr, name, owner, token, successor, current);
      }
      if (ticket == null) {
        return CompletableFuture.<AfterCommit<LockEvent>>failedFuture(new NotQueuedException(name, owner, successor));
      }
      return schema.readWaiter(tr, name, ticket).thenApply(waiter -> {
        if (waiter == null || !waiter.owner().equals(successor)) {
          // The index names an entry that is gone: the successor does not wait (never written so, but no grant on it).
          throw new NotQueuedException(name, owner, successor);
        }
        return transitions.handTo(tr, name, current, waiter);
      });
    }).thenCompose(f -> f);
  }

  /**
   * The grant is no longer current: when the event right after it is this very hand-over (a retried commit that had
   * succeeded), completes with that event; otherwise fails with the refusal a release would get.
   */
  private CompletableFuture<AfterCommit<LockEvent>> findEarlierHandOff(Transaction tr, String name, String owner,
      FencingToken token, String successor, MutexOwner current) {
    return schema.readEventsAfter(tr.snapshot(), name, token, 1).thenApply(next -> {
      if (!next.isEmpty()) {
        LockEvent e = next.get(0);
        if (e.type() == LockEvent.Type.HANDED_OFF && e.previousToken().equals(Optional.of(token))
            && e.previousOwner().equals(Optional.of(owner)) && e.owner().equals(Optional.of(successor))) {
          return AfterCommit.now(e);
        }
      }
      throw MutexTransitions.refusal(name, owner, token, current);
    });
  }
}
