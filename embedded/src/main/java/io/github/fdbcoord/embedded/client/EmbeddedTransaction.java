package io.github.fdbcoord.embedded.client;

import io.github.fdbcoord.embedded.engine.Limits;
import io.github.fdbcoord.embedded.engine.PendingWrite;
import io.github.fdbcoord.embedded.engine.TransactionEngine;
import io.github.fdbcoord.embedded.engine.Versionstamps;
import io.github.fdbcoord.embedded.engine.Watches;
import io.github.fdbcoord.embedded.storage.Bytes;
import io.github.fdbcoord.embedded.storage.VersionedStore;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.FDBException;
import com.apple.foundationdb.KeyArrayResult;
import com.apple.foundationdb.KeySelector;
import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.MutationType;
import com.apple.foundationdb.Range;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.TransactionOptions;
import io.github.fdbcoord.fdb.FdbErrors;

import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * A transaction of the embedded engine: reads at one read version, a local write map layered over them
 * (read-your-writes: {@link WriteMap}, {@link MergedView}), read- and write-conflict ranges collected as
 * FoundationDB's client computes them ({@link ConflictRanges}), and errors surfacing where FoundationDB
 * surfaces them (set, clear and mutate never throw: their errors fail the next read or the commit). This
 * class is the state machine (active, committing, committed, cancelled) and each operation's checks;
 * {@link CommitAttempt} carries a commit through the engine. Its monitor guards all of its parts.
 */
public final class EmbeddedTransaction extends ReadView implements Transaction {
  enum State { ACTIVE, COMMITTING, COMMITTED, CANCELLED }

  private static final int DROP = -1;
  private static final int WITH_CONFLICT = 1;

  final TransactionEngine engine;
  final Executor executor;
  private final DatabaseContext context;
  private final ReadView.Snapshot snapshotView = new ReadView.Snapshot(this);
  private final TransactionOptions options = new TransactionOptions(this::setOption);
  private final long creationNanos = System.nanoTime();
  final TransactionSettings settings;
  final WriteMap writes = new WriteMap();
  private final MergedView view;
  final ConflictRanges conflicts = new ConflictRanges();
  final OwnWatches watches;
  private final CommitAttempt commit;

  State state = State.ACTIVE;
  FDBException cancelError;
  private boolean closed;
  private long readVersion = -1;
  private FDBException deferred;
  /** Bytes of the writes: with the conflict ranges' bytes, the transaction's approximate size. */
  private long writeBytes;
  private ScheduledFuture<?> timeoutTask;

  /** A new transaction of the database {@code context} describes; {@code executor} completes its futures. */
  public EmbeddedTransaction(DatabaseContext context, Executor executor) {
    this.context = context;
    this.engine = context.engine;
    this.executor = executor;
    this.settings = new TransactionSettings(context.defaults);
    this.view = new MergedView(engine, writes);
    this.watches = new OwnWatches(engine, executor);
    this.commit = new CommitAttempt(this);
    if (settings.timeoutMillis > 0) {
      scheduleTimeout();
    }
  }

  @Override
  EmbeddedTransaction tx() {
    return this;
  }

  @Override
  public boolean isSnapshot() {
    return false;
  }

  @Override
  public ReadTransaction snapshot() {
    return snapshotView;
  }

  @Override
  public Executor getExecutor() {
    return executor;
  }

  @Override
  public Database getDatabase() {
    return context.database;
  }

  @Override
  public TransactionOptions options() {
    return options;
  }

  // ---------------------------------------------------------------- state and errors

  void ensureOpen() {
    if (closed) {
      throw new IllegalStateException("Cannot access closed object");
    }
  }

  /** The error a read or commit must fail with now, or null. Caller holds the monitor. */
  FDBException readError() {
    if (state == State.CANCELLED) {
      return cancelError;
    }
    if (state != State.ACTIVE) {
      return FdbErrors.error(FdbErrors.USED_DURING_COMMIT);
    }
    return deferred;
  }

  /** The checks before any read: throws once closed; otherwise the error it must fail with, or null. */
  private FDBException openForRead() {
    ensureOpen();
    return readError();
  }

  /** Records an error of set/clear/mutate, to fail the next read or the commit. Caller holds the monitor. */
  private void defer(int code) {
    if (deferred == null) {
      deferred = FdbErrors.error(code);
    }
  }

  /** Whether a write may proceed; otherwise its error is deferred. Caller holds the monitor. */
  private boolean writable() {
    if (state == State.CANCELLED) {
      if (deferred == null) {
        deferred = cancelError;
      }
      return false;
    }
    if (state != State.ACTIVE) {
      defer(FdbErrors.USED_DURING_COMMIT);
      return false;
    }
    return true;
  }

  long approximateSize() {
    return writeBytes + conflicts.bytes();
  }

  boolean hasReadVersion() {
    return readVersion >= 0;
  }

  /** The read version, taken from the engine at the first read. Caller holds the monitor. */
  long readVersion() {
    if (readVersion < 0) {
      readVersion = engine.grantReadVersion();
    }
    return readVersion;
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
      synchronized (this) {
        FDBException err = openForRead();
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
        boolean tookReadVersion = readVersion < 0;
        long rv = readVersion();
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
      synchronized (this) {
        FDBException err = openForRead();
        if (err != null) {
          return fail(err);
        }
        byte[] max = settings.maxReadKey();
        if (Bytes.compare(begin.getKey(), max) > 0 || Bytes.compare(end.getKey(), max) > 0) {
          return fail(FdbErrors.error(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE));
        }
        boolean tookReadVersion = readVersion < 0;
        long rv = readVersion();
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
      synchronized (this) {
        FDBException err = openForRead();
        if (err != null) {
          return fail(err);
        }
        long rv = readVersion();
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
      synchronized (this) {
        FDBException err = openForRead();
        if (err != null) {
          return fail(err);
        }
        byte[] max = settings.maxReadKey();
        if (Bytes.compare(sel.getKey(), max) > 0) {
          return fail(FdbErrors.error(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE));
        }
        boolean tookReadVersion = readVersion < 0;
        long rv = readVersion();
        checkReadVersion(rv);
        byte[] result;
        if (MergedView.isFirstGreaterOrEqual(sel)) {
          MergedView.Batch b = scan(Bytes.min(sel.getKey(), max), max, 1, false, rv, snapshot);
          result = b.rows.isEmpty() ? max : b.rows.get(0).getKey();
        } else {
          result = resolveSelector(sel, rv, max, snapshot);
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
        return deliver(result.clone(), true, tookReadVersion);
      }
    } catch (RuntimeException e) {
      return fail(e);
    }
  }

  /** Stored arrays are shared and never modified: callers get their own copies. */
  private static byte[] copy(byte[] b) {
    return b == null ? null : b.clone();
  }

  CompletableFuture<Long> readVersionFuture() {
    try {
      synchronized (this) {
        ensureOpen();
        if (state == State.CANCELLED) {
          return fail(cancelError);
        }
        boolean took = readVersion < 0;
        long rv = readVersion();
        return took && engine.readLatencyNanos() > 0 ? deliver(rv, true, false) : CompletableFuture.completedFuture(rv);
      }
    } catch (RuntimeException e) {
      return fail(e);
    }
  }

  synchronized void assignReadVersion(long version) {
    ensureOpen();
    // Errors of setReadVersion surface at the next operation, as through the C client.
    if (version <= 0) {
      defer(FdbErrors.VERSION_INVALID);
    } else if (readVersion >= 0) {
      defer(FdbErrors.READ_VERSION_ALREADY_SET);
    } else {
      readVersion = version;
    }
  }

  CompletableFuture<Long> estimatedRangeSize(byte[] begin, byte[] end) {
    return RangeEstimates.size(engine, begin, end);
  }

  CompletableFuture<KeyArrayResult> rangeSplitPoints(byte[] begin, byte[] end, long chunkSize) {
    return RangeEstimates.splitPoints(engine, begin, end, chunkSize);
  }

  // ---------------------------------------------------------------- conflict ranges

  @Override
  public boolean addReadConflictRangeIfNotSnapshot(byte[] begin, byte[] end) {
    addReadConflictRange(begin, end);
    return true;
  }

  @Override
  public boolean addReadConflictKeyIfNotSnapshot(byte[] key) {
    addReadConflictKey(key);
    return true;
  }

  @Override
  public void addReadConflictRange(byte[] begin, byte[] end) {
    addManualConflictRange(begin, end, true);
  }

  @Override
  public void addReadConflictKey(byte[] key) {
    addReadConflictRange(key, Bytes.keyAfter(key));
  }

  @Override
  public void addWriteConflictRange(byte[] begin, byte[] end) {
    addManualConflictRange(begin, end, false);
  }

  @Override
  public void addWriteConflictKey(byte[] key) {
    addWriteConflictRange(key, Bytes.keyAfter(key));
  }

  /** Conflict ranges added by hand: errors are thrown at the call, as the C client returns them. */
  private synchronized void addManualConflictRange(byte[] begin, byte[] end, boolean read) {
    ensureOpen();
    if (state == State.COMMITTING || state == State.COMMITTED) {
      throw FdbErrors.error(FdbErrors.USED_DURING_COMMIT);
    }
    if (Bytes.compare(begin, end) > 0) {
      throw FdbErrors.error(FdbErrors.INVERTED_RANGE);
    }
    if (Bytes.compare(begin, end) < 0) {
      if (read) {
        conflicts.addRead(begin.clone(), end.clone());
      } else {
        conflicts.addWrite(begin.clone(), end.clone());
      }
    }
  }

  // ---------------------------------------------------------------- writes

  /**
   * FoundationDB's checks before a point write, errors deferred: DROP when the write must not
   * happen, otherwise whether it adds a write-conflict range (the one-shot
   * NEXT_WRITE_NO_WRITE_CONFLICT_RANGE is consumed either way). Caller holds the monitor.
   */
  private int admitPointWrite(byte[] key, byte[] operand, boolean longKeyIsError) {
    ensureOpen();
    if (!writable()) {
      return DROP;
    }
    boolean conflict = settings.consumeWriteConflict();
    if (Bytes.compare(key, settings.maxWriteKey()) >= 0) {
      defer(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE);
      return DROP;
    }
    if (key.length > Limits.maxKeySize(key)) {
      if (longKeyIsError) {
        defer(FdbErrors.KEY_TOO_LARGE);
      }
      return DROP;
    }
    if (operand != null && operand.length > Limits.VALUE_SIZE_LIMIT) {
      defer(FdbErrors.VALUE_TOO_LARGE);
      return DROP;
    }
    return conflict ? WITH_CONFLICT : 0;
  }

  @Override
  public synchronized void set(byte[] key, byte[] value) {
    if (key == null || value == null) {
      throw new IllegalArgumentException("Keys/Values must be non-null");
    }
    int admitted = admitPointWrite(key, value, true);
    if (admitted == DROP) {
      return;
    }
    writeBytes += key.length + value.length;
    // The caller keeps its arrays: the transaction holds copies, as the native client does.
    putKnown(key.clone(), value.clone(), admitted == WITH_CONFLICT);
  }

  /** Records a set (or, with a null value, a clear) of one key whose value is known now. */
  private void putKnown(byte[] key, byte[] value, boolean conflict) {
    writes.putKnown(key, value);
    if (conflict) {
      conflicts.addWrite(key, Bytes.keyAfter(key));
    }
    watches.written(key, null, value, true);
  }

  @Override
  public synchronized void clear(byte[] key) {
    if (key == null) {
      throw new IllegalArgumentException("Key cannot be null");
    }
    // No stored key is longer than the limit, so clearing one is a no-op rather than an error.
    int admitted = admitPointWrite(key, null, false);
    if (admitted == DROP) {
      return;
    }
    writeBytes += key.length;
    putKnown(key.clone(), null, admitted == WITH_CONFLICT);
  }

  @Override
  public synchronized void clear(byte[] begin, byte[] end) {
    if (begin == null || end == null) {
      throw new IllegalArgumentException("Keys cannot be null");
    }
    ensureOpen();
    if (!writable()) {
      return;
    }
    boolean conflict = settings.consumeWriteConflict();
    byte[] max = settings.maxWriteKey();
    if (Bytes.compare(begin, max) > 0 || Bytes.compare(end, max) > 0) {
      defer(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE);
      return;
    }
    if (Bytes.compare(begin, end) > 0) {
      defer(FdbErrors.INVERTED_RANGE);
      return;
    }
    // No stored key is longer than the key limit, so longer bounds can be shortened.
    begin = begin.length > Limits.maxKeySize(begin) ? Arrays.copyOf(begin, Limits.maxKeySize(begin) + 1) : begin;
    end = end.length > Limits.maxKeySize(end) ? Arrays.copyOf(end, Limits.maxKeySize(end) + 1) : end;
    if (Bytes.compare(begin, end) >= 0) {
      return;
    }
    writeBytes += begin.length + end.length;
    begin = begin.clone();
    end = end.clone();
    writes.clearRange(begin, end);
    if (conflict) {
      conflicts.addWrite(begin, end);
    }
    watches.written(begin, end, null, true);
  }

  @Override
  public void clear(Range range) {
    clear(range.begin, range.end);
  }

  @Override
  public void clearRangeStartsWith(byte[] prefix) {
    clear(Range.startsWith(prefix));
  }

  @Override
  public synchronized void mutate(MutationType type, byte[] key, byte[] param) {
    if (type == null || key == null || param == null) {
      throw new IllegalArgumentException("Mutation type, key and parameter must be non-null");
    }
    if (type == MutationType.SET_VERSIONSTAMPED_KEY) {
      // Its key exists only at commit: the checks apply to the key with the stamp filled in.
      ensureOpen();
      if (writable()) {
        mutateStampedKey(key, param, settings.consumeWriteConflict());
      }
      return;
    }
    int admitted = admitPointWrite(key, param, true);
    if (admitted == DROP) {
      return;
    }
    key = key.clone();
    param = param.clone();
    PendingWrite next = writes.mutate(key, type, param);
    if (next == null) {
      defer(FdbErrors.CLIENT_INVALID_OPERATION);
      return;
    }
    writeBytes += key.length + param.length;
    if (admitted == WITH_CONFLICT) {
      conflicts.addWrite(key, Bytes.keyAfter(key));
    }
    watches.written(key, null, next.value, next.kind == PendingWrite.Kind.KNOWN);
  }

  private void mutateStampedKey(byte[] key, byte[] value, boolean conflict) {
    if (Versionstamps.stampOffset(key) < 0) {
      defer(FdbErrors.CLIENT_INVALID_OPERATION);
      return;
    }
    // FoundationDB's range for the key to be: the stamp from just past the read version (when one
    // is known) to all 0xff, and the key after that.
    byte[] maxWrite = settings.maxWriteKey();
    byte[] low = Versionstamps.fillStamp(key, Versionstamps.versionstamp(readVersion >= 0 ? readVersion + 1 : 0));
    byte[] highStamp = new byte[10];
    Arrays.fill(highStamp, (byte) 0xff);
    byte[] high = Bytes.min(Bytes.keyAfter(Versionstamps.fillStamp(key, highStamp)), maxWrite);
    if (Bytes.compare(low, maxWrite) >= 0) {
      defer(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE);
      return;
    }
    if (low.length > Limits.maxKeySize(low)) {
      defer(FdbErrors.KEY_TOO_LARGE);
      return;
    }
    if (value.length > Limits.VALUE_SIZE_LIMIT) {
      defer(FdbErrors.VALUE_TOO_LARGE);
      return;
    }
    writes.addStampedKey(key.clone(), value.clone(), low, high);
    writeBytes += key.length + value.length;
    if (conflict) {
      conflicts.addWrite(low, high);
    }
  }

  // ---------------------------------------------------------------- watches

  @Override
  public CompletableFuture<Void> watch(byte[] key) {
    if (key == null) {
      throw new IllegalArgumentException("Key cannot be null");
    }
    synchronized (this) {
      ensureOpen();
      if (state == State.CANCELLED) {
        return CompletableFuture.failedFuture(cancelError);
      }
      if (state != State.ACTIVE) {
        return CompletableFuture.failedFuture(FdbErrors.error(FdbErrors.USED_DURING_COMMIT));
      }
      if (settings.rywDisabled) {
        return CompletableFuture.failedFuture(FdbErrors.error(FdbErrors.WATCHES_DISABLED));
      }
      if (Bytes.compare(key, settings.maxReadKey()) >= 0) {
        return CompletableFuture.failedFuture(FdbErrors.error(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE));
      }
      if (key.length > Limits.maxKeySize(key)) {
        return CompletableFuture.failedFuture(FdbErrors.error(FdbErrors.KEY_TOO_LARGE));
      }
      byte[] seen;
      try {
        seen = ownView(key);
      } catch (RuntimeException e) {
        return fail(e);
      }
      // FoundationDB reads the watched key as a serializable read, with its read conflict.
      PendingWrite own = writes.get(key);
      if ((own == null || own.kind != PendingWrite.Kind.KNOWN) && !writes.isCleared(key)) {
        conflicts.addRead(key, Bytes.keyAfter(key));
      }
      if (!engine.reserveWatch()) {
        return CompletableFuture.failedFuture(FdbErrors.error(FdbErrors.TOO_MANY_WATCHES));
      }
      CompletableFuture<Void> future = new CompletableFuture<>();
      Watches.Watch w = new Watches.Watch(key.clone(), seen, future, executor);
      watches.add(w);
      // FoundationDB counts a watch against the limit only while its future is live: one cancelled
      // before the commit gives its slot back at once (after the commit, Watches does the same).
      future.whenComplete((v, t) -> {
        if (future.isCancelled()) {
          synchronized (this) {
            watches.cancelled(w);
          }
        }
      });
      return future;
    }
  }

  /** The key's value as this transaction sees it, without adding a read conflict. */
  private byte[] ownView(byte[] key) {
    long rv = readVersion();
    checkReadVersion(rv);
    if (engine.tooOld(rv)) {
      throw FdbErrors.error(FdbErrors.TRANSACTION_TOO_OLD);
    }
    PendingWrite w = writes.get(key);
    if (w != null) {
      if (w.kind == PendingWrite.Kind.KNOWN) {
        return w.value;
      }
      if (w.kind == PendingWrite.Kind.STAMPED) {
        throw FdbErrors.error(FdbErrors.ACCESSED_UNREADABLE);
      }
      return w.applyOps(engine.get(key, rv));
    }
    if (writes.isCleared(key)) {
      return null;
    }
    return engine.get(key, rv);
  }

  // ---------------------------------------------------------------- commit

  @Override
  public CompletableFuture<Void> commit() {
    return commit.start();
  }

  @Override
  public Long getCommittedVersion() {
    return commit.committedVersion();
  }

  @Override
  public synchronized CompletableFuture<byte[]> getVersionstamp() {
    if (state == State.COMMITTING || state == State.COMMITTED) {
      return CompletableFuture.failedFuture(FdbErrors.error(FdbErrors.USED_DURING_COMMIT));
    }
    return commit.versionstamp();
  }

  @Override
  public synchronized CompletableFuture<Long> getApproximateSize() {
    return CompletableFuture.completedFuture(approximateSize());
  }

  // ---------------------------------------------------------------- retry, cancel, options

  @Override
  public CompletableFuture<Transaction> onError(Throwable e) {
    if ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
      e = e.getCause();
    }
    if (!(e instanceof FDBException)) {
      return CompletableFuture.failedFuture(e);
    }
    int code = ((FDBException) e).getCode();
    double delaySeconds;
    synchronized (this) {
      ensureOpen();
      if (state == State.CANCELLED && cancelError.getCode() == FdbErrors.TRANSACTION_TIMED_OUT) {
        return CompletableFuture.failedFuture(cancelError);
      }
      if (!FdbErrors.isRetryable(code)) {
        return CompletableFuture.failedFuture(e);
      }
      FDBException stopped = engine.failure();
      if (stopped != null) {
        // A retry cannot succeed on a stopped engine; its error would hide that this commit's
        // outcome is unknown, which is what the caller must act on.
        return CompletableFuture.failedFuture(code == FdbErrors.COMMIT_UNKNOWN_RESULT
            ? new FDBException("Transaction may or may not have committed: " + stopped.getMessage()
                + " (a commit that was being written may be on disk; it will be there when the data directory is reopened)",
                FdbErrors.COMMIT_UNKNOWN_RESULT)
            : stopped);
      }
      if (!settings.mayRetry()) {
        return CompletableFuture.failedFuture(e);
      }
      delaySeconds = settings.retryDelaySeconds(code);
      reset();
    }
    CompletableFuture<Transaction> next = new CompletableFuture<>();
    engine.schedule((long) (delaySeconds * 1e9), executor, () -> next.complete(this));
    return next;
  }

  /** Back to a fresh transaction, keeping the persistent options, retry count and back-off. */
  private void reset() {
    watches.failAll(FdbErrors.error(FdbErrors.TRANSACTION_CANCELLED));
    state = State.ACTIVE;
    cancelError = null;
    readVersion = -1;
    writes.reset();
    view.reset();
    conflicts.reset();
    deferred = null;
    writeBytes = 0;
    commit.reset();
    settings.resetForRetry();
    if (settings.timeoutMillis > 0 && timeoutTask == null) {
      scheduleTimeout();
    }
  }

  @Override
  public void cancel() {
    cancelWith(FdbErrors.error(FdbErrors.TRANSACTION_CANCELLED));
  }

  private void cancelWith(FDBException error) {
    CompletableFuture<Void> commitInFlight;
    synchronized (this) {
      if (closed || state == State.COMMITTED || state == State.CANCELLED) {
        return;
      }
      state = State.CANCELLED;
      cancelError = error;
      commitInFlight = commit.cancel(error);
      error = cancelError;
      watches.failAll(error);
      commit.versionstamp().completeExceptionally(error);
    }
    if (commitInFlight != null) {
      commitInFlight.completeExceptionally(error);
    }
  }

  /** The error a commit withdrawn while held for lack of disk space fails with. */
  FDBException heldError(FDBException error, String lowOnSpace) {
    return context.heldError.apply(error, lowOnSpace);
  }

  private void scheduleTimeout() {
    long elapsedMillis = (System.nanoTime() - creationNanos) / 1_000_000L;
    long remaining = Math.max(0, settings.timeoutMillis - elapsedMillis);
    timeoutTask = engine.scheduleOnTimer(TimeUnit.MILLISECONDS.toNanos(remaining),
        () -> cancelWith(FdbErrors.error(FdbErrors.TRANSACTION_TIMED_OUT)));
  }

  private synchronized void setOption(int code, byte[] param) {
    ensureOpen();
    switch (code) {
      case 51:
        if (readVersion >= 0 || !writes.isEmpty() || !watches.isEmpty()) {
          throw FdbErrors.error(FdbErrors.CLIENT_INVALID_OPERATION);
        }
        settings.rywDisabled = true;
        break;
      case 500:
        settings.timeoutMillis = OptionParams.intParam(param, 0, Integer.MAX_VALUE);
        if (timeoutTask != null) {
          timeoutTask.cancel(false);
          timeoutTask = null;
        }
        if (settings.timeoutMillis > 0) {
          scheduleTimeout();
        }
        break;
      default:
        settings.set(code, param);
        break;
    }
  }

  // ---------------------------------------------------------------- contexts and lifecycle

  @Override
  public <T> T run(Function<? super Transaction, T> retryable) {
    return retryable.apply(this);
  }

  @Override
  public <T> CompletableFuture<T> runAsync(Function<? super Transaction, ? extends CompletableFuture<T>> retryable) {
    try {
      return retryable.apply(this).thenApply(Function.identity());
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  @Override
  public void close() {
    boolean commitHeld;
    synchronized (this) {
      commitHeld = !closed && commit.isHeld();
    }
    if (commitHeld) {
      // Destroying a transaction cancels its outstanding commit (FoundationDB); one still held back
      // is withdrawn and never happens, rather than committing once the engine lets it through.
      cancelWith(FdbErrors.error(FdbErrors.TRANSACTION_CANCELLED));
    }
    synchronized (this) {
      if (closed) {
        return;
      }
      if (state == State.ACTIVE) {
        watches.failAll(FdbErrors.error(FdbErrors.TRANSACTION_CANCELLED));
      }
      closed = true;
      if (timeoutTask != null) {
        timeoutTask.cancel(false);
      }
    }
  }
}
