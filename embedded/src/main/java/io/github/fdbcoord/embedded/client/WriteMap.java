package io.github.fdbcoord.embedded.client;

import io.github.fdbcoord.embedded.engine.CommitRequest;
import io.github.fdbcoord.embedded.engine.PendingWrite;
import io.github.fdbcoord.embedded.engine.StampedOperands;
import io.github.fdbcoord.embedded.bytes.Bytes;

import com.apple.foundationdb.MutationType;
import io.github.fdbcoord.fdb.FdbErrors;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;

/**
 * A transaction's writes, coalesced as FoundationDB's client write map: point writes by key, cleared
 * ranges, the ranges versionstamped keys may land in (unreadable until commit) and the versionstamped
 * keys themselves. Each map stays null until first used, which is also how a commit tells that it writes
 * nothing. Not thread-safe: the transaction's monitor guards it.
 */
final class WriteMap {
  /** Point writes by key, or null. */
  TreeMap<byte[], PendingWrite> points;
  /** Cleared ranges, begin to end, non-overlapping, or null. */
  TreeMap<byte[], byte[]> cleared;
  /** Where versionstamped keys may land, begin to end, or null. */
  private TreeMap<byte[], byte[]> unreadable;
  /** SET_VERSIONSTAMPED_KEY operands with their values, in order, or null. */
  List<CommitRequest.StampedKey> stampedKeys;
  /** The ranges cleared since the first versionstamped key, flattened pairs in order, or null (see {@link CommitRequest}). */
  List<byte[]> clearsAfterStamps;

  /** Whether nothing has been written (a transaction that commits nothing has no writes to send). */
  boolean isEmpty() {
    return points == null && cleared == null && stampedKeys == null;
  }

  /** The pending write to {@code key}, or null. */
  PendingWrite get(byte[] key) {
    return points == null ? null : points.get(key);
  }

  boolean isCleared(byte[] key) {
    return inRanges(cleared, key);
  }

  boolean isUnreadable(byte[] key) {
    return inRanges(unreadable, key);
  }

  boolean overlapsUnreadable(byte[] begin, byte[] end) {
    return overlapsRanges(unreadable, begin, end);
  }

  /** The point writes in [begin, end), or null when there are none at all. */
  NavigableMap<byte[], PendingWrite> pointsIn(byte[] begin, byte[] end) {
    return points == null ? null : points.subMap(begin, true, end, false);
  }

  /** Records a set (or, with a null value, a clear) of one key whose value is known now. */
  void putKnown(byte[] key, byte[] value) {
    pointMap().put(key, PendingWrite.known(value));
  }

  /**
   * Stacks an atomic operation on what the transaction wrote to {@code key} (a cleared key is known to
   * be absent), or a versionstamped value in place of it; returns the key's new pending write, or null
   * (nothing written) when a versionstamped value's operand is malformed.
   */
  PendingWrite mutate(byte[] key, MutationType type, byte[] param) {
    PendingWrite current = pointMap().get(key);
    if (current == null && isCleared(key)) {
      current = PendingWrite.known(null);
    }
    PendingWrite next;
    if (type == MutationType.SET_VERSIONSTAMPED_VALUE) {
      if (StampedOperands.stampOffset(param) < 0) {
        return null;
      }
      next = PendingWrite.stamped(param);
    } else {
      next = PendingWrite.withOp(current, type, param);
    }
    points.put(key, next);
    return next;
  }

  /** Clears [begin, end): the point writes inside go, the range joins the cleared ones. */
  void clearRange(byte[] begin, byte[] end) {
    if (points != null) {
      points.subMap(begin, true, end, false).clear();
    }
    if (cleared == null) {
      cleared = new TreeMap<>(Bytes.ORDER);
    }
    mergeRange(cleared, begin, end);
    // What the clear covers is known again (absent), as in FoundationDB's write map, where a clear replaces the
    // unreadable marks of the versionstamped keys made before it.
    subtractRange(unreadable, begin, end);
    if (stampedKeys != null) {
      // The stamped keys made before this clear are known only at commit: the clear is applied to them then.
      if (clearsAfterStamps == null) {
        clearsAfterStamps = new ArrayList<>();
      }
      clearsAfterStamps.add(begin);
      clearsAfterStamps.add(end);
    }
  }

  /** Records a versionstamped key, which will land somewhere in [low, high): unreadable until commit. */
  void addStampedKey(byte[] template, byte[] value, byte[] low, byte[] high) {
    if (stampedKeys == null) {
      stampedKeys = new ArrayList<>();
    }
    stampedKeys.add(new CommitRequest.StampedKey(template, value, clearsAfterStamps == null ? 0 : clearsAfterStamps.size() / 2));
    if (unreadable == null) {
      unreadable = new TreeMap<>(Bytes.ORDER);
    }
    mergeRange(unreadable, low, high);
  }

  /** Forgets every write (the transaction was reset for a retry). */
  void reset() {
    points = null;
    cleared = null;
    unreadable = null;
    stampedKeys = null;
    clearsAfterStamps = null;
  }

  private TreeMap<byte[], PendingWrite> pointMap() {
    if (points == null) {
      points = new TreeMap<>(Bytes.ORDER);
    }
    return points;
  }

  static boolean inRanges(TreeMap<byte[], byte[]> ranges, byte[] key) {
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

  /** Removes [begin, end) from {@code ranges} (non-overlapping, begin to end), splitting the ranges it cuts. */
  private static void subtractRange(TreeMap<byte[], byte[]> ranges, byte[] begin, byte[] end) {
    if (ranges == null || !overlapsRanges(ranges, begin, end)) {
      return;
    }
    Map.Entry<byte[], byte[]> before = ranges.lowerEntry(begin);
    if (before != null && Bytes.compare(before.getValue(), begin) > 0) {
      ranges.put(before.getKey(), begin);
      if (Bytes.compare(before.getValue(), end) > 0) {
        ranges.put(end, before.getValue());
        return;
      }
    }
    Map.Entry<byte[], byte[]> last = ranges.lowerEntry(end);
    if (last != null && Bytes.compare(last.getKey(), begin) >= 0 && Bytes.compare(last.getValue(), end) > 0) {
      ranges.put(end, last.getValue());
    }
    ranges.subMap(begin, true, end, false).clear();
  }

  /**
   * What a range read that merges stored rows with this transaction's writes returns at {@code key}:
   * the stored value unless {@code clearedRanges} cover it when the stored row comes first ({@code
   * order < 0}), else the own write, applied to the stored value when both are at the key ({@code order
   * == 0}); null when absent.
   */
  static byte[] merged(int order, byte[] key, byte[] storedValue, PendingWrite write,
      TreeMap<byte[], byte[]> clearedRanges) {
    if (order < 0) {
      return inRanges(clearedRanges, key) ? null : storedValue;
    }
    if (write.kind == PendingWrite.Kind.STAMPED) {
      throw FdbErrors.error(FdbErrors.ACCESSED_UNREADABLE);
    }
    return write.kind == PendingWrite.Kind.KNOWN ? write.value : write.applyOps(storedValue);
  }
}
