package io.github.fdbcoord.interner;

import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link ValueBatch}: one future for many reads, values by index whatever order they arrive in. */
class ValueBatchTest {
  @Test
  void completesWithEveryValueByIndexOnlyAfterTheLastRead() {
    ValueBatch batch = new ValueBatch(3);
    CompletableFuture<byte[]> a = new CompletableFuture<>();
    CompletableFuture<byte[]> b = new CompletableFuture<>();
    CompletableFuture<byte[]> c = new CompletableFuture<>();
    batch.add(0, a);
    batch.add(1, b);
    batch.add(2, c);
    c.complete(new byte[] {3});
    a.complete(new byte[] {1});
    assertFalse(batch.values().isDone(), "one read is still out");
    b.complete(null);
    byte[][] values = batch.values().join();
    assertArrayEquals(new byte[] {1}, values[0]);
    assertNull(values[1], "an absent key reads as null");
    assertArrayEquals(new byte[] {3}, values[2]);
  }

  @Test
  void theFirstFailedReadFailsTheBatch() {
    ValueBatch batch = new ValueBatch(2);
    CompletableFuture<byte[]> ok = new CompletableFuture<>();
    CompletableFuture<byte[]> failed = new CompletableFuture<>();
    batch.add(0, ok);
    batch.add(1, failed);
    IllegalStateException cause = new IllegalStateException("read failed");
    failed.completeExceptionally(cause);
    assertTrue(batch.values().isCompletedExceptionally(), "failed without waiting for the other read");
    ok.complete(new byte[0]);
    CompletionException e = assertThrows(CompletionException.class, () -> batch.values().join());
    assertSame(cause, e.getCause());
  }

  @Test
  void noReadsIsDoneAtOnce() {
    assertTrue(new ValueBatch(0).values().isDone());
  }
}
