package io.github.fdbcoord.semaphore;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.Transaction;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.lease.StateObserver;
import io.github.fdbcoord.lease.StateSubscription;
import io.github.fdbcoord.semaphore.SemaphoreService.Holder;
import io.github.fdbcoord.semaphore.SemaphoreService.SemaphoreState;
import io.github.fdbcoord.semaphore.SemaphoreSchema.Waiter;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.BiConsumer;

/**
 * {@link SemaphoreService#observeVersions}: the state read as {@link SemaphoreService#state} reads it, with the
 * version and a watch on the generation and the changes key in the same transaction. The generation changes with the
 * holders and the changes key with the queue, so a heartbeat (which changes neither) wakes no observer.
 */
final class SemaphoreObserver {
  private SemaphoreObserver() {
  }

  static CompletableFuture<StateSubscription> observe(Database db, SemaphoreSchema schema, Executor executor,
      ScheduledExecutorService scheduler, String name, BiConsumer<FencingToken, SemaphoreState> listener) {
    SemaphoreSchema.checkName(name, "semaphore name");
    return StateObserver.start(name, db, executor, scheduler, tr -> read(tr, schema, name), listener);
  }

  private static CompletableFuture<StateObserver.Read<SemaphoreState>> read(Transaction tr, SemaphoreSchema schema,
      String name) {
    List<CompletableFuture<Void>> watches = List.of(schema.watchGeneration(tr, name),
        schema.watchChanges(tr, name));
    ReadTransaction snapshot = tr.snapshot();
    CompletableFuture<FencingToken> version = schema.readVersion(snapshot, name);
    CompletableFuture<Integer> permits = schema.readPermits(snapshot, name);
    CompletableFuture<List<Holder>> holders = schema.readHolders(snapshot, name);
    CompletableFuture<List<Waiter>> queue = schema.readQueue(snapshot, name, ReadTransaction.ROW_LIMIT_UNLIMITED);
    return CompletableFuture.allOf(version, permits, holders, queue).thenApply(v -> new StateObserver.Read<>(
        version.join(), new SemaphoreState(permits.join() == null ? 0 : permits.join(), holders.join(),
            queue.join().stream().map(Waiter::owner).toList()), watches));
  }
}
