package io.github.fdbcoord.embedded.client;

import io.github.fdbcoord.embedded.engine.PendingWrite;
import io.github.fdbcoord.embedded.engine.TransactionEngine;
import io.github.fdbcoord.embedded.bytes.Bytes;
import io.github.fdbcoord.embedded.storage.VersionedStore;

import com.apple.foundationdb.KeySelector;
import com.apple.foundationdb.KeyValue;
import io.github.fdbcoord.fdb.FdbErrors;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;

/**
 * What a transaction sees of [begin, end): the rows stored at its read version merged with its own
 * writes (FoundationDB's {@code RYWIterator}), and the cache of what storage answered it
 * (FoundationDB's snapshot cache), which answers once the read version has left the MVCC window.
 * Range scans and key selectors resolve here. Not thread-safe: the transaction's monitor guards it.
 */
final class MergedView {
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
    /** The selectors describe an empty range on their face: nothing is read, no read version taken. */
    boolean empty;
  }

  private final TransactionEngine engine;
  private final WriteMap own;
  /** What storage answered; null until the first read, and with RYW disabled. */
  private ReadCache cache;

  MergedView(TransactionEngine engine, WriteMap own) {
    this.engine = engine;
    this.own = own;
  }

  /** Forgets what storage answered (the transaction was reset for a retry). */
  void reset() {
    cache = null;
  }

  /** Records a point read's answer; {@code keyAfter} is keyAfter(key), which the cache keeps. */
  void recordPoint(byte[] keyAfter, byte[] value) {
    cache().recordPoint(keyAfter, value);
  }

  /**
   * A key's stored value from what this transaction read earlier, once storage can no longer answer
   * at its read version: 1007 when it never learnt it (always, with RYW disabled: no cache).
   */
  byte[] cachedValue(byte[] key) {
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

  static boolean isFirstGreaterOrEqual(KeySelector s) {
    return !s.orEqual() && s.getOffset() == 1;
  }

  /**
   * The merged view of [begin, end): what storage holds at {@code rv} overlaid with own writes (when
   * {@code ryw}), recording what storage answered (when {@code record}). Once {@code rv} has left the
   * MVCC window, only what this transaction already knows answers (its cache of earlier reads and its
   * writes), as in FoundationDB; any part that needs storage fails 1007.
   */
  Batch scan(byte[] begin, byte[] end, int limit, boolean reverse, long rv, boolean ryw, boolean record) {
    if (Bytes.compare(begin, end) >= 0) {
      return new Batch(new ArrayList<>(0), false);
    }
    if (ryw && own.overlapsUnreadable(begin, end)) {
      throw FdbErrors.error(FdbErrors.ACCESSED_UNREADABLE);
    }
    if (!engine.tooOld(rv)) {
      try {
        return scanStored(begin, end, limit, reverse, rv, ryw, record);
      } catch (VersionedStore.TooOld e) {
        // The window moved on during the read: answer from what is known, as below.
      }
    }
    return scanKnown(begin, end, limit, reverse, ryw);
  }

  private Batch scanStored(byte[] begin, byte[] end, int limit, boolean reverse, long rv, boolean ryw,
      boolean record) {
    try (VersionedStore.Cursor cursor = engine.cursor(begin, end, reverse, rv)) {
      return merge(new CursorRows(cursor, begin, end, reverse, record), begin, end, limit, reverse, ryw);
    }
  }

  /** {@link #scanStored} answered from what the transaction knows without storage, else 1007. */
  private Batch scanKnown(byte[] begin, byte[] end, int limit, boolean reverse, boolean ryw) {
    return merge(new KnownRows(begin, end, reverse, ryw), begin, end, limit, reverse, ryw);
  }

  /**
   * Merges {@code stored} with this transaction's point writes and cleared ranges (when {@code ryw})
   * in scan order, up to {@code limit} rows (0: all). The engine's hottest read path: one call on
   * {@code stored} per row taken, nothing allocated per row but the row returned.
   */
  private Batch merge(StoredRows stored, byte[] begin, byte[] end, int limit, boolean reverse, boolean ryw) {
    List<KeyValue> rows = new ArrayList<>(limit > 0 && limit < 256 ? limit : 16);
    NavigableMap<byte[], PendingWrite> points = ryw ? own.pointsIn(begin, end) : null;
    if (reverse && points != null) {
      points = points.descendingMap();
    }
    var wi = points == null ? null : points.entrySet().iterator();
    Map.Entry<byte[], PendingWrite> w = wi == null ? null : next(wi);
    TreeMap<byte[], byte[]> clearedRanges = ryw ? own.cleared : null;
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
      byte[] value = WriteMap.merged(order, key, order <= 0 ? stored.value : null,
          order >= 0 ? w.getValue() : null, clearedRanges);
      if (order <= 0) {
        s = stored.next();
      }
      if (order >= 0) {
        w = next(wi);
      }
      if (value != null) {
        rows.add(new KeyValue(key.clone(), value.clone()));
        if (limit > 0 && rows.size() >= limit) {
          stored.stoppedAt(key, s);
          return new Batch(rows, s || w != null);
        }
      }
    }
    stored.exhausted();
    return new Batch(rows, false);
  }

  /**
   * The rows storage holds at the read version, from its cursor. When {@code record}, keeps the rows
   * the merge takes and, once it ends, what they tell of the range for the cache (FoundationDB's
   * snapshot cache insert).
   */
  private final class CursorRows extends StoredRows {
    private final VersionedStore.Cursor cursor;
    private final byte[] begin;
    private final byte[] end;
    private final boolean reverse;
    /** Keys and values of the rows taken, alternating; null when not recording. */
    private byte[][] seen;
    private int seenCount;
    private boolean onRow;

    CursorRows(VersionedStore.Cursor cursor, byte[] begin, byte[] end, boolean reverse, boolean record) {
      this.cursor = cursor;
      this.begin = begin;
      this.end = end;
      this.reverse = reverse;
      this.seen = record ? new byte[16][] : null;
    }

    @Override
    boolean next() {
      // The merge steps past a row only once it has taken it.
      if (onRow && seen != null) {
        if (seenCount == seen.length) {
          seen = Arrays.copyOf(seen, seenCount * 2);
        }
        seen[seenCount++] = key;
        seen[seenCount++] = value;
      }
      onRow = cursor.next();
      if (onRow) {
        key = cursor.key;
        value = cursor.value;
      }
      return onRow;
    }

    @Override
    void stoppedAt(byte[] lastKey, boolean more) {
      if (seen != null) {
        // A read stopped by its limit knows the range up to its last row; one that ran out of
        // stored rows knows all of it.
        byte[] knownBegin = !more || !reverse ? begin : lastKey;
        byte[] knownEnd = !more || reverse ? end : Bytes.keyAfter(lastKey);
        cache().recordRange(knownBegin, knownEnd, seen, seenCount);
      }
    }

    @Override
    void exhausted() {
      if (seen != null) {
        cache().recordRange(begin, end, seen, seenCount);
      }
    }
  }

  /**
   * The stored rows of [begin, end) as this transaction knows them without storage: from its cache
   * of earlier reads, stepping over what its own sets and clears hide (unless {@code covered} is
   * false: a snapshot read that does not see its own writes). Where nothing is known, {@link #next}
   * yields a row marked {@code unknown} at the position where knowledge stops.
   */
  private final class KnownRows extends StoredRows {
    private final byte[] begin;
    private final byte[] end;
    private final boolean reverse;
    private final boolean covered;
    /** Forward: the next row is at or after pos; reverse: before it. */
    private byte[] pos;

    KnownRows(byte[] begin, byte[] end, boolean reverse, boolean covered) {
      this.begin = begin;
      this.end = end;
      this.reverse = reverse;
      this.covered = covered;
      this.pos = reverse ? end : begin;
    }

    @Override
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
      TreeMap<byte[], byte[]> cleared = own.cleared;
      if (reverse) {
        Map.Entry<byte[], byte[]> c = cleared == null ? null : cleared.lowerEntry(pos);
        if (c != null && Bytes.compare(c.getValue(), pos) >= 0) {
          pos = c.getKey();
          return true;
        }
        // A set of k decides [k, keyAfter(k)): pos is keyAfter(k) when it ends in a zero byte.
        if (own.points != null && pos.length > 0 && pos[pos.length - 1] == 0) {
          byte[] k = Arrays.copyOf(pos, pos.length - 1);
          PendingWrite pw = own.points.get(k);
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
      PendingWrite pw = own.get(pos);
      if (pw != null && pw.kind == PendingWrite.Kind.KNOWN) {
        pos = Bytes.keyAfter(pos);
        return true;
      }
      return false;
    }
  }

  private static <E> E next(Iterator<E> it) {
    return it != null && it.hasNext() ? it.next() : null;
  }

  /**
   * Resolves a key selector over the merged view: the last key below (or at) its key, moved by
   * its offset; the beginning of the database is the empty key, its end {@code max}.
   */
  byte[] resolveSelector(KeySelector sel, long rv, byte[] max, boolean ryw, boolean record) {
    if (isFirstGreaterOrEqual(sel)) {
      return sel.getKey();
    }
    byte[] key = sel.getKey();
    int offset = sel.getOffset();
    byte[] result;
    if (offset > 0) {
      byte[] from = sel.orEqual() ? Bytes.keyAfter(key) : key;
      Batch b = scan(Bytes.min(from, max), max, offset, false, rv, ryw, record);
      result = b.rows.size() == offset ? b.rows.get(offset - 1).getKey() : max;
    } else {
      int steps = 1 - offset;
      byte[] to = sel.orEqual() ? Bytes.keyAfter(key) : key;
      Batch b = scan(Bytes.EMPTY, Bytes.min(to, max), steps, true, rv, ryw, record);
      result = b.rows.size() == steps ? b.rows.get(steps - 1).getKey() : Bytes.EMPTY;
    }
    return result;
  }
}
