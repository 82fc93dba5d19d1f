package io.github.fdbcoord.allocator;

import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.TransactionContext;

import java.util.concurrent.CompletableFuture;

/**
 * Hands out integers that are unique within one allocator: no value is ever returned twice by
 * committed transactions, whatever the concurrency, retries or number of processes.
 *
 * <p>Values are only unique, not dense and not ordered: an allocation whose transaction does not
 * commit may leave a gap.
 */
public interface Allocator {

  /** The allocator's name (unique within its {@link AllocatorService}). */
  String name();

  /** Allocates a value in a transaction of its own, retried until it commits. */
  CompletableFuture<Long> allocate();

  /**
   * Allocates a value inside {@code context}: with a {@link Transaction} the value belongs to
   * that transaction and is only allocated if it commits; with a database, in a retry loop.
   */
  CompletableFuture<Long> allocate(TransactionContext context);

  /** {@link #allocate()} returned as the compact prefix encoding of {@link AllocatorSchema#packPrefix}. */
  default CompletableFuture<byte[]> allocatePrefix() {
    return allocate().thenApply(AllocatorSchema::packPrefix);
  }

  /** {@link #allocate(TransactionContext)} returned as the compact prefix encoding. */
  default CompletableFuture<byte[]> allocatePrefix(TransactionContext context) {
    return allocate(context).thenApply(AllocatorSchema::packPrefix);
  }
}
