package io.github.fdbcoord.embedded.client;

import io.github.fdbcoord.embedded.engine.Engine;
import io.github.fdbcoord.embedded.engine.Limits;
import io.github.fdbcoord.embedded.engine.PendingWrite;
import io.github.fdbcoord.embedded.engine.TransactionEngine;
import io.github.fdbcoord.embedded.bytes.Bytes;
import io.github.fdbcoord.embedded.storage.RocksStorage;
import io.github.fdbcoord.embedded.storage.VersionedStore;

import com.apple.foundationdb.FDBException;
import com.apple.foundationdb.KeySelector;
import com.apple.foundationdb.KeyValue;
import io.github.fdbcoord.fdb.FdbErrors;

import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * A transaction's reads: point reads, key selectors and range batches over its {@link MergedView}, each
 * checked as FoundationDB checks it (legal keys, the read version's age, errors deferred by writes) and
 * adding its read-conflict ranges unless it is a snapshot read. Answers are delivered after the engine's
 * configured read latency when they reach storage. Runs under the transaction's monitor.
 */
final class TransactionReads {
  private final EmbeddedTransaction tx;
  private final TransactionEngine engine;
  private final Executor executor;
  private final TransactionSettings settings;
  private final WriteMap writes;
  private final ConflictRanges conflicts;
  private final MergedView view;

  TransactionReads(EmbeddedTransaction tx) {
    this.tx = tx;
    this.engine = tx.engine;
    this.executor = tx.executor;
    this.settings = tx.settings;
    this.writes = tx.writes;
    this.conflicts = tx.conflicts;
    this.view = new MergedView(engine, writes);
  }

  /** Forgets what storage answered (the transaction was reset for a retry). */
  void reset() {
    view.reset();
  }

  /**
   * FoundationDB's check before a read at the read version (1009). Whether the version is too old
   * (1007) is decided where a read actually reaches storage: what the transaction's cache of earlier
   * reads and its writes answer needs none. Caller holds the monitor.
   */
  private void checkReadVersion(long rv) {
    if (rv > engine.visibleVersion()) {
      throw FdbErrors.error(FdbErrors.FUTURE_VERSION);
    }
  }

  private <T> CompletableFuture<T> deliver(T value, boolean fromStorage, boolean tookReadVersion) {
    long delay = fromStorage ? engine.readLatencyNanos() * (tookReadVersion ? 2 : 1) : 0;
    if (delay == 0) {
      return CompletableFuture.completedFuture(value);
    }
    CompletableFuture<T> f = new CompletableFuture<>();
    engine.schedule(delay, executor, () -> f.complete(value));
    return f;
  }

  <T> CompletableFuture<T> fail(Throwable t) {
    if (t instanceof VersionedStore.TooOld) {
      t = FdbErrors.error(FdbErrors.TRANSACTION_TOO_OLD);
    } else if (t instanceof RocksStorage.StorageFailure f) {
      t = Engine.storageError(f);
    }
    long latency = engine.readLatencyNanos();
    if (latency == 0) {
      return CompletableFuture.failedFuture(t);
    }
    CompletableFuture<T> f = new CompletableFuture<>();
    Throwable error = t;
    engine.schedule(latency, executor, () -> f.completeExceptionally(error));
    return f;
  }

  // ---------------------------------------------------------------- reads

  CompletableFuture<byte[]> get(byte[] key, boolean snapshot) {
    if (key == null) {
      throw new IllegalArgumentException("Key cannot be null");
    }
    try {
      synchronized (tx) {
        FDBException err = tx.openForRead();
        if (err != null) {
          return fail(err);
        }
        if (Bytes.compare(key, settings.maxReadKey()) >= 0) {
          return fail(FdbErrors.error(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE));
        }
        if (key.length > Limits.maxKeySize(key)) {
          return CompletableFuture.completedFuture(null);
        }
        // What the write map answers needs no read version (FoundationDB takes one at the first
        // read that reaches storage).
        PendingWrite w = null;
        if (settings.seesOwnWrites(snapshot)) {
          w = writes.get(key);
          if (w != null) {
            if (w.kind == PendingWrite.Kind.KNOWN) {
              return CompletableFuture.completedFuture(copy(w.value));
            }
            if (w.kind == PendingWrite.Kind.STAMPED) {
              return fail(FdbErrors.error(FdbErrors.ACCESSED_UNREADABLE));
            }
          } else {
            if (writes.isCleared(key)) {
              return CompletableFuture.completedFuture(null);
            }
            if (writes.isUnreadable(key)) {
              return fail(FdbErrors.error(FdbErrors.ACCESSED_UNREADABLE));
            }
          }
        }
        boolean tookReadVersion = !tx.hasReadVersion();
        long rv = tx.readVersion();
        checkReadVersion(rv);
        byte[] value;
        boolean fromStorage = !engine.tooOld(rv);
        if (fromStorage) {
          try {
            value = engine.get(key, rv);
          } catch (VersionedStore.TooOld e) {
            value = view.cachedValue(key);
            fromStorage = false;
          }
        } else {
          value = view.cachedValue(key);
        }
        byte[] after = null;
        if (!snapshot) {
          after = Bytes.keyAfter(key);
          conflicts.addRead(key, after);
        }
        if (fromStorage && !settings.rywDisabled) {
          // keyAfter(key) is the cache's own copy of the key (shared with the conflict range).
          view.recordPoint(after != null ? after : Bytes.keyAfter(key), value);
        }
        if (w != null) {
          value = w.applyOps(value);
        }
        return deliver(copy(value), fromStorage, tookReadVersion);
      }
    } catch (RuntimeException e) {
      return fail(e);
    }
  }

  /** The first batch of a range read resolves its selectors; later batches reuse them. */
  CompletableFuture<MergedView.Bounds> resolveBounds(KeySelector begin, KeySelector end, boolean snapshot) {
    try {
      synchronized (tx) {
        byte[] max = settings.maxReadKey();
        FDBException refused = refusedSelectorRead(begin, end, max);
        if (refused != null) {
          return fail(refused);
        }
        if (emptyOnItsFace(begin, end)) {
          MergedView.Bounds b = new MergedView.Bounds();
          b.empty = true;
          return CompletableFuture.completedFuture(b);
        }
        boolean tookReadVersion = !tx.hasReadVersion();
        long rv = tx.readVersion();
        checkReadVersion(rv);
        MergedView.Bounds b = new MergedView.Bounds();
        b.begin = resolveSelector(begin, rv, max, snapshot);
        b.end = resolveSelector(end, rv, max, snapshot);
        b.conflictBegin = Bytes.min(begin.getKey(), b.begin);
        b.conflictEnd = MergedView.isFirstGreaterOrEqual(end) ? end.getKey() : Bytes.max(end.getKey(), b.end);
        boolean plain = MergedView.isFirstGreaterOrEqual(begin) && MergedView.isFirstGreaterOrEqual(end);
        return deliver(b, !plain, tookReadVersion);
      }
    } catch (RuntimeException e) {
      return fail(e);
    }
  }

  /**
   * Whether a range's selectors are inverted or equal before they are resolved: FoundationDB's
   * getRange answers such a read empty at once, without a read version or a conflict range
   * (ReadYourWritesTransaction::getRange, after removeOrEqual).
   */
  private static boolean emptyOnItsFace(KeySelector begin, KeySelector end) {
    byte[] b = begin.orEqual() ? Bytes.keyAfter(begin.getKey()) : begin.getKey();
    byte[] e = end.orEqual() ? Bytes.keyAfter(end.getKey()) : end.getKey();
    return begin.getOffset() >= end.getOffset() && Bytes.compare(b, e) >= 0;
  }

  /**
   * Why a read resolving {@code first} and {@code last} cannot run now: the transaction cannot read
   * (cancelled, in its commit, an error deferred by a write), or a selector's key lies past {@code max},
   * the end of the keys it may read (2004); null when it may. Caller holds the monitor.
   */
  private FDBException refusedSelectorRead(KeySelector first, KeySelector last, byte[] max) {
    FDBException err = tx.openForRead();
    if (err != null) {
      return err;
    }
    if (Bytes.compare(first.getKey(), max) > 0 || Bytes.compare(last.getKey(), max) > 0) {
      return FdbErrors.error(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE);
    }
    return null;
  }

  private byte[] resolveSelector(KeySelector sel, long rv, byte[] max, boolean snapshot) {
    return view.resolveSelector(sel, rv, max, settings.seesOwnWrites(snapshot), !settings.rywDisabled);
  }

  private MergedView.Batch scan(byte[] begin, byte[] end, int limit, boolean reverse, long rv, boolean snapshot) {
    return view.scan(begin, end, limit, reverse, rv, settings.seesOwnWrites(snapshot), !settings.rywDisabled);
  }

  /** Reads up to {@code limit} rows (0: all) of [begin, end) at the read version, own writes merged in. */
  CompletableFuture<MergedView.Batch> readBatch(MergedView.Bounds bounds, byte[] begin, byte[] end, int limit,
      boolean reverse, boolean snapshot) {
    try {
      synchronized (tx) {
        FDBException err = tx.openForRead();
        if (err != null) {
          return fail(err);
        }
        long rv = tx.readVersion();
        checkReadVersion(rv);
        MergedView.Batch batch = scan(begin, end, limit, reverse, rv, snapshot);
        if (!snapshot) {
          byte[] cb = begin;
          byte[] ce = end;
          if (batch.limited) {
            KeyValue last = batch.rows.get(batch.rows.size() - 1);
            if (reverse) {
              cb = last.getKey();
            } else {
              ce = Bytes.keyAfter(last.getKey());
            }
          }
          // The first and last batches also cover what the selectors needed to resolve.
          if (Arrays.equals(begin, bounds.begin) && Bytes.compare(bounds.conflictBegin, cb) < 0
              && !(reverse && batch.limited)) {
            cb = bounds.conflictBegin;
          }
          if (Arrays.equals(end, bounds.end) && Bytes.compare(bounds.conflictEnd, ce) > 0
              && !(!reverse && batch.limited)) {
            ce = bounds.conflictEnd;
          }
          conflicts.addRangeRead(cb, ce, writes, settings.rywDisabled);
        }
        return deliver(batch, true, false);
      }
    } catch (RuntimeException e) {
      return fail(e);
    }
  }

  CompletableFuture<byte[]> getKey(KeySelector sel, boolean snapshot) {
    try {
      synchronized (tx) {
        byte[] max = settings.maxReadKey();
        FDBException refused = refusedSelectorRead(sel, sel, max);
        if (refused != null) {
          return fail(refused);
        }
        byte[] result = ownPresentKey(sel, snapshot);
        boolean fromStorage = result == null;
        boolean tookReadVersion = false;
        if (fromStorage) {
          tookReadVersion = !tx.hasReadVersion();
          long rv = tx.readVersion();
          checkReadVersion(rv);
          if (MergedView.isFirstGreaterOrEqual(sel)) {
            MergedView.Batch b = scan(Bytes.min(sel.getKey(), max), max, 1, false, rv, snapshot);
            result = b.rows.isEmpty() ? max : b.rows.get(0).getKey();
          } else {
            result = resolveSelector(sel, rv, max, snapshot);
          }
        }
        if (!snapshot) {
          // FoundationDB's range for a resolved selector: from the selector's base to the result.
          byte[] base = sel.orEqual() ? Bytes.keyAfter(sel.getKey()) : sel.getKey();
          if (sel.getOffset() <= 0) {
            conflicts.addRangeRead(result, base, writes, settings.rywDisabled);
          } else {
            conflicts.addRangeRead(base, Bytes.keyAfter(result), writes, settings.rywDisabled);
          }
        }
        return deliver(result.clone(), fromStorage, tookReadVersion);
      }
    } catch (RuntimeException e) {
      return fail(e);
    }
  }

  /**
   * The selector's own key when the transaction's writes alone resolve the selector to it: it selects
   * its key itself ({@code firstGreaterOrEqual}, {@code lastLessOrEqual}) and the transaction set that
   * key to a known value. FoundationDB's read-your-writes client then answers without storage, so
   * without taking a read version. Null otherwise. Caller holds the monitor.
   */
  private byte[] ownPresentKey(KeySelector sel, boolean snapshot) {
    boolean selectsItsKey = (sel.getOffset() == 1 && !sel.orEqual()) || (sel.getOffset() == 0 && sel.orEqual());
    if (!selectsItsKey || !settings.seesOwnWrites(snapshot)) {
      return null;
    }
    PendingWrite w = writes.get(sel.getKey());
    return w != null && w.kind == PendingWrite.Kind.KNOWN && w.value != null ? sel.getKey() : null;
  }

  /** Stored arrays are shared and never modified: callers get their own copies. */
  private static byte[] copy(byte[] b) {
    return b == null ? null : b.clone();
  }

  CompletableFuture<Long> readVersionFuture() {
    try {
      synchronized (tx) {
        tx.ensureOpen();
        // A deferred error, then the reset promise; no used-during-commit check (RYW getReadVersion).
        FDBException deferred = tx.deferredError();
        if (deferred != null) {
          return fail(deferred);
        }
        if (tx.state == EmbeddedTransaction.State.CANCELLED) {
          return fail(tx.cancelError);
        }
        boolean took = !tx.hasReadVersion();
        long rv = tx.readVersion();
        return took && engine.readLatencyNanos() > 0 ? deliver(rv, true, false) : CompletableFuture.completedFuture(rv);
      }
    } catch (RuntimeException e) {
      return fail(e);
    }
  }

  /**
   * The key's value as this transaction sees it, without adding a read conflict. What its writes
   * answer needs no read version (a watch of a key it set or cleared takes none, as in FoundationDB).
   */
  byte[] ownView(byte[] key) {
    PendingWrite w = writes.get(key);
    if (w != null && w.kind == PendingWrite.Kind.KNOWN) {
      return w.value;
    }
    if (w != null && w.kind == PendingWrite.Kind.STAMPED) {
      throw FdbErrors.error(FdbErrors.ACCESSED_UNREADABLE);
    }
    if (w == null && writes.isCleared(key)) {
      return null;
    }
    long rv = tx.readVersion();
    checkReadVersion(rv);
    if (engine.tooOld(rv)) {
      throw FdbErrors.error(FdbErrors.TRANSACTION_TOO_OLD);
    }
    return w != null ? w.applyOps(engine.get(key, rv)) : engine.get(key, rv);
  }
}
