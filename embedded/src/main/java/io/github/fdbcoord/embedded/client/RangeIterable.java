package io.github.fdbcoord.embedded.client;

import io.github.fdbcoord.embedded.bytes.Bytes;

import com.apple.foundationdb.FDBException;
import com.apple.foundationdb.KeySelector;
import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.StreamingMode;
import com.apple.foundationdb.async.AsyncIterable;
import com.apple.foundationdb.async.AsyncIterator;
import io.github.fdbcoord.fdb.FdbErrors;

import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * A range read. {@link #asList()} reads everything in one batch; an iterator reads in batches
 * sized by the streaming mode, each adding the read-conflict range of what it actually read, so
 * a read abandoned early conflicts only with what it saw (as in FoundationDB).
 */
public final class RangeIterable implements AsyncIterable<KeyValue> {
  /** FoundationDB's exact_mode_without_limits (flow/error_definitions.h). */
  static final int EXACT_MODE_WITHOUT_LIMITS = 2210;
  private final TransactionReads tx;
  private final KeySelector begin;
  private final KeySelector end;
  private final int limit;
  private final boolean reverse;
  private final StreamingMode mode;
  private final boolean snapshot;

  RangeIterable(TransactionReads tx, KeySelector begin, KeySelector end, int limit, boolean reverse,
      StreamingMode mode, boolean snapshot) {
    this.tx = tx;
    this.begin = begin;
    this.end = end;
    this.limit = limit;
    this.reverse = reverse;
    this.mode = mode;
    this.snapshot = snapshot;
  }

  /** exact_mode_without_limits: fdb_c refuses EXACT with neither a row nor a byte limit before the transaction sees it. */
  static FDBException exactModeWithoutLimits() {
    return new FDBException("EXACT streaming mode requires limits, but none were given", EXACT_MODE_WITHOUT_LIMITS);
  }

  private CompletableFuture<Void> checkArguments() {
    if (limit < 0) {
      return CompletableFuture.failedFuture(FdbErrors.error(FdbErrors.RANGE_LIMITS_INVALID));
    }
    if (mode == StreamingMode.EXACT && limit == 0) {
      return CompletableFuture.failedFuture(exactModeWithoutLimits());
    }
    return null;
  }

  @Override
  public CompletableFuture<List<KeyValue>> asList() {
    CompletableFuture<Void> bad = checkArguments();
    if (bad != null) {
      return bad.thenApply(v -> null);
    }
    return tx.resolveBounds(begin, end, snapshot)
        .thenCompose(b -> b.empty ? CompletableFuture.completedFuture(List.<KeyValue>of())
            : tx.readBatch(b, b.begin, b.end, limit, reverse, snapshot).thenApply(batch -> batch.rows));
  }

  @Override
  public AsyncIterator<KeyValue> iterator() {
    Iterator it = new Iterator();
    // fdb-java issues the first fetch when the iterator is created, so a write made after that
    // (DirectoryLayer.remove clears a node, then iterates its children) is not seen by it.
    it.onHasNext();
    return it;
  }

  private int batchSize(int batchNumber) {
    switch (mode) {
      case WANT_ALL:
      case EXACT:
        return 0;
      case SMALL:
        return 32;
      case MEDIUM:
        return 256;
      case LARGE:
        return 1024;
      case SERIAL:
        return 4096;
      default:
        // ITERATOR: start small, grow, as FoundationDB's iterator mode does.
        return Math.min(4096, 32 << Math.min(batchNumber, 7));
    }
  }

  private final class Iterator implements AsyncIterator<KeyValue> {
    private MergedView.Bounds bounds;
    private byte[] cursorBegin;
    private byte[] cursorEnd;
    private List<KeyValue> buffer = new ArrayList<>();
    private int position;
    private int returned;
    private int batches;
    private boolean exhausted;
    private boolean cancelled;
    private CompletableFuture<Boolean> pending;

    @Override
    public synchronized CompletableFuture<Boolean> onHasNext() {
      if (position < buffer.size()) {
        return CompletableFuture.completedFuture(true);
      }
      if (exhausted || cancelled) {
        return CompletableFuture.completedFuture(false);
      }
      if (pending != null && !pending.isDone()) {
        return pending;
      }
      CompletableFuture<Void> bad = checkArguments();
      if (bad != null) {
        return bad.thenApply(v -> false);
      }
      CompletableFuture<MergedView.Bounds> resolved = bounds != null
          ? CompletableFuture.completedFuture(bounds)
          : tx.resolveBounds(begin, end, snapshot);
      pending = resolved.thenCompose(this::fetch);
      return pending;
    }

    private CompletableFuture<Boolean> fetch(MergedView.Bounds b) {
      synchronized (this) {
        if (bounds == null) {
          bounds = b;
          cursorBegin = b.begin;
          cursorEnd = b.end;
        }
        if (b.empty) {
          exhausted = true;
          return CompletableFuture.completedFuture(false);
        }
      }
      int size = batchSize(batches++);
      int remaining = limit == 0 ? 0 : limit - returned;
      int want = size == 0 ? remaining : remaining == 0 ? size : Math.min(size, remaining);
      return tx.readBatch(bounds, cursorBegin, cursorEnd, want, reverse, snapshot).thenApply(batch -> {
        synchronized (this) {
          buffer = batch.rows;
          position = 0;
          returned += batch.rows.size();
          boolean limitReached = limit > 0 && returned >= limit;
          if (!batch.limited || limitReached || batch.rows.isEmpty()) {
            exhausted = true;
          } else {
            byte[] last = batch.rows.get(batch.rows.size() - 1).getKey();
            if (reverse) {
              cursorEnd = last;
            } else {
              cursorBegin = Bytes.keyAfter(last);
            }
          }
          return !buffer.isEmpty();
        }
      });
    }

    @Override
    public boolean hasNext() {
      try {
        return onHasNext().join();
      } catch (CompletionException e) {
        if (e.getCause() instanceof RuntimeException) {
          throw (RuntimeException) e.getCause();
        }
        throw e;
      }
    }

    @Override
    public KeyValue next() {
      if (!hasNext()) {
        throw new NoSuchElementException();
      }
      synchronized (this) {
        return buffer.get(position++);
      }
    }

    @Override
    public synchronized void cancel() {
      cancelled = true;
    }
  }
}
