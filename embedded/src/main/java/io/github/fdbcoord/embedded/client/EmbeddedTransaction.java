package io.github.fdbcoord.embedded.client;

import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.embedded.CommitsHeldException;
import io.github.fdbcoord.embedded.engine.Engine;
import io.github.fdbcoord.embedded.engine.Watches;
import io.github.fdbcoord.embedded.bytes.Bytes;
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

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * A transaction of the embedded engine: reads at one read version, a local write map layered
 * over them (read-your-writes), read- and write-conflict ranges collected as FoundationDB's
 * client computes them, and errors surfacing where FoundationDB surfaces them (set, clear and
 * mutate never throw: their errors fail the next read or the commit).
 */
public final class EmbeddedTransaction extends ReadView implements Transaction {
  private enum State { ACTIVE, COMMITTING, COMMITTED, CANCELLED }

  private static final double DEFAULT_BACKOFF = 0.01;
  private static final double FUTURE_VERSION_RETRY_DELAY = 0.01;

  private final EmbeddedDatabase database;
  private final Engine engine;
  private final Executor executor;
  private final ReadView.Snapshot snapshotView = new ReadView.Snapshot(this);
  private final TransactionOptions options = new TransactionOptions(this::setOption);
  private final long creationNanos = System.nanoTime();

  // Options that survive onError (API 610 and later), seeded from the database's defaults.
  private long timeoutMillis;
  private long retryLimit;
  private long maxRetryDelayMillis;
  private long sizeLimit;
  // Options that onError resets.
  private boolean rywDisabled;
  private int snapshotRyw;
  private boolean nextWriteNoConflict;
  private boolean readSystemKeys;
  private boolean accessSystemKeys;

  private State state = State.ACTIVE;
  private FDBException cancelError;
  private boolean closed;
  private long readVersion = -1;
  private TreeMap<byte[], PendingWrite> writes;
  private TreeMap<byte[], byte[]> cleared;
  private TreeMap<byte[], byte[]> unreadable;
  private List<byte[][]> stampedKeys;
  /** What storage answered (FoundationDB's snapshot cache); null until the first read, and with RYW disabled. */
  private ReadCache cache;
  private ArrayList<byte[]> readConflicts = new ArrayList<>();
  private ArrayList<byte[]> writeConflicts = new ArrayList<>();
  private List<Watches.Watch> watches;
  private FDBException deferred;
  private long approximateSize;
  private long retries;
  private double backoff = DEFAULT_BACKOFF;
  private long committedVersion = -1;
  private CompletableFuture<byte[]> versionstamp = new CompletableFuture<>();
  private CompletableFuture<Void> pendingCommit;
  /** The engine's future of {@link #pendingCommit} while the engine holds it back, else null. */
  private CompletableFuture<Engine.CommitResult> heldCommit;
  private ScheduledFuture<?> timeoutTask;
  private final TransactionDefaults defaults;

  public EmbeddedTransaction(EmbeddedDatabase database, Engine engine, Executor executor, TransactionDefaults defaults) {
    this.defaults = defaults;
    this.database = database;
    this.engine = engine;
    this.executor = executor;
    this.timeoutMillis = defaults.timeoutMillis;
    this.retryLimit = defaults.retryLimit;
    this.maxRetryDelayMillis = defaults.maxRetryDelayMillis;
    this.sizeLimit = defaults.sizeLimit;
    this.snapshotRyw = defaults.snapshotRyw;
    if (timeoutMillis > 0) {
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
    return database;
  }

  @Override
  public TransactionOptions options() {
    return options;
  }

  // ---------------------------------------------------------------- state and errors

  private void ensureOpen() {
    if (closed) {
      throw new IllegalStateException("Cannot access closed object");
    }
  }

  /** The error a read or commit must fail with now, or null. Caller holds the monitor. */
  private FDBException readError() {
    if (state == State.CANCELLED) {
      return cancelError;
    }
    if (state != State.ACTIVE) {
      return FdbErrors.error(FdbErrors.USED_DURING_COMMIT);
    }
    if (deferred != null) {
      return deferred;
    }
    return null;
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

  private byte[] maxReadKey() {
    return readSystemKeys || accessSystemKeys ? Bytes.ALL_END : Bytes.SYSTEM_BEGIN;
  }

  private byte[] maxWriteKey() {
    return accessSystemKeys ? Bytes.ALL_END : Bytes.SYSTEM_BEGIN;
  }

  private static int maxKeySize(byte[] key) {
    return key.length > 0 && key[0] == (byte) 0xff ? Engine.SYSTEM_KEY_SIZE_LIMIT : Engine.KEY_SIZE_LIMIT;
  }

  private boolean consumeWriteConflict() {
    boolean add = !nextWriteNoConflict;
    nextWriteNoConflict = false;
    return add;
  }

  /** The read version, taken from the engine at the first read. Caller holds the monitor. */
  private long readVersion() {
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
    long delay = fromStorage ? engine.readLatencyNanos * (tookReadVersion ? 2 : 1) : 0;
    if (delay == 0) {
      return CompletableFuture.completedFuture(value);
    }
    CompletableFuture<T> f = new CompletableFuture<>();
    engine.schedule(delay, executor, () -> f.complete(value));
    return f;
  }

  private <T> CompletableFuture<T> fail(Throwable t) {
    if (t instanceof VersionedStore.TooOld) {
      t = FdbErrors.error(FdbErrors.TRANSACTION_TOO_OLD);
    }
    if (engine.readLatencyNanos == 0) {
      return CompletableFuture.failedFuture(t);
    }
    CompletableFuture<T> f = new CompletableFuture<>();
    Throwable error = t;
    engine.schedule(engine.readLatencyNanos, executor, () -> f.completeExceptionally(error));
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
        if (Bytes.compare(key, maxReadKey()) >= 0) {
          return fail(FdbErrors.error(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE));
        }
        if (key.length > maxKeySize(key)) {
          return CompletableFuture.completedFuture(null);
        }
        // What the write map answers needs no read version (FoundationDB takes one at the first
        // read that reaches storage).
        PendingWrite w = null;
        if (seesOwnWrites(snapshot)) {
          w = writes == null ? null : writes.get(key);
          if (w != null) {
            if (w.kind == PendingWrite.Kind.KNOWN) {
              return CompletableFuture.completedFuture(copy(w.value));
            }
            if (w.kind == PendingWrite.Kind.STAMPED) {
              return fail(FdbErrors.error(FdbErrors.ACCESSED_UNREADABLE));
            }
          } else {
            if (inRanges(cleared, key)) {
              return CompletableFuture.completedFuture(null);
            }
            if (inRanges(unreadable, key)) {
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
            value = engine.store.get(key, rv);
          } catch (VersionedStore.TooOld e) {
            value = cachedValue(key);
            fromStorage = false;
          }
        } else {
          value = cachedValue(key);
        }
        byte[] after = null;
        if (!snapshot) {
          after = Bytes.keyAfter(key);
          addReadConflict(key, after);
        }
        if (fromStorage && !rywDisabled) {
          // keyAfter(key) is the cache's own copy of the key (shared with the conflict range).
          cache().recordPoint(after != null ? after : Bytes.keyAfter(key), value);
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

  /**
   * A key's stored value from what this transaction read earlier, once storage can no longer answer
   * at its read version: 1007 when it never learnt it (always, with RYW disabled: no cache).
   */
  private byte[] cachedValue(byte[] key) {
    if (cache == null || !cache.isKnown(key)) {
      throw FdbErrors.error(FdbErrors.TRANSACTION_TOO_OLD);
    }
    return cache.value(key);
  }

  private ReadCache cache() {
    if (cache == null) {
      cache = new ReadCache();
    }
    return cache;
  }

  private boolean seesOwnWrites(boolean snapshot) {
    return !rywDisabled && !(snapshot && snapshotRyw <= 0);
  }

  /**
   * What a range read that merges stored rows with this transaction's writes returns at {@code key}:
   * the stored value unless {@code clearedRanges} cover it when the stored row comes first ({@code order < 0}), else the own
   * write, applied to the stored value when both are at the key ({@code order == 0}); null when absent.
   */
  private static byte[] merged(int order, byte[] key, byte[] storedValue, PendingWrite write,
      TreeMap<byte[], byte[]> clearedRanges) {
    if (order < 0) {
      return inRanges(clearedRanges, key) ? null : storedValue;
    }
    if (write.kind == PendingWrite.Kind.STAMPED) {
      throw FdbErrors.error(FdbErrors.ACCESSED_UNREADABLE);
    }
    return write.kind == PendingWrite.Kind.KNOWN ? write.value : write.applyOps(storedValue);
  }

  private static boolean inRanges(TreeMap<byte[], byte[]> ranges, byte[] key) {
    if (ranges == null) {
      return false;
    }
    Map.Entry<byte[], byte[]> e = ranges.floorEntry(key);
    return e != null && Bytes.compare(key, e.getValue()) < 0;
  }

  private static boolean overlapsRanges(TreeMap<byte[], byte[]> ranges, byte[] begin, byte[] end) {
    if (ranges == null) {
      return false;
    }
    Map.Entry<byte[], byte[]> e = ranges.lowerEntry(end);
    return e != null && Bytes.compare(e.getValue(), begin) > 0;
  }

  private void addReadConflict(byte[] begin, byte[] end) {
    readConflicts.add(begin);
    readConflicts.add(end);
    approximateSize += begin.length + end.length;
  }

  /** One batch of a range read: rows, and whether the read stopped at its limit. */
  static final class Batch {
    final List<KeyValue> rows;
    final boolean limited;

    Batch(List<KeyValue> rows, boolean limited) {
      this.rows = rows;
      this.limited = limited;
    }
  }

  /** Resolved bounds of a range read, fixed at its first batch. */
  static final class Bounds {
    byte[] begin;
    byte[] end;
    /** Where the read-conflict range starts/ends: the selectors' keys where they reach further. */
    byte[] conflictBegin;
    byte[] conflictEnd;
  }

  CompletableFuture<Bounds> resolveBounds(KeySelector begin, KeySelector end, boolean snapshot) {
    try {
      synchronized (this) {
        FDBException err = openForRead();
        if (err != null) {
          return fail(err);
        }
        byte[] max = maxReadKey();
        if (Bytes.compare(begin.getKey(), max) > 0 || Bytes.compare(end.getKey(), max) > 0) {
          return fail(FdbErrors.error(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE));
        }
        boolean tookReadVersion = readVersion < 0;
        long rv = readVersion();
        checkReadVersion(rv);
        Bounds b = new Bounds();
        b.begin = resolveSelector(begin, rv, snapshot);
        b.end = resolveSelector(end, rv, snapshot);
        b.conflictBegin = Bytes.min(begin.getKey(), b.begin);
        b.conflictEnd = isFirstGreaterOrEqual(end) ? end.getKey() : Bytes.max(end.getKey(), b.end);
        boolean plain = isFirstGreaterOrEqual(begin) && isFirstGreaterOrEqual(end);
        return deliver(b, !plain, tookReadVersion);
      }
    } catch (RuntimeException e) {
      return fail(e);
    }
  }

  private static boolean isFirstGreaterOrEqual(KeySelector s) {
    return !s.orEqual() && s.getOffset() == 1;
  }

  /** Reads up to {@code limit} rows (0: all) of [begin, end) at the read version, own writes merged in. */
  CompletableFuture<Batch> readBatch(Bounds bounds, byte[] begin, byte[] end, int limit, boolean reverse,
      boolean snapshot) {
    try {
      synchronized (this) {
        FDBException err = openForRead();
        if (err != null) {
          return fail(err);
        }
        long rv = readVersion();
        checkReadVersion(rv);
        Batch batch = scan(begin, end, limit, reverse, rv, snapshot);
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
          if (Arrays.equals(begin, bounds.begin) && Bytes.compare(bounds.conflictBegin, cb) < 0 && !(reverse && batch.limited)) {
            cb = bounds.conflictBegin;
          }
          if (Arrays.equals(end, bounds.end) && Bytes.compare(bounds.conflictEnd, ce) > 0 && !(!reverse && batch.limited)) {
            ce = bounds.conflictEnd;
          }
          addRangeReadConflict(cb, ce);
        }
        return deliver(batch, true, false);
      }
    } catch (RuntimeException e) {
      return fail(e);
    }
  }

  /**
   * Read conflicts for a range read: the parts of [begin, end) not covered by this transaction's
   * own sets and clears (reading those needs nothing from the database), as FoundationDB's
   * read-your-writes client computes them.
   */
  private void addRangeReadConflict(byte[] begin, byte[] end) {
    if (Bytes.compare(begin, end) >= 0) {
      return;
    }
    if (rywDisabled || (writes == null && cleared == null)) {
      addReadConflict(begin, end);
      return;
    }
    byte[] cursor = begin;
    NavigableMap<byte[], PendingWrite> points = writes == null ? new TreeMap<>(Bytes.ORDER)
        : writes.subMap(begin, true, end, false);
    NavigableMap<byte[], byte[]> ranges = cleared == null ? new TreeMap<>(Bytes.ORDER) : cleared;
    // Walk the known-written pieces in key order, emitting the gaps between them.
    Map.Entry<byte[], byte[]> clearedBefore = ranges.floorEntry(begin);
    if (clearedBefore != null && Bytes.compare(clearedBefore.getValue(), cursor) > 0) {
      cursor = Bytes.min(clearedBefore.getValue(), end);
    }
    List<byte[][]> known = new ArrayList<>();
    for (Map.Entry<byte[], byte[]> r : ranges.subMap(begin, false, end, false).entrySet()) {
      known.add(new byte[][] {r.getKey(), r.getValue()});
    }
    for (Map.Entry<byte[], PendingWrite> p : points.entrySet()) {
      if (p.getValue().kind == PendingWrite.Kind.KNOWN) {
        known.add(new byte[][] {p.getKey(), Bytes.keyAfter(p.getKey())});
      }
    }
    known.sort((a, b) -> Bytes.compare(a[0], b[0]));
    for (byte[][] k : known) {
      if (Bytes.compare(k[0], cursor) > 0) {
        addReadConflict(cursor, Bytes.min(k[0], end));
      }
      if (Bytes.compare(k[1], cursor) > 0) {
        cursor = k[1];
      }
      if (Bytes.compare(cursor, end) >= 0) {
        return;
      }
    }
    if (Bytes.compare(cursor, end) < 0) {
      addReadConflict(cursor, end);
    }
  }

  /**
   * The merged view of [begin, end): what storage holds at {@code rv} overlaid with own writes. Once
   * {@code rv} has left the MVCC window, only what this transaction already knows answers (its cache
   * of earlier reads and its writes), as in FoundationDB; any part that needs storage fails 1007.
   */
  private Batch scan(byte[] begin, byte[] end, int limit, boolean reverse, long rv, boolean snapshot) {
    if (Bytes.compare(begin, end) >= 0) {
      return new Batch(new ArrayList<>(0), false);
    }
    boolean ryw = seesOwnWrites(snapshot);
    if (ryw && overlapsRanges(unreadable, begin, end)) {
      throw FdbErrors.error(FdbErrors.ACCESSED_UNREADABLE);
    }
    if (!engine.tooOld(rv)) {
      try {
        return scanStored(begin, end, limit, reverse, rv, ryw);
      } catch (VersionedStore.TooOld e) {
        // The window moved on during the read: answer from what is known, as below.
      }
    }
    return scanKnown(begin, end, limit, reverse, ryw);
  }

  private Batch scanStored(byte[] begin, byte[] end, int limit, boolean reverse, long rv, boolean ryw) {
    List<KeyValue> rows = new ArrayList<>(limit > 0 && limit < 256 ? limit : 16);
    NavigableMap<byte[], PendingWrite> own = ryw && writes != null ? writes.subMap(begin, true, end, false) : null;
    if (reverse && own != null) {
      own = own.descendingMap();
    }
    var wi = own == null ? null : own.entrySet().iterator();
    Map.Entry<byte[], PendingWrite> w = wi == null ? null : next(wi);
    TreeMap<byte[], byte[]> clearedRanges = ryw ? cleared : null;
    // The stored rows this read consumed, for the cache (FoundationDB's snapshot cache insert).
    boolean record = !rywDisabled;
    byte[][] seen = record ? new byte[16][] : null;
    int seenCount = 0;
    try (VersionedStore.Cursor stored = engine.store.cursor(begin, end, reverse, rv)) {
      boolean s = stored.next();
      while (s || w != null) {
        int order;
        if (!s) {
          order = 1;
        } else if (w == null) {
          order = -1;
        } else {
          order = Bytes.compare(stored.key, w.getKey()) * (reverse ? -1 : 1);
        }
        if (record && order <= 0) {
          if (seenCount == seen.length) {
            seen = Arrays.copyOf(seen, seenCount * 2);
          }
          seen[seenCount++] = stored.key;
          seen[seenCount++] = stored.value;
        }
        byte[] key = order < 0 ? stored.key : w.getKey();
        byte[] value = merged(order, key, order <= 0 ? stored.value : null, order >= 0 ? w.getValue() : null,
            clearedRanges);
        if (order <= 0) {
          s = stored.next();
        }
        if (order >= 0) {
          w = next(wi);
        }
        if (value != null) {
          rows.add(new KeyValue(key.clone(), value.clone()));
          if (limit > 0 && rows.size() >= limit) {
            if (record) {
              // A read stopped by its limit knows the range up to its last row; one that ran out
              // of stored rows knows all of it.
              byte[] knownBegin = !s || !reverse ? begin : key;
              byte[] knownEnd = !s || reverse ? end : Bytes.keyAfter(key);
              cache().recordRange(knownBegin, knownEnd, seen, seenCount);
            }
            return new Batch(rows, s || w != null);
          }
        }
      }
    }
    if (record) {
      cache().recordRange(begin, end, seen, seenCount);
    }
    return new Batch(rows, false);
  }

  /** {@link #scanStored} answered from what the transaction knows without storage, else 1007. */
  private Batch scanKnown(byte[] begin, byte[] end, int limit, boolean reverse, boolean ryw) {
    List<KeyValue> rows = new ArrayList<>(limit > 0 && limit < 256 ? limit : 16);
    NavigableMap<byte[], PendingWrite> own = ryw && writes != null ? writes.subMap(begin, true, end, false) : null;
    if (reverse && own != null) {
      own = own.descendingMap();
    }
    var wi = own == null ? null : own.entrySet().iterator();
    Map.Entry<byte[], PendingWrite> w = wi == null ? null : next(wi);
    TreeMap<byte[], byte[]> clearedRanges = ryw ? cleared : null;
    KnownRows stored = new KnownRows(begin, end, reverse, ryw);
    boolean s = stored.next();
    while (s || w != null) {
      int order;
      if (!s) {
        order = 1;
      } else if (w == null) {
        order = -1;
      } else {
        order = Bytes.compare(stored.key, w.getKey()) * (reverse ? -1 : 1);
      }
      if (order <= 0 && stored.unknown) {
        // The next stored row (or the base of an atomic operation) would come from storage.
        throw FdbErrors.error(FdbErrors.TRANSACTION_TOO_OLD);
      }
      byte[] key = order < 0 ? stored.key : w.getKey();
      byte[] value = merged(order, key, order <= 0 ? stored.value : null, order >= 0 ? w.getValue() : null,
          clearedRanges);
      if (order <= 0) {
        s = stored.next();
      }
      if (order >= 0) {
        w = next(wi);
      }
      if (value != null) {
        rows.add(new KeyValue(key.clone(), value.clone()));
        if (limit > 0 && rows.size() >= limit) {
          return new Batch(rows, s || w != null);
        }
      }
    }
    return new Batch(rows, false);
  }

  /**
   * The stored rows of [begin, end) as this transaction knows them without storage: from its cache
   * of earlier reads, stepping over what its own sets and clears hide (unless {@code covered} is
   * false: a snapshot read that does not see its own writes). Where nothing is known, {@link #next}
   * yields a row marked {@code unknown} at the position where knowledge stops.
   */
  private final class KnownRows {
    private final byte[] begin;
    private final byte[] end;
    private final boolean reverse;
    private final boolean covered;
    /** Forward: the next row is at or after pos; reverse: before it. */
    private byte[] pos;
    byte[] key;
    byte[] value;
    boolean unknown;

    KnownRows(byte[] begin, byte[] end, boolean reverse, boolean covered) {
      this.begin = begin;
      this.end = end;
      this.reverse = reverse;
      this.covered = covered;
      this.pos = reverse ? end : begin;
    }

    boolean next() {
      while (true) {
        if (reverse ? Bytes.compare(pos, begin) <= 0 : Bytes.compare(pos, end) >= 0) {
          return false;
        }
        Map.Entry<byte[], byte[]> r = cache == null ? null
            : reverse ? cache.rangeEndingAtOrAfter(pos) : cache.rangeContaining(pos);
        if (r != null) {
          Map.Entry<byte[], byte[]> kv;
          if (reverse) {
            byte[] from = Bytes.max(r.getKey(), begin);
            kv = cache.lastIn(from, pos);
            if (kv == null) {
              pos = from;
              continue;
            }
            pos = kv.getKey();
          } else {
            byte[] to = Bytes.min(r.getValue(), end);
            kv = cache.firstIn(pos, to);
            if (kv == null) {
              pos = to;
              continue;
            }
            pos = Bytes.keyAfter(kv.getKey());
          }
          key = kv.getKey();
          value = kv.getValue();
          return true;
        }
        if (covered && stepOverOwnWrites()) {
          continue;
        }
        unknown = true;
        key = pos;
        value = null;
        return true;
      }
    }

    /** Moves pos past a clear or a set of this transaction that decides the keys next to it. */
    private boolean stepOverOwnWrites() {
      if (reverse) {
        Map.Entry<byte[], byte[]> c = cleared == null ? null : cleared.lowerEntry(pos);
        if (c != null && Bytes.compare(c.getValue(), pos) >= 0) {
          pos = c.getKey();
          return true;
        }
        // A set of k decides [k, keyAfter(k)): pos is keyAfter(k) when it ends in a zero byte.
        if (writes != null && pos.length > 0 && pos[pos.length - 1] == 0) {
          byte[] k = Arrays.copyOf(pos, pos.length - 1);
          PendingWrite pw = writes.get(k);
          if (pw != null && pw.kind == PendingWrite.Kind.KNOWN) {
            pos = k;
            return true;
          }
        }
        return false;
      }
      Map.Entry<byte[], byte[]> c = cleared == null ? null : cleared.floorEntry(pos);
      if (c != null && Bytes.compare(c.getValue(), pos) > 0) {
        pos = c.getValue();
        return true;
      }
      PendingWrite pw = writes == null ? null : writes.get(pos);
      if (pw != null && pw.kind == PendingWrite.Kind.KNOWN) {
        pos = Bytes.keyAfter(pos);
        return true;
      }
      return false;
    }
  }

  private static <E> E next(java.util.Iterator<E> it) {
    return it != null && it.hasNext() ? it.next() : null;
  }

  /**
   * Resolves a key selector over the merged view: the last key below (or at) its key, moved by
   * its offset; the beginning of the database is the empty key, its end the max readable key.
   */
  private byte[] resolveSelector(KeySelector sel, long rv, boolean snapshot) {
    if (isFirstGreaterOrEqual(sel)) {
      return sel.getKey();
    }
    byte[] key = sel.getKey();
    byte[] max = maxReadKey();
    int offset = sel.getOffset();
    byte[] result;
    if (offset > 0) {
      byte[] from = sel.orEqual() ? Bytes.keyAfter(key) : key;
      Batch b = scan(Bytes.min(from, max), max, offset, false, rv, snapshot);
      result = b.rows.size() == offset ? b.rows.get(offset - 1).getKey() : max;
    } else {
      int steps = 1 - offset;
      byte[] to = sel.orEqual() ? Bytes.keyAfter(key) : key;
      Batch b = scan(Bytes.EMPTY, Bytes.min(to, max), steps, true, rv, snapshot);
      result = b.rows.size() == steps ? b.rows.get(steps - 1).getKey() : Bytes.EMPTY;
    }
    return result;
  }

  CompletableFuture<byte[]> getKey(KeySelector sel, boolean snapshot) {
    try {
      synchronized (this) {
        FDBException err = openForRead();
        if (err != null) {
          return fail(err);
        }
        byte[] max = maxReadKey();
        if (Bytes.compare(sel.getKey(), max) > 0) {
          return fail(FdbErrors.error(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE));
        }
        boolean tookReadVersion = readVersion < 0;
        long rv = readVersion();
        checkReadVersion(rv);
        byte[] result;
        if (isFirstGreaterOrEqual(sel)) {
          Batch b = scan(Bytes.min(sel.getKey(), max), max, 1, false, rv, snapshot);
          result = b.rows.isEmpty() ? max : b.rows.get(0).getKey();
        } else {
          result = resolveSelector(sel, rv, snapshot);
        }
        if (!snapshot) {
          // FoundationDB's range for a resolved selector: from the selector's base to the result.
          byte[] base = sel.orEqual() ? Bytes.keyAfter(sel.getKey()) : sel.getKey();
          if (sel.getOffset() <= 0) {
            addRangeReadConflict(result, base);
          } else {
            addRangeReadConflict(base, Bytes.keyAfter(result));
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
        return took && engine.readLatencyNanos > 0 ? deliver(rv, true, false) : CompletableFuture.completedFuture(rv);
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
    long size = 0;
    try (VersionedStore.Cursor c = engine.store.cursor(begin, end, false, engine.visibleVersion())) {
      while (c.next()) {
        size += c.key.length + c.value.length;
      }
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    return CompletableFuture.completedFuture(size);
  }

  CompletableFuture<KeyArrayResult> rangeSplitPoints(byte[] begin, byte[] end, long chunkSize) {
    List<byte[]> points = new ArrayList<>();
    points.add(begin);
    long acc = 0;
    try (VersionedStore.Cursor c = engine.store.cursor(begin, end, false, engine.visibleVersion())) {
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

  // ---------------------------------------------------------------- writes

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
        addReadConflict(begin.clone(), end.clone());
      } else {
        addWriteConflict(begin.clone(), end.clone());
      }
    }
  }

  @Override
  public void addWriteConflictKey(byte[] key) {
    addWriteConflictRange(key, Bytes.keyAfter(key));
  }

  private void addWriteConflict(byte[] begin, byte[] end) {
    writeConflicts.add(begin);
    writeConflicts.add(end);
    approximateSize += begin.length + end.length;
  }

  private TreeMap<byte[], PendingWrite> writeMap() {
    if (writes == null) {
      writes = new TreeMap<>(Bytes.ORDER);
    }
    return writes;
  }

  private static final int DROP = -1;
  private static final int WITH_CONFLICT = 1;

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
    boolean conflict = consumeWriteConflict();
    if (Bytes.compare(key, maxWriteKey()) >= 0) {
      defer(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE);
      return DROP;
    }
    if (key.length > maxKeySize(key)) {
      if (longKeyIsError) {
        defer(FdbErrors.KEY_TOO_LARGE);
      }
      return DROP;
    }
    if (operand != null && operand.length > Engine.VALUE_SIZE_LIMIT) {
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
    boolean conflict = admitted == WITH_CONFLICT;
    approximateSize += key.length + value.length;
    // The caller keeps its arrays: the transaction holds copies, as the native client does.
    putKnown(key.clone(), value.clone(), conflict);
  }

  /** Records a set (or, with a null value, a clear) of one key whose value is known now. */
  private void putKnown(byte[] key, byte[] value, boolean conflict) {
    writeMap().put(key, PendingWrite.known(value));
    if (conflict) {
      addWriteConflict(key, Bytes.keyAfter(key));
    }
    triggerOwnWatches(key, null, value, true);
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
    boolean conflict = admitted == WITH_CONFLICT;
    approximateSize += key.length;
    putKnown(key.clone(), null, conflict);
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
    boolean conflict = consumeWriteConflict();
    byte[] max = maxWriteKey();
    if (Bytes.compare(begin, max) > 0 || Bytes.compare(end, max) > 0) {
      defer(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE);
      return;
    }
    if (Bytes.compare(begin, end) > 0) {
      defer(FdbErrors.INVERTED_RANGE);
      return;
    }
    // No stored key is longer than the key limit, so longer bounds can be shortened.
    begin = begin.length > maxKeySize(begin) ? Arrays.copyOf(begin, maxKeySize(begin) + 1) : begin;
    end = end.length > maxKeySize(end) ? Arrays.copyOf(end, maxKeySize(end) + 1) : end;
    if (Bytes.compare(begin, end) >= 0) {
      return;
    }
    approximateSize += begin.length + end.length;
    begin = begin.clone();
    end = end.clone();
    if (writes != null) {
      writes.subMap(begin, true, end, false).clear();
    }
    addClearedRange(begin, end);
    if (conflict) {
      addWriteConflict(begin, end);
    }
    triggerOwnWatches(begin, end, null, true);
  }

  private void addClearedRange(byte[] begin, byte[] end) {
    if (cleared == null) {
      cleared = new TreeMap<>(Bytes.ORDER);
    }
    mergeRange(cleared, begin, end);
  }

  private static void mergeRange(TreeMap<byte[], byte[]> ranges, byte[] begin, byte[] end) {
    Map.Entry<byte[], byte[]> before = ranges.floorEntry(begin);
    if (before != null && Bytes.compare(before.getValue(), begin) >= 0) {
      begin = before.getKey();
      end = Bytes.max(end, before.getValue());
    }
    Map.Entry<byte[], byte[]> last = ranges.floorEntry(end);
    if (last != null && Bytes.compare(last.getKey(), begin) >= 0) {
      end = Bytes.max(end, last.getValue());
    }
    ranges.subMap(begin, true, end, true).clear();
    ranges.put(begin, end);
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
        mutateStampedKey(key, param, consumeWriteConflict());
      }
      return;
    }
    int admitted = admitPointWrite(key, param, true);
    if (admitted == DROP) {
      return;
    }
    boolean conflict = admitted == WITH_CONFLICT;
    key = key.clone();
    param = param.clone();
    PendingWrite current = writeMap().get(key);
    if (current == null && inRanges(cleared, key)) {
      current = PendingWrite.known(null);
    }
    PendingWrite next;
    if (type == MutationType.SET_VERSIONSTAMPED_VALUE) {
      if (Engine.stampOffset(param) < 0) {
        defer(FdbErrors.CLIENT_INVALID_OPERATION);
        return;
      }
      next = PendingWrite.stamped(param);
    } else {
      next = PendingWrite.withOp(current, type, param);
    }
    approximateSize += key.length + param.length;
    writes.put(key, next);
    if (conflict) {
      addWriteConflict(key, Bytes.keyAfter(key));
    }
    triggerOwnWatches(key, null, next.value, next.kind == PendingWrite.Kind.KNOWN);
  }

  private void mutateStampedKey(byte[] key, byte[] value, boolean conflict) {
    int offset = Engine.stampOffset(key);
    if (offset < 0) {
      defer(FdbErrors.CLIENT_INVALID_OPERATION);
      return;
    }
    // FoundationDB's range for the key to be: the stamp from just past the read version (when one
    // is known) to all 0xff, and the key after that.
    byte[] low = Engine.fillStamp(key, Engine.versionstamp(readVersion >= 0 ? readVersion + 1 : 0));
    byte[] highStamp = new byte[10];
    Arrays.fill(highStamp, (byte) 0xff);
    byte[] high = Bytes.min(Bytes.keyAfter(Engine.fillStamp(key, highStamp)), maxWriteKey());
    if (Bytes.compare(low, maxWriteKey()) >= 0) {
      defer(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE);
      return;
    }
    if (low.length > maxKeySize(low)) {
      defer(FdbErrors.KEY_TOO_LARGE);
      return;
    }
    if (value.length > Engine.VALUE_SIZE_LIMIT) {
      defer(FdbErrors.VALUE_TOO_LARGE);
      return;
    }
    if (stampedKeys == null) {
      stampedKeys = new ArrayList<>();
    }
    stampedKeys.add(new byte[][] {key.clone(), value.clone()});
    approximateSize += key.length + value.length;
    if (unreadable == null) {
      unreadable = new TreeMap<>(Bytes.ORDER);
    }
    mergeRange(unreadable, low, high);
    if (conflict) {
      addWriteConflict(low, high);
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
      if (rywDisabled) {
        return CompletableFuture.failedFuture(FdbErrors.error(FdbErrors.WATCHES_DISABLED));
      }
      if (Bytes.compare(key, maxReadKey()) >= 0) {
        return CompletableFuture.failedFuture(FdbErrors.error(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE));
      }
      if (key.length > maxKeySize(key)) {
        return CompletableFuture.failedFuture(FdbErrors.error(FdbErrors.KEY_TOO_LARGE));
      }
      byte[] seen;
      try {
        seen = ownView(key);
      } catch (RuntimeException e) {
        return fail(e);
      }
      // FoundationDB reads the watched key as a serializable read, with its read conflict.
      PendingWrite own = writes == null ? null : writes.get(key);
      if ((own == null || own.kind != PendingWrite.Kind.KNOWN) && !inRanges(cleared, key)) {
        addReadConflict(key, Bytes.keyAfter(key));
      }
      if (!engine.watches.reserve()) {
        return CompletableFuture.failedFuture(FdbErrors.error(FdbErrors.TOO_MANY_WATCHES));
      }
      CompletableFuture<Void> future = new CompletableFuture<>();
      if (watches == null) {
        watches = new ArrayList<>();
      }
      Watches.Watch w = new Watches.Watch(key.clone(), seen, future, executor);
      watches.add(w);
      // FoundationDB counts a watch against the limit only while its future is live: one cancelled
      // before the commit gives its slot back at once (after the commit, Watches does the same).
      future.whenComplete((v, t) -> {
        if (future.isCancelled()) {
          releaseUncommittedWatch(w);
        }
      });
      return future;
    }
  }

  private synchronized void releaseUncommittedWatch(Watches.Watch w) {
    if (watches != null && watches.remove(w)) {
      engine.watches.unreserve();
    }
  }

  /** The key's value as this transaction sees it, without adding a read conflict. */
  private byte[] ownView(byte[] key) {
    long rv = readVersion();
    checkReadVersion(rv);
    if (engine.tooOld(rv)) {
      throw FdbErrors.error(FdbErrors.TRANSACTION_TOO_OLD);
    }
    PendingWrite w = writes == null ? null : writes.get(key);
    if (w != null) {
      if (w.kind == PendingWrite.Kind.KNOWN) {
        return w.value;
      }
      if (w.kind == PendingWrite.Kind.STAMPED) {
        throw FdbErrors.error(FdbErrors.ACCESSED_UNREADABLE);
      }
      return w.applyOps(engine.store.get(key, rv));
    }
    if (inRanges(cleared, key)) {
      return null;
    }
    return engine.store.get(key, rv);
  }

  /**
   * A write of this transaction to a key it watches fires the watch at once when the value
   * changes (or cannot be known before commit), as FoundationDB's read-your-writes client does.
   */
  private void triggerOwnWatches(byte[] begin, byte[] end, byte[] value, boolean known) {
    if (watches == null) {
      return;
    }
    watches.removeIf(w -> {
      boolean inRange = end == null ? Arrays.equals(w.key, begin)
          : Bytes.compare(w.key, begin) >= 0 && Bytes.compare(w.key, end) < 0;
      if (!inRange || (known && Arrays.equals(w.seen, value))) {
        return false;
      }
      engine.watches.unreserve();
      executor.execute(() -> w.future.complete(null));
      return true;
    });
  }

  private void failWatches(FDBException error) {
    if (watches == null) {
      return;
    }
    for (Watches.Watch w : watches) {
      engine.watches.unreserve();
      executor.execute(() -> w.future.completeExceptionally(error));
    }
    watches = null;
  }

  // ---------------------------------------------------------------- commit

  @Override
  public CompletableFuture<Void> commit() {
    Engine.CommitRequest req;
    CompletableFuture<Void> result = new CompletableFuture<>();
    synchronized (this) {
      ensureOpen();
      FDBException err = readError();
      if (err == null && approximateSize > sizeLimit) {
        err = FdbErrors.error(FdbErrors.TRANSACTION_TOO_LARGE);
      }
      if (err != null) {
        if (state == State.ACTIVE) {
          failWatches(err);
          versionstamp.completeExceptionally(err);
        }
        return CompletableFuture.failedFuture(err);
      }
      state = State.COMMITTING;
      pendingCommit = result;
      req = new Engine.CommitRequest();
      req.writes = writes;
      req.clearedRanges = cleared;
      req.stampedKeys = stampedKeys;
      req.readConflicts = readConflicts;
      req.writeConflicts = writeConflicts;
      req.watches = liveWatches();
      boolean readOnly = writeConflicts.isEmpty() && writes == null && cleared == null && stampedKeys == null;
      if (!readOnly) {
        try {
          req.readVersion = readVersion();
        } catch (RuntimeException e) {
          return finishCommit(null, e, result, req.watches);
        }
      }
    }
    if (engine.commitLatencyNanos > 0) {
      engine.timer.schedule(() -> resolve(req, result), engine.commitLatencyNanos, TimeUnit.NANOSECONDS);
      return result;
    }
    return resolve(req, result);
  }

  private List<Watches.Watch> liveWatches() {
    if (watches == null) {
      return null;
    }
    List<Watches.Watch> live = new ArrayList<>(watches.size());
    for (Watches.Watch w : watches) {
      if (w.future.isDone()) {
        engine.watches.unreserve();
      } else {
        live.add(w);
      }
    }
    watches = null;
    return live;
  }

  private CompletableFuture<Void> resolve(Engine.CommitRequest req, CompletableFuture<Void> result) {
    CompletableFuture<Engine.CommitResult> applied;
    try {
      applied = engine.commit(req);
    } catch (RuntimeException e) {
      applied = CompletableFuture.failedFuture(e);
    }
    if (Engine.isHeld(applied)) {
      // Cancelled or timed out while held back (the disk is low on space, the storage lags), the
      // commit leaves the queue and never happens, rather than committing after its caller gave up.
      boolean cancelled;
      synchronized (this) {
        cancelled = state == State.CANCELLED;
        if (!cancelled) {
          heldCommit = applied;
        }
      }
      if (cancelled) {
        engine.withdraw(applied, cancelError);
      }
    }
    if (applied.isDone() && engine.commitLatencyNanos == 0) {
      // In memory with no latency the commit is complete here, off the commit lock: finish inline.
      Engine.CommitResult r = null;
      Throwable t = null;
      try {
        r = applied.join();
      } catch (CompletionException e) {
        t = e.getCause();
      }
      return finishCommit(r, t, result, req.watches);
    }
    applied.whenCompleteAsync((r, t) -> finishCommit(r, t instanceof CompletionException ? t.getCause() : t, result,
        req.watches),
        executor);
    return result;
  }

  /** Watches handed to a commit that failed fail with the commit's error. */
  private void failCommittedWatches(List<Watches.Watch> handed, Throwable error) {
    if (handed == null) {
      return;
    }
    for (Watches.Watch w : handed) {
      engine.watches.unreserve();
      executor.execute(() -> w.future.completeExceptionally(error));
    }
  }

  private CompletableFuture<Void> finishCommit(Engine.CommitResult r, Throwable t, CompletableFuture<Void> result,
      List<Watches.Watch> handed) {
    List<Watches.Watch> requested;
    synchronized (this) {
      if (t == null) {
        committedVersion = r.version;
        state = State.COMMITTED;
        if (r.version < 0) {
          versionstamp.completeExceptionally(FdbErrors.error(FdbErrors.NO_COMMIT_VERSION));
        } else {
          versionstamp.complete(Engine.versionstamp(r.version));
        }
      } else {
        FDBException error = t instanceof FDBException ? (FDBException) t
            : new FDBException("Commit failed: " + t, FdbErrors.INTERNAL_ERROR);
        t = error;
        versionstamp.completeExceptionally(error);
        failCommittedWatches(handed, error);
        if (state == State.COMMITTING) {
          state = State.COMMITTED;
        }
      }
      pendingCommit = null;
      heldCommit = null;
    }
    if (t == null) {
      result.complete(null);
    } else {
      result.completeExceptionally(t);
    }
    return result;
  }

  @Override
  public Long getCommittedVersion() {
    return committedVersion;
  }

  @Override
  public synchronized CompletableFuture<byte[]> getVersionstamp() {
    if (state == State.COMMITTING || state == State.COMMITTED) {
      return CompletableFuture.failedFuture(FdbErrors.error(FdbErrors.USED_DURING_COMMIT));
    }
    return versionstamp;
  }

  @Override
  public synchronized CompletableFuture<Long> getApproximateSize() {
    return CompletableFuture.completedFuture(approximateSize);
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
      if (retryLimit >= 0 && retries >= retryLimit) {
        return CompletableFuture.failedFuture(e);
      }
      retries++;
      double maxBackoff = maxRetryDelayMillis / 1000.0;
      if (code == FdbErrors.TRANSACTION_TOO_OLD || code == FdbErrors.FUTURE_VERSION) {
        delaySeconds = Math.min(FUTURE_VERSION_RETRY_DELAY, maxBackoff);
      } else {
        delaySeconds = backoff * ThreadLocalRandom.current().nextDouble();
        backoff = Math.min(backoff * 2, maxBackoff);
      }
      reset();
    }
    CompletableFuture<Transaction> next = new CompletableFuture<>();
    engine.schedule((long) (delaySeconds * 1e9), executor, () -> next.complete(this));
    return next;
  }

  /** Back to a fresh transaction, keeping the persistent options, retry count and back-off. */
  private void reset() {
    failWatches(FdbErrors.error(FdbErrors.TRANSACTION_CANCELLED));
    state = State.ACTIVE;
    cancelError = null;
    readVersion = -1;
    writes = null;
    cleared = null;
    unreadable = null;
    stampedKeys = null;
    cache = null;
    readConflicts = new ArrayList<>();
    writeConflicts = new ArrayList<>();
    deferred = null;
    approximateSize = 0;
    committedVersion = -1;
    versionstamp = new CompletableFuture<>();
    rywDisabled = false;
    snapshotRyw = defaults.snapshotRyw;
    nextWriteNoConflict = false;
    readSystemKeys = false;
    accessSystemKeys = false;
    if (timeoutMillis > 0 && timeoutTask == null) {
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
      commitInFlight = pendingCommit;
      state = State.CANCELLED;
      cancelError = error;
      CompletableFuture<Engine.CommitResult> held = heldCommit;
      String lowOnSpace = held == null ? null : engine.lowOnSpace();
      if (lowOnSpace != null) {
        // Withdrawn, so certainly not committed, and the caller learns why it waited: set before the
        // withdrawal completes the commit (onError, on another thread, answers cancelError).
        cancelError = new CommitsHeldException(error, lowOnSpace);
      }
      if (held != null && !engine.withdraw(held, cancelError)) {
        cancelError = error; // let through just now: its outcome is the commit's
      }
      error = cancelError;
      failWatches(error);
      versionstamp.completeExceptionally(error);
    }
    if (commitInFlight != null) {
      commitInFlight.completeExceptionally(error);
    }
  }

  private void scheduleTimeout() {
    long elapsedMillis = (System.nanoTime() - creationNanos) / 1_000_000L;
    long remaining = Math.max(0, timeoutMillis - elapsedMillis);
    timeoutTask = engine.timer.schedule(() -> cancelWith(FdbErrors.error(FdbErrors.TRANSACTION_TIMED_OUT)),
        remaining, TimeUnit.MILLISECONDS);
  }

  private synchronized void setOption(int code, byte[] param) {
    ensureOpen();
    switch (code) {
      case 30:
        nextWriteNoConflict = true;
        break;
      case 51:
        if (readVersion >= 0 || writes != null || cleared != null || stampedKeys != null || watches != null) {
          throw FdbErrors.error(FdbErrors.CLIENT_INVALID_OPERATION);
        }
        rywDisabled = true;
        break;
      case 301:
        accessSystemKeys = true;
        break;
      case 302:
        readSystemKeys = true;
        break;
      case 500:
        timeoutMillis = intParam(param, 0, Integer.MAX_VALUE);
        if (timeoutTask != null) {
          timeoutTask.cancel(false);
          timeoutTask = null;
        }
        if (timeoutMillis > 0) {
          scheduleTimeout();
        }
        break;
      case 501:
        retryLimit = intParam(param, -1, Integer.MAX_VALUE);
        break;
      case 502:
        maxRetryDelayMillis = intParam(param, 0, Integer.MAX_VALUE);
        break;
      case 503:
        sizeLimit = intParam(param, 32, Engine.TRANSACTION_SIZE_LIMIT);
        break;
      case 600:
        snapshotRyw++;
        break;
      case 601:
        snapshotRyw--;
        break;
      default:
        // Priorities, tags, tracing, causal-read and similar options have no effect in one process.
        break;
    }
  }

  public static long intParam(byte[] param, long min, long max) {
    if (param == null || param.length != 8) {
      throw FdbErrors.error(FdbErrors.INVALID_OPTION_VALUE);
    }
    long v = ByteBuffer.wrap(param).order(ByteOrder.LITTLE_ENDIAN).getLong();
    if (v < min || v > max) {
      throw FdbErrors.error(FdbErrors.INVALID_OPTION_VALUE);
    }
    return v;
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
      commitHeld = !closed && heldCommit != null;
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
        failWatches(FdbErrors.error(FdbErrors.TRANSACTION_CANCELLED));
      }
      closed = true;
      if (timeoutTask != null) {
        timeoutTask.cancel(false);
      }
    }
  }
}
