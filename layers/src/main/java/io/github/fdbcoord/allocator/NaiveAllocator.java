package io.github.fdbcoord.allocator;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.subspace.Subspace;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * Seed 000's naive allocator: one counter, read and rewritten by every allocation. Correct, but
 * every two concurrent allocations conflict, so its throughput is bounded by one commit at a time.
 * Kept as the baseline the windowed {@link HighContentionAllocator} is measured against. Values
 * start at 1 and are dense when no transaction aborts.
 */
public final class NaiveAllocator extends TransactionalAllocator {
  public NaiveAllocator(String name, Database database, Subspace subspace, Executor executor) {
    super(name, database, subspace, executor);
  }

  @Override
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
