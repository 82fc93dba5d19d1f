package io.github.fdbcoord.embedded.client;

import io.github.fdbcoord.embedded.engine.PendingWrite;
import io.github.fdbcoord.embedded.bytes.Bytes;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;

/**
 * A transaction's read- and write-conflict ranges, as FoundationDB's client computes them, flattened
 * into [begin, end) pairs for the resolver; and their bytes, which count toward the transaction's size.
 * Not thread-safe: the transaction's monitor guards it.
 */
final class ConflictRanges {
  private ArrayList<byte[]> reads = new ArrayList<>();
  private ArrayList<byte[]> writes = new ArrayList<>();
  private long bytes;

  List<byte[]> reads() {
    return reads;
  }

  List<byte[]> writes() {
    return writes;
  }

  /** Bytes of the ranges' keys, part of the transaction's approximate size. */
  long bytes() {
    return bytes;
  }

  void addRead(byte[] begin, byte[] end) {
    reads.add(begin);
    reads.add(end);
    bytes += begin.length + end.length;
  }

  void addWrite(byte[] begin, byte[] end) {
    writes.add(begin);
    writes.add(end);
    bytes += begin.length + end.length;
  }

  /**
   * Read conflicts for a range read: the parts of [begin, end) not covered by the transaction's own
   * sets and clears in {@code own} (reading those needs nothing from the database; all of it when
   * {@code rywDisabled}), as FoundationDB's read-your-writes client computes them.
   */
  void addRangeRead(byte[] begin, byte[] end, WriteMap own, boolean rywDisabled) {
    if (Bytes.compare(begin, end) >= 0) {
      return;
    }
    if (rywDisabled || (own.points == null && own.cleared == null)) {
      addRead(begin, end);
      return;
    }
    byte[] cursor = begin;
    NavigableMap<byte[], PendingWrite> points = own.points == null ? new TreeMap<>(Bytes.ORDER)
        : own.points.subMap(begin, true, end, false);
    NavigableMap<byte[], byte[]> ranges = own.cleared == null ? new TreeMap<>(Bytes.ORDER) : own.cleared;
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
        addRead(cursor, Bytes.min(k[0], end));
      }
      if (Bytes.compare(k[1], cursor) > 0) {
        cursor = k[1];
      }
      if (Bytes.compare(cursor, end) >= 0) {
        return;
      }
    }
    if (Bytes.compare(cursor, end) < 0) {
      addRead(cursor, end);
    }
  }

  /** Forgets every range (the transaction was reset for a retry); the lists handed to a commit stay as they were. */
  void reset() {
    reads = new ArrayList<>();
    writes = new ArrayList<>();
    bytes = 0;
  }
}
