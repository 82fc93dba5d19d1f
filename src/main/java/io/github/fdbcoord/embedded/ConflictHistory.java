package io.github.fdbcoord.embedded;

import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.Map;
import java.util.TreeMap;

/**
 * The resolver's memory: for every key, the newest commit version that wrote it (through a
 * write-conflict range). Kept, as FoundationDB's resolver keeps its skip list, as a step function
 * over sorted boundaries, but split into epochs of consecutive versions: a commit is checked only
 * against epochs holding writes newer than its read version (usually the newest one or two), and
 * history older than the MVCC window is dropped an epoch at a time instead of key by key.
 * Accessed only under the commit lock.
 */
final class ConflictHistory {
  /**
   * Versions per epoch: 50 ms at FoundationDB's rate of 1,000,000 versions per second. Small
   * epochs keep the map a commit writes into small (cache-resident); a transaction is checked
   * against the epochs since its read version, one or two for a typical short transaction.
   */
  static final long EPOCH_VERSIONS = 50_000L;

  /** Writes of one span of versions. Entry {@code k -> v}: keys in [k, next boundary) last written at v (0: not in this epoch). */
  private static final class Epoch {
    final long firstVersion;
    long lastVersion;
    final TreeMap<byte[], Long> steps = new TreeMap<>(Bytes.ORDER);

    Epoch(long firstVersion) {
      this.firstVersion = firstVersion;
      this.lastVersion = firstVersion;
      steps.put(Bytes.EMPTY, 0L);
    }

    boolean conflicts(byte[] begin, byte[] end, long readVersion) {
      Map.Entry<byte[], Long> floor = steps.floorEntry(begin);
      if (floor.getValue() > readVersion) {
        return true;
      }
      for (Long v : steps.subMap(begin, false, end, false).values()) {
        if (v > readVersion) {
          return true;
        }
      }
      return false;
    }

    void write(byte[] begin, byte[] end, long version) {
      if (Bytes.isKeyAfter(begin, end)) {
        // A single key: no boundary can lie strictly inside [begin, begin + \x00).
        Long before = steps.put(begin, version);
        if (before == null) {
          before = steps.lowerEntry(begin).getValue();
        }
        steps.putIfAbsent(end, before);
        lastVersion = version;
        return;
      }
      Map.Entry<byte[], Long> atEnd = steps.floorEntry(end);
      if (Bytes.compare(atEnd.getKey(), end) != 0) {
        steps.put(end, atEnd.getValue());
      }
      Map.Entry<byte[], Long> next = steps.higherEntry(begin);
      if (next != null && Bytes.compare(next.getKey(), end) < 0) {
        steps.subMap(begin, false, end, false).clear();
      }
      steps.put(begin, version);
      lastVersion = version;
    }
  }

  /** Oldest first. */
  private final ArrayDeque<Epoch> epochs = new ArrayDeque<>();
  /** Newest version of any write dropped with its epoch; readers older than it cannot be checked. */
  private long forgottenVersion;

  /** Whether a transaction reading at {@code readVersion} can still be checked exactly. */
  boolean canCheck(long readVersion) {
    return readVersion >= forgottenVersion;
  }

  /** Whether any write newer than {@code readVersion} touched [begin, end). */
  boolean conflicts(byte[] begin, byte[] end, long readVersion) {
    Iterator<Epoch> newestFirst = epochs.descendingIterator();
    while (newestFirst.hasNext()) {
      Epoch e = newestFirst.next();
      if (e.lastVersion <= readVersion) {
        return false;
      }
      if (e.conflicts(begin, end, readVersion)) {
        return true;
      }
    }
    return false;
  }

  /** Records that [begin, end) was written at {@code version}, the newest version so far. */
  void write(byte[] begin, byte[] end, long version) {
    if (Bytes.compare(begin, end) >= 0) {
      return;
    }
    Epoch current = epochs.peekLast();
    if (current == null || version - current.firstVersion >= EPOCH_VERSIONS) {
      current = new Epoch(version);
      epochs.addLast(current);
    }
    current.write(begin, end, version);
  }

  /** Forgets whole epochs whose writes are all at or below {@code version}. */
  void forgetBefore(long version) {
    while (!epochs.isEmpty() && epochs.peekFirst().lastVersion <= version) {
      Epoch dropped = epochs.removeFirst();
      forgottenVersion = Math.max(forgottenVersion, dropped.lastVersion);
    }
  }

  /** Boundaries held, over all epochs (for tests and statistics). */
  int size() {
    int n = 0;
    for (Epoch e : epochs) {
      n += e.steps.size();
    }
    return n;
  }
}
