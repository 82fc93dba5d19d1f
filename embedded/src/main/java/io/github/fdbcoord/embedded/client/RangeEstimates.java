package io.github.fdbcoord.embedded.client;

import io.github.fdbcoord.embedded.engine.TransactionEngine;
import io.github.fdbcoord.embedded.storage.VersionedStore;

import com.apple.foundationdb.KeyArrayResult;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** Estimates of a range's size and split points, from the newest visible version (exact, in one process). */
final class RangeEstimates {
  private RangeEstimates() {}

  static CompletableFuture<Long> size(TransactionEngine engine, byte[] begin, byte[] end) {
    long size = 0;
    try (VersionedStore.Cursor c = engine.cursor(begin, end, false, engine.visibleVersion())) {
      while (c.next()) {
        size += c.key.length + c.value.length;
      }
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    return CompletableFuture.completedFuture(size);
  }

  static CompletableFuture<KeyArrayResult> splitPoints(TransactionEngine engine, byte[] begin, byte[] end,
      long chunkSize) {
    List<byte[]> points = new ArrayList<>();
    points.add(begin);
    long acc = 0;
    try (VersionedStore.Cursor c = engine.cursor(begin, end, false, engine.visibleVersion())) {
      while (c.next()) {
        acc += c.key.length + c.value.length;
        if (acc >= chunkSize) {
          points.add(c.key);
          acc = 0;
        }
      }
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    points.add(end);
    int total = 0;
    int[] lengths = new int[points.size()];
    for (int i = 0; i < lengths.length; i++) {
      lengths[i] = points.get(i).length;
      total += lengths[i];
    }
    ByteBuffer buf = ByteBuffer.allocate(total);
    points.forEach(buf::put);
    return CompletableFuture.completedFuture(new KeyArrayResult(buf.array(), lengths));
  }
}
