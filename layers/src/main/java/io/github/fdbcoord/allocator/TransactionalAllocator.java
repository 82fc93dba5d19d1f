package io.github.fdbcoord.allocator;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.TransactionContext;
import com.apple.foundationdb.subspace.Subspace;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/** What both allocators share: one allocation per attempt, run alone or in a caller's transaction. */
abstract class TransactionalAllocator implements Allocator {
  final String name;
  final Database database;
  final AllocatorSchema schema;
  final Executor executor;

  TransactionalAllocator(String name, Database database, Subspace subspace, Executor executor) {
    this.name = Objects.requireNonNull(name, "name");
    this.database = Objects.requireNonNull(database, "database");
    this.schema = new AllocatorSchema(subspace);
    this.executor = Objects.requireNonNull(executor, "executor");
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public CompletableFuture<Long> allocate() {
    return database.runAsync(this::allocateOnce, executor);
  }

  @Override
  public CompletableFuture<Long> allocate(TransactionContext context) {
    if (context instanceof Database) {
      return ((Database) context).runAsync(this::allocateOnce, executor);
    }
    return context.runAsync(this::allocateOnce);
  }

  /** One allocation inside {@code tr}, without retrying: the caller owns the transaction. */
  public abstract CompletableFuture<Long> allocateOnce(Transaction tr);
}
