package io.github.fdbcoord.interner;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The values of several reads of one transaction, delivered by one future when the last arrives.
 * A batch of a hundred reads through {@code allOf} and a {@code thenApply} per read builds some
 * three hundred futures and runs a continuation per read; this builds one callback per read and
 * one future, which matters when the client's CPU is what limits the rate.
 */
final class ValueBatch {
  private final byte[][] values;
  private final AtomicInteger pending;
  private final CompletableFuture<byte[][]> done = new CompletableFuture<>();

  ValueBatch(int reads) {
    values = new byte[reads][];
    pending = new AtomicInteger(reads);
    if (reads == 0) {
      done.complete(values);
    }
  }

  /** Records the value of read {@code index} (null: no such key) when {@code read} completes. */
  void add(int index, CompletableFuture<byte[]> read) {
    read.whenComplete((value, error) -> {
      if (error != null) {
        done.completeExceptionally(error);
        return;
      }
      values[index] = value;
      // The decrement publishes the write above to whichever reader's callback completes the batch.
      if (pending.decrementAndGet() == 0) {
        done.complete(values);
      }
    });
  }

  /** Every value, by index, once every read added has completed; the first failure otherwise. */
  CompletableFuture<byte[][]> values() {
    return done;
  }
}
