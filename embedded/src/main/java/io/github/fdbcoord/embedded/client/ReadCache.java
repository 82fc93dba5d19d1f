package io.github.fdbcoord.embedded.client;

import io.github.fdbcoord.embedded.bytes.Bytes;

import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;

/**
 * What storage answered this transaction, at its read version: FoundationDB's {@code SnapshotCache}
 * (fdbclient/include/fdbclient/SnapshotCache.h). A point read knows its key; a range read knows the
 * range it read through (a read stopped by its limit only up to its last row), with every stored
 * key and value in it. FoundationDB answers reads from it instead of storage; since storage answers
 * the same at the same read version, the engine reads storage while it can and asks the cache only
 * once the read version has left the MVCC window, when FoundationDB would have needed the cache to
 * answer at all.
 *
 * <p>Recording is on the hot path of every read, so reads only append to a log; the ordered form
 * (known ranges, values) is built from it when first needed. Not thread-safe: the transaction's
 * monitor guards it.
 */
final class ReadCache {
  /** Point reads: keyAfter(key), value (null: absent) pairs. */
  private byte[][] points = new byte[16][];
  private int pointCount;
  /** Range reads: begin, end, then the stored key/value pairs inside, one array per read. */
  private byte[][][] ranges;
  private int rangeCount;

  // The ordered form, folded from the logs up to these positions.
  private int foldedPoints;
  private int foldedRanges;
  private static final int FOLD_EVERY = 2 * 4096;
  /** Known ranges, disjoint: begin -> end. */
  private TreeMap<byte[], byte[]> known;
  /** Stored values of present keys inside known ranges. */
  private TreeMap<byte[], byte[]> values;

  /**
   * Records that the key just before {@code keyAfter} (keyAfter(key): the cache's own copy, which
   * the read's conflict range shares, so recording allocates nothing) holds {@code value} (null:
   * absent).
   */
  void recordPoint(byte[] keyAfter, byte[] value) {
    if (pointCount == points.length) {
      points = Arrays.copyOf(points, pointCount * 2);
    }
    points[pointCount++] = keyAfter;
    points[pointCount++] = value;
    if (pointCount - foldedPoints >= FOLD_EVERY) {
      // Bounds the log of a transaction that reads the same keys over and over.
      fold();
      pointCount = foldedPoints = 0;
    }
  }

  /**
   * Records that [begin, end) holds exactly the pairs in {@code rows} (key, value, key, value...;
   * {@code rowCount} arrays used).
   */
  void recordRange(byte[] begin, byte[] end, byte[][] rows, int rowCount) {
    if (Bytes.compare(begin, end) >= 0) {
      return;
    }
    if (rangeCount - foldedRanges >= 256) {
      fold();
      rangeCount = foldedRanges = 0;
    }
    byte[][] entry = new byte[2 + rowCount][];
    entry[0] = begin;
    entry[1] = end;
    if (rowCount > 0) {
      System.arraycopy(rows, 0, entry, 2, rowCount);
    }
    if (ranges == null) {
      ranges = new byte[8][][];
    } else if (rangeCount == ranges.length) {
      ranges = Arrays.copyOf(ranges, rangeCount * 2);
    }
    ranges[rangeCount++] = entry;
  }

  private void fold() {
    if (known == null) {
      // Built only when a read needs it (rarely: once the read version is too old for storage).
      known = new TreeMap<>(Bytes.ORDER);
      values = new TreeMap<>(Bytes.ORDER);
    }
    for (; foldedPoints < pointCount; foldedPoints += 2) {
      byte[] after = points[foldedPoints];
      byte[] key = Arrays.copyOf(after, after.length - 1);
      addKnown(key, after);
      if (points[foldedPoints + 1] != null) {
        values.put(key, points[foldedPoints + 1]);
      }
    }
    for (; foldedRanges < rangeCount; foldedRanges++) {
      byte[][] entry = ranges[foldedRanges];
      addKnown(entry[0], entry[1]);
      for (int i = 2; i < entry.length; i += 2) {
        values.put(entry[i], entry[i + 1]);
      }
    }
  }

  private void addKnown(byte[] begin, byte[] end) {
    Map.Entry<byte[], byte[]> before = known.floorEntry(begin);
    if (before != null && Bytes.compare(before.getValue(), begin) >= 0) {
      begin = before.getKey();
      end = Bytes.max(end, before.getValue());
    }
    Map.Entry<byte[], byte[]> last = known.floorEntry(end);
    if (last != null && Bytes.compare(last.getKey(), begin) >= 0) {
      end = Bytes.max(end, last.getValue());
    }
    known.subMap(begin, true, end, true).clear();
    known.put(begin, end);
  }

  /** The known range holding {@code key}, or null. */
  Map.Entry<byte[], byte[]> rangeContaining(byte[] key) {
    fold();
    Map.Entry<byte[], byte[]> e = known.floorEntry(key);
    return e != null && Bytes.compare(key, e.getValue()) < 0 ? e : null;
  }

  /** The known range holding the keys just below {@code key} (its begin below key, its end at or after it), or null. */
  Map.Entry<byte[], byte[]> rangeEndingAtOrAfter(byte[] key) {
    fold();
    Map.Entry<byte[], byte[]> e = known.lowerEntry(key);
    return e != null && Bytes.compare(e.getValue(), key) >= 0 ? e : null;
  }

  boolean isKnown(byte[] key) {
    return rangeContaining(key) != null;
  }

  /** The stored value of a known key (null: absent). */
  byte[] value(byte[] key) {
    fold();
    return values.get(key);
  }

  /** The first present key in [from, to), or null. */
  Map.Entry<byte[], byte[]> firstIn(byte[] from, byte[] to) {
    fold();
    Map.Entry<byte[], byte[]> e = values.ceilingEntry(from);
    return e != null && Bytes.compare(e.getKey(), to) < 0 ? e : null;
  }

  /** The last present key in [from, to), or null. */
  Map.Entry<byte[], byte[]> lastIn(byte[] from, byte[] to) {
    fold();
    Map.Entry<byte[], byte[]> e = values.lowerEntry(to);
    return e != null && Bytes.compare(e.getKey(), from) >= 0 ? e : null;
  }
}
