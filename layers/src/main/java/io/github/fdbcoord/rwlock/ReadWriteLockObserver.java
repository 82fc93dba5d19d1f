package io.github.fdbcoord.rwlock;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.Transaction;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.lease.StateObserver;
import io.github.fdbcoord.lease.StateSubscription;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.BiConsumer;

/**
 * {@link ReadWriteLockService#observeVersions}: the state read as {@link ReadWriteLockService#state} reads it, with
 * the version and a watch on the generation and the changes key in the same transaction. The generation changes with
 * grants and downgrades, the changes key with the queue and the end of a grant; heartbeats wake no observer.
 */
final class ReadWriteLockObserver {
  private ReadWriteLockObserver() {
  }

  static CompletableFuture<StateSubscription> observe(Database db, ReadWriteLockSchema schema, Executor executor,
      ScheduledExecutorService scheduler, String name, BiConsumer<FencingToken, ReadWriteLockState> listener) {
    ReadWriteLockSchema.checkName(name, "lock name");
    return StateObserver.start(name, db, executor, scheduler, tr -> read(tr, schema, name), listener);
  }

  private static CompletableFuture<StateObserver.Read<ReadWriteLockState>> read(Transaction tr,
      ReadWriteLockSchema schema, String name) {
    List<CompletableFuture<Void>> watches = List.of(schema.watchGeneration(tr, name),
        schema.watchChanges(tr, name));
    ReadTransaction snapshot = tr.snapshot();
    CompletableFuture<FencingToken> version = schema.readVersion(snapshot, name);
    CompletableFuture<List<ReadWriteLockSchema.Holder>> holders = schema.readHolders(snapshot, name);
    CompletableFuture<List<ReadWriteLockSchema.Waiter>> queue =
        schema.readQueue(snapshot, name, ReadTransaction.ROW_LIMIT_UNLIMITED);
    return CompletableFuture.allOf(version, holders, queue).thenApply(v -> new StateObserver.Read<>(version.join(),
        new ReadWriteLockState(name, holders.join().stream().map(h -> h.toGrant(name)).toList(),
            queue.join().stream().map(w -> new ReadWriteLockState.Request(w.owner(), w.mode())).toList()), watches));
  }
}
