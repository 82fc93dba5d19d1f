package io.github.fdbcoord.embedded.client;

import com.apple.foundationdb.KeyArrayResult;
import com.apple.foundationdb.KeyRangeArrayResult;
import com.apple.foundationdb.KeySelector;
import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.MappedKeyValue;
import com.apple.foundationdb.Range;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.StreamingMode;
import com.apple.foundationdb.TransactionOptions;
import com.apple.foundationdb.async.AsyncIterable;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Function;

/**
 * The read half of a transaction, shared by the transaction itself and its snapshot view: every
 * overload funnels into {@link EmbeddedTransaction}'s reads with this view's snapshot flag.
 */
public abstract class ReadView implements ReadTransaction {
  abstract EmbeddedTransaction tx();

  @Override
  public CompletableFuture<byte[]> get(byte[] key) {
    return tx().reads().get(key, isSnapshot());
  }

  @Override
  public CompletableFuture<byte[]> getKey(KeySelector selector) {
    return tx().reads().getKey(selector, isSnapshot());
  }

  @Override
  public AsyncIterable<KeyValue> getRange(KeySelector begin, KeySelector end) {
    return getRange(begin, end, ROW_LIMIT_UNLIMITED);
  }

  @Override
  public AsyncIterable<KeyValue> getRange(KeySelector begin, KeySelector end, int limit) {
    return getRange(begin, end, limit, false);
  }

  @Override
  public AsyncIterable<KeyValue> getRange(KeySelector begin, KeySelector end, int limit, boolean reverse) {
    return getRange(begin, end, limit, reverse, StreamingMode.ITERATOR);
  }

  @Override
  public AsyncIterable<KeyValue> getRange(KeySelector begin, KeySelector end, int limit, boolean reverse,
      StreamingMode mode) {
    return new RangeIterable(tx().reads(), begin, end, limit, reverse, mode, isSnapshot());
  }

  @Override
  public AsyncIterable<KeyValue> getRange(byte[] begin, byte[] end) {
    return getRange(begin, end, ROW_LIMIT_UNLIMITED);
  }

  @Override
  public AsyncIterable<KeyValue> getRange(byte[] begin, byte[] end, int limit) {
    return getRange(begin, end, limit, false);
  }

  @Override
  public AsyncIterable<KeyValue> getRange(byte[] begin, byte[] end, int limit, boolean reverse) {
    return getRange(begin, end, limit, reverse, StreamingMode.ITERATOR);
  }

  @Override
  public AsyncIterable<KeyValue> getRange(byte[] begin, byte[] end, int limit, boolean reverse, StreamingMode mode) {
    return getRange(KeySelector.firstGreaterOrEqual(begin), KeySelector.firstGreaterOrEqual(end), limit, reverse,
        mode);
  }

  @Override
  public AsyncIterable<KeyValue> getRange(Range range) {
    return getRange(range.begin, range.end);
  }

  @Override
  public AsyncIterable<KeyValue> getRange(Range range, int limit) {
    return getRange(range.begin, range.end, limit);
  }

  @Override
  public AsyncIterable<KeyValue> getRange(Range range, int limit, boolean reverse) {
    return getRange(range.begin, range.end, limit, reverse);
  }

  @Override
  public AsyncIterable<KeyValue> getRange(Range range, int limit, boolean reverse, StreamingMode mode) {
    return getRange(range.begin, range.end, limit, reverse, mode);
  }

  @Override
  public AsyncIterable<MappedKeyValue> getMappedRange(KeySelector begin, KeySelector end, byte[] mapper, int limit,
      boolean reverse, StreamingMode mode) {
    return Unsupported.iterable(tx().getExecutor());
  }

  @Override
  public CompletableFuture<Long> getReadVersion() {
    return tx().reads().readVersionFuture();
  }

  @Override
  public void setReadVersion(long version) {
    tx().assignReadVersion(version);
  }

  @Override
  public CompletableFuture<Long> getEstimatedRangeSizeBytes(byte[] begin, byte[] end) {
    return tx().estimatedRangeSize(begin, end);
  }

  @Override
  public CompletableFuture<Long> getEstimatedRangeSizeBytes(Range range) {
    return getEstimatedRangeSizeBytes(range.begin, range.end);
  }

  @Override
  public CompletableFuture<KeyArrayResult> getRangeSplitPoints(byte[] begin, byte[] end,
      long chunkSize) {
    return tx().rangeSplitPoints(begin, end, chunkSize);
  }

  @Override
  public CompletableFuture<KeyArrayResult> getRangeSplitPoints(Range range, long chunkSize) {
    return getRangeSplitPoints(range.begin, range.end, chunkSize);
  }

  @Override
  public CompletableFuture<KeyRangeArrayResult> getBlobGranuleRanges(byte[] begin, byte[] end,
      int rowLimit) {
    return Unsupported.future();
  }

  @Override
  public TransactionOptions options() {
    return tx().options();
  }

  @Override
  public <T> T read(Function<? super ReadTransaction, T> retryable) {
    return retryable.apply(this);
  }

  @Override
  public <T> CompletableFuture<T> readAsync(
      Function<? super ReadTransaction, ? extends CompletableFuture<T>> retryable) {
    try {
      return retryable.apply(this).thenApply(Function.identity());
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  @Override
  public Executor getExecutor() {
    return tx().getExecutor();
  }

  /** The snapshot view of a transaction: same reads, no read-conflict ranges. */
  static final class Snapshot extends ReadView {
    private final EmbeddedTransaction tx;

    Snapshot(EmbeddedTransaction tx) {
      this.tx = tx;
    }

    @Override
    EmbeddedTransaction tx() {
      return tx;
    }

    @Override
    public boolean isSnapshot() {
      return true;
    }

    @Override
    public ReadTransaction snapshot() {
      return this;
    }

    @Override
    public boolean addReadConflictRangeIfNotSnapshot(byte[] begin, byte[] end) {
      return false;
    }

    @Override
    public boolean addReadConflictKeyIfNotSnapshot(byte[] key) {
      return false;
    }
  }
}
