package io.github.fdbcoord.mutex;

import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.async.AsyncUtil;
import io.github.fdbcoord.fdb.FdbErrors;
import io.github.fdbcoord.mutex.MutexSchema.Incarnation;
import io.github.fdbcoord.mutex.MutexSchema.Waiter;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The clean-up a service with a host id runs at open: removes the queue entries, and ends the grants (handing each to
 * its next live waiter), that were made or last kept alive through an earlier start of this host, since their waiters
 * and holders died with it. What a live process has kept alive since, through another host, names that host and
 * stays.
 */
final class IncarnationCleanup {
  private final FdbMutexService service;
  private final MutexSchema schema;
  private final Incarnation incarnation;

  IncarnationCleanup(FdbMutexService service, MutexSchema schema, Incarnation incarnation) {
    this.service = service;
    this.schema = schema;
    this.incarnation = incarnation;
  }

  /** Pages through the held mutexes, one transaction per mutex; completes with how many entries and grants it removed. */
  CompletableFuture<Integer> run() {
    if (incarnation.host() == null) {
      return CompletableFuture.completedFuture(0);
    }
    AtomicInteger removed = new AtomicInteger();
    String[] after = {null};
    return FdbErrors.unwrapped(AsyncUtil.whileTrue(() ->
        FdbErrors.unwrapped(service.db.readAsync(tr -> schema.readHeld(tr.snapshot(), after[0], MutexReaper.PAGE),
                service.executor))
            .thenCompose(names -> {
              List<CompletableFuture<Integer>> each = new ArrayList<>();
              for (String n : names) {
                each.add(service.transact(tr -> removeIn(tr, n)));
              }
              if (!names.isEmpty()) {
                after[0] = names.get(names.size() - 1);
              }
              return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new)).thenApply(v -> {
                each.forEach(f -> removed.addAndGet(f.join()));
                return names.size() == MutexReaper.PAGE;
              });
            }), service.executor).thenApply(v -> removed.get()));
  }

  private CompletableFuture<AfterCommit<Integer>> removeIn(Transaction tr, String name) {
    return schema.readOwnerBytes(tr, name).thenCombine(
        schema.readWaiters(tr, name, ReadTransaction.ROW_LIMIT_UNLIMITED), (ownerBytes, waiters) -> {
          int n = 0;
          for (Waiter w : waiters) {
            if (w.via() != null && w.via().isEarlierOf(incarnation)) {
              schema.dequeue(tr, name, w);
              n++;
            }
          }
          Incarnation holder = ownerBytes == null ? null : schema.unpackOwnerIncarnation(ownerBytes);
          if (holder == null || !holder.isEarlierOf(incarnation)) {
            return CompletableFuture.completedFuture(AfterCommit.now(n));
          }
          int count = n + 1;
          // The queue read below sees this transaction's own dequeues: the grant goes to a live waiter.
          return service.endGrant(tr, name, schema.unpackOwnerValue(ownerBytes), false).thenApply(a -> a.map(e -> count));
        }).thenCompose(f -> f);
  }
}
