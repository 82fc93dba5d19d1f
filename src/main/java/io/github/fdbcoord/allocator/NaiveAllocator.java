package io.github.fdbcoord.allocator;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.TransactionContext;
import com.apple.foundationdb.subspace.Subspace;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * Seed 000's naive allocator: one counter, read and rewritten by every allocation. Correct, but
 * every two concurrent allocations conflict, so its throughput is bounded by one commit at a time.
 * Kept as the baseline the windowed {@link HighContentionAllocator} is measured against. Values
 * start at 1 and are dense when no transaction aborts.
 */
public final class NaiveAllocator implements Allocator {
  private final String name;
  private final Database database;
  private final AllocatorSchema schema;
  private final Executor executor;

  public NaiveAllocator(String name, Database database, Subspace subspace, Executor executor) {
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
  public CompletableFuture<Long> allocateOnce(Transaction tr) {
    return schema.naiveCounter(tr)
        .thenApply(current -> increment(tr, current));
  }

  private long increment(Transaction tr, long current) {
    long next = current + 1;
    schema.setNaiveCounter(tr, next);
    return next;
  }
}
