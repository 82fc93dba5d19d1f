package io.github.fdbcoord.mutex;

import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.Transaction;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Removes, inside a caller's transaction, everything a group of owners (those whose name starts
 * with a prefix, for example every lock owner of one cluster node) has in the mutexes: their queue
 * entries, and their grants, each handed to the next waiter that stays. The caller makes it part of
 * a larger change (a cluster node's eviction) that must commit as a whole or not at all.
 */
final class OwnerRemoval {
  private final MutexSchema schema;
  private final MutexTransitions transitions;

  OwnerRemoval(MutexSchema schema, MutexTransitions transitions) {
    this.schema = schema;
    this.transitions = transitions;
  }

  /**
   * Finds the mutexes where a matching owner holds or waits with a snapshot scan of the held
   * mutexes (only a held mutex has waiters), then re-reads each found one with conflict before
   * changing it, so a concurrent hand-off or release makes the caller's transaction retry rather
   * than act on a stale queue. Completes with how many grants and queue entries it removed.
   */
  CompletableFuture<Integer> removeIn(Transaction tr, String ownerPrefix) {
    return schema.readHeld(tr.snapshot(), null, ReadTransaction.ROW_LIMIT_UNLIMITED)
        .thenCompose(names -> {
          List<CompletableFuture<String>> candidates = new ArrayList<>(names.size());
          for (String name : names) {
            candidates.add(involves(tr.snapshot(), name, ownerPrefix).thenApply(yes -> yes ? name : null));
          }
          return CompletableFuture.allOf(candidates.toArray(CompletableFuture[]::new)).thenCompose(v -> {
            CompletableFuture<Integer> removed = CompletableFuture.completedFuture(0);
            for (CompletableFuture<String> c : candidates) {
              String name = c.join();
              if (name != null) {
                // One mutex after the other: each hand-off reads the queue this transaction left.
                removed = removed.thenCompose(n -> removeFrom(tr, name, ownerPrefix).thenApply(m -> n + m));
              }
            }
            return removed;
          });
        });
  }

  private CompletableFuture<Boolean> involves(ReadTransaction snapshot, String name, String ownerPrefix) {
    return schema.readOwner(snapshot, name).thenCombine(
        schema.readWaiters(snapshot, name, ReadTransaction.ROW_LIMIT_UNLIMITED),
        (owner, waiters) -> (owner != null && owner.owner().startsWith(ownerPrefix))
            || waiters.stream().anyMatch(w -> w.owner().startsWith(ownerPrefix)));
  }

  private CompletableFuture<Integer> removeFrom(Transaction tr, String name, String ownerPrefix) {
    return schema.readOwner(tr, name).thenCombine(
        schema.readWaiters(tr, name, ReadTransaction.ROW_LIMIT_UNLIMITED), (owner, waiters) -> {
          int n = 0;
          for (MutexSchema.Waiter w : waiters) {
            if (w.owner().startsWith(ownerPrefix)) {
              schema.dequeue(tr, name, w);
              n++;
            }
          }
          if (owner == null || !owner.owner().startsWith(ownerPrefix)) {
            return CompletableFuture.completedFuture(n);
          }
          int count = n + 1;
          // The queue head endGrant reads sees the dequeues above: the grant goes to a waiter that stays.
          return transitions.endGrant(tr, name, owner, false).thenApply(a -> count);
        }).thenCompose(f -> f);
  }
}
