package io.github.fdbcoord.embedded.client;

import io.github.fdbcoord.embedded.engine.TransactionEngine;
import io.github.fdbcoord.embedded.engine.Watches;
import io.github.fdbcoord.embedded.bytes.Bytes;

import com.apple.foundationdb.FDBException;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Executor;

/**
 * The watches a transaction created and has not yet handed to a commit. Each holds a slot of the
 * database's watch limit until it fires, fails or is cancelled. Not thread-safe: the transaction's
 * monitor guards it.
 */
final class OwnWatches {
  private final TransactionEngine engine;
  private final Executor executor;
  private List<Watches.Watch> watches;

  OwnWatches(TransactionEngine engine, Executor executor) {
    this.engine = engine;
    this.executor = executor;
  }

  boolean isEmpty() {
    return watches == null;
  }

  void add(Watches.Watch w) {
    if (watches == null) {
      watches = new ArrayList<>();
    }
    watches.add(w);
  }

  /**
   * A watch cancelled before the commit gives its slot back at once, as FoundationDB counts a watch only
   * while its future is live.
   */
  void cancelled(Watches.Watch w) {
    if (watches != null && watches.remove(w)) {
      engine.unreserveWatch();
    }
  }

  /**
   * A write of this transaction to a key it watches fires the watch at once when the value changes
   * (or cannot be known before commit), as FoundationDB's read-your-writes client does. {@code end}
   * null: the write is to {@code begin} alone.
   */
  void written(byte[] begin, byte[] end, byte[] value, boolean known) {
    if (watches == null) {
      return;
    }
    watches.removeIf(w -> {
      boolean inRange = end == null ? Arrays.equals(w.key, begin)
          : Bytes.compare(w.key, begin) >= 0 && Bytes.compare(w.key, end) < 0;
      if (!inRange || (known && Arrays.equals(w.seen, value))) {
        return false;
      }
      engine.unreserveWatch();
      executor.execute(() -> w.future.complete(null));
      return true;
    });
  }

  /** Fails every watch not yet handed to a commit (the transaction was reset, cancelled or closed). */
  void failAll(FDBException error) {
    fail(watches, error);
    watches = null;
  }

  /** Hands the live watches to a commit, which registers them once it is applied. */
  List<Watches.Watch> handOver() {
    if (watches == null) {
      return null;
    }
    List<Watches.Watch> live = new ArrayList<>(watches.size());
    for (Watches.Watch w : watches) {
      if (w.future.isDone()) {
        engine.unreserveWatch();
      } else {
        live.add(w);
      }
    }
    watches = null;
    return live;
  }

  /** Watches handed to a commit that failed fail with the commit's error. */
  void fail(List<Watches.Watch> handed, Throwable error) {
    if (handed == null) {
      return;
    }
    for (Watches.Watch w : handed) {
      engine.unreserveWatch();
      executor.execute(() -> w.future.completeExceptionally(error));
    }
  }
}
