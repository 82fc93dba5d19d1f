package io.github.fdbcoord.embedded.resolver;

import io.github.fdbcoord.embedded.bytes.Bytes;
import io.github.fdbcoord.embedded.bytes.KeyHash;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Iterator;
import java.util.Map;
import java.util.TreeMap;

/**
 * The resolver's memory: which key ranges were written (through write-conflict ranges) at which
 * commit version, split into epochs of consecutive versions: a commit is checked only against
 * epochs holding writes newer than its read version (usually the newest one or two), and history
 * older than the MVCC window is dropped an epoch at a time instead of key by key.
 *
 * <p>Within an epoch, writes are kept in two structures whose answers are OR-ed:
 *
 * <ul>
 *   <li>Single-key writes ({@code [k, k + \x00)}, nearly every write of a typical commit) go into an
 *       open-addressing hash table over parallel arrays: key, newest version written, hash. A write
 *       is a hash, a probe and two array stores, with no per-write object, no boxing and no tree
 *       rebalancing; this runs under the engine's single commit lock, so its cost caps commit
 *       throughput. A single-key read is one probe. A wider read needs the keys in order: the table
 *       keeps a sorted index of its entries, brought up to date lazily (only when a wide read comes,
 *       and only once enough unsorted entries have piled up), and scans the few unsorted ones.
 *   <li>Every other write goes into a step function over sorted boundaries, as FoundationDB's
 *       resolver keeps its skip list. It is created only when the epoch gets its first range write.
 * </ul>
 *
 * <p>Keys handed in are kept, not copied: the engine never modifies a conflict-range array.
 * Accessed only under the commit lock.
 */
public final class ConflictHistory {
  /**
   * Versions per epoch: 50 ms at FoundationDB's rate of 1,000,000 versions per second. Small
   * epochs keep the structures a commit writes into small (cache-resident); a transaction is
   * checked against the epochs since its read version, one or two for a typical short transaction.
   */
  static final long EPOCH_VERSIONS = 50_000L;

  /**
   * Unsorted single-key entries a wide read scans linearly before it sorts them into the index:
   * below this, scanning is cheaper than sorting, and a burst of writes between two wide reads
   * costs one sort instead of one per read.
   */
  static final int MAX_UNSORTED = 64;

  private static final int MIN_CAPACITY = 16;

  private static final class Epoch {
    final long firstVersion;
    long lastVersion;

    // Single-key writes: entry i is keys[i], written last (newest) at versions[i].
    byte[][] keys;
    long[] versions;
    int[] hashes;
    int count;
    /** Entry index + 1 per slot (0: empty); at most half full so probes stay short. */
    int[] slots;
    /** Entries [0, sortedCount) in key order; null until the first wide read. */
    int[] sorted;
    int sortedCount;
    /** Scratch for sorting the unsorted tail, kept to avoid reallocating it per merge. */
    int[] scratch;

    /**
     * Range writes, null until the first one. Entry {@code k -> v}: keys in [k, next boundary) last
     * written at v (0: not in this epoch).
     */
    TreeMap<byte[], Long> ranges;

    Epoch(long firstVersion, int expectedKeys) {
      this.firstVersion = firstVersion;
      this.lastVersion = firstVersion;
      int capacity = Math.max(MIN_CAPACITY, Integer.highestOneBit(Math.max(1, expectedKeys - 1)) << 1);
      keys = new byte[capacity][];
      versions = new long[capacity];
      hashes = new int[capacity];
      slots = new int[capacity * 2];
    }

    public boolean conflicts(byte[] begin, byte[] end, long readVersion) {
      return (count > 0 && keyConflicts(begin, end, readVersion))
          || (ranges != null && rangeConflicts(begin, end, readVersion));
    }

    /** Whether a single-key write in [begin, end) is newer than {@code readVersion}. */
    private boolean keyConflicts(byte[] begin, byte[] end, long readVersion) {
      if (Bytes.isKeyAfter(begin, end)) {
        int i = find(begin, KeyHash.hash(begin));
        return i >= 0 && versions[i] > readVersion;
      }
      return sortedKeyConflicts(begin, end, readVersion);
    }

    public void write(byte[] begin, byte[] end, long version) {
      lastVersion = version;
      if (Bytes.isKeyAfter(begin, end)) {
        writeKey(begin, version);
      } else {
        writeRange(begin, end, version);
      }
    }

    /** Index of the entry holding {@code key}, or -1. */
    private int find(byte[] key, int hash) {
      int mask = slots.length - 1;
      for (int s = hash & mask; ; s = (s + 1) & mask) {
        int i = slots[s] - 1;
        if (i < 0) {
          return -1;
        }
        if (hashes[i] == hash && Arrays.equals(keys[i], key)) {
          return i;
        }
      }
    }

    private void writeKey(byte[] key, long version) {
      int hash = KeyHash.hash(key);
      int mask = slots.length - 1;
      int s = hash & mask;
      for (; ; s = (s + 1) & mask) {
        int i = slots[s] - 1;
        if (i < 0) {
          break;
        }
        if (hashes[i] == hash && Arrays.equals(keys[i], key)) {
          // Versions only increase, so the latest write is the newest.
          versions[i] = version;
          return;
        }
      }
      if (count == keys.length) {
        grow();
        s = freeSlot(hash);
      }
      keys[count] = key;
      versions[count] = version;
      hashes[count] = hash;
      slots[s] = ++count;
    }

    private int freeSlot(int hash) {
      int mask = slots.length - 1;
      int s = hash & mask;
      while (slots[s] != 0) {
        s = (s + 1) & mask;
      }
      return s;
    }

    /** Doubles the entry arrays and rebuilds the slots from the stored hashes (no rehashing of keys). */
    private void grow() {
      int capacity = keys.length * 2;
      keys = Arrays.copyOf(keys, capacity);
      versions = Arrays.copyOf(versions, capacity);
      hashes = Arrays.copyOf(hashes, capacity);
      slots = new int[capacity * 2];
      for (int i = 0; i < count; i++) {
        slots[freeSlot(hashes[i])] = i + 1;
      }
    }

    /** {@link #keyConflicts} for a wider read: the keys in [begin, end) found in order. */
    private boolean sortedKeyConflicts(byte[] begin, byte[] end, long readVersion) {
      if (count - sortedCount > MAX_UNSORTED) {
        sortTail();
      }
      for (int j = firstAtOrAfter(begin); j < sortedCount; j++) {
        int i = sorted[j];
        if (Bytes.compare(keys[i], end) >= 0) {
          break;
        }
        if (versions[i] > readVersion) {
          return true;
        }
      }
      for (int i = sortedCount; i < count; i++) {
        if (versions[i] > readVersion && Bytes.compare(keys[i], begin) >= 0 && Bytes.compare(keys[i], end) < 0) {
          return true;
        }
      }
      return false;
    }

    /** Position in {@code sorted} of the first key at or after {@code key}, searching [0, to). */
    private int firstAtOrAfter(byte[] key) {
      return firstAtOrAfter(key, sortedCount);
    }

    private int firstAtOrAfter(byte[] key, int to) {
      int lo = 0;
      int hi = to;
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        if (Bytes.compare(keys[sorted[mid]], key) < 0) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      return lo;
    }

    /**
     * Sorts entries [sortedCount, count) and merges them into the index. Merging from the back
     * moves each block of the index once (one arraycopy) and places each new entry by binary
     * search, so a short tail into a long index costs about one memmove of the index.
     */
    private void sortTail() {
      int tail = count - sortedCount;
      if (sorted == null || sorted.length < count) {
        sorted = Arrays.copyOf(sorted == null ? new int[0] : sorted, keys.length);
      }
      if (scratch == null || scratch.length < tail * 2) {
        scratch = new int[Math.max(tail * 2, MAX_UNSORTED * 4)];
      }
      int[] run = scratch;
      for (int k = 0; k < tail; k++) {
        run[k] = sortedCount + k;
      }
      mergeSort(run, 0, tail, scratch, tail);
      int dst = count;
      int remaining = sortedCount;
      for (int k = tail - 1; k >= 0; k--) {
        int entry = run[k];
        int at = firstAtOrAfter(keys[entry], remaining);
        int moved = remaining - at;
        dst -= moved;
        System.arraycopy(sorted, at, sorted, dst, moved);
        remaining = at;
        sorted[--dst] = entry;
      }
      sortedCount = count;
    }

    /** Sorts {@code a[from, to)} by key, using {@code tmp[tmpFrom, tmpFrom + (to - from))} as scratch. */
    private void mergeSort(int[] a, int from, int to, int[] tmp, int tmpFrom) {
      int n = to - from;
      if (n <= 16) {
        for (int x = from + 1; x < to; x++) {
          int v = a[x];
          byte[] key = keys[v];
          int y = x - 1;
          while (y >= from && Bytes.compare(keys[a[y]], key) > 0) {
            a[y + 1] = a[y];
            y--;
          }
          a[y + 1] = v;
        }
        return;
      }
      int mid = from + n / 2;
      mergeSort(a, from, mid, tmp, tmpFrom);
      mergeSort(a, mid, to, tmp, tmpFrom);
      if (Bytes.compare(keys[a[mid - 1]], keys[a[mid]]) <= 0) {
        return;
      }
      int left = mid - from;
      System.arraycopy(a, from, tmp, tmpFrom, left);
      int l = tmpFrom;
      int lEnd = tmpFrom + left;
      int r = mid;
      int out = from;
      while (l < lEnd && r < to) {
        a[out++] = Bytes.compare(keys[tmp[l]], keys[a[r]]) <= 0 ? tmp[l++] : a[r++];
      }
      System.arraycopy(tmp, l, a, out, lEnd - l);
    }

    private boolean rangeConflicts(byte[] begin, byte[] end, long readVersion) {
      Map.Entry<byte[], Long> floor = ranges.floorEntry(begin);
      if (floor.getValue() > readVersion) {
        return true;
      }
      for (Long v : ranges.subMap(begin, false, end, false).values()) {
        if (v > readVersion) {
          return true;
        }
      }
      return false;
    }

    private void writeRange(byte[] begin, byte[] end, long version) {
      if (ranges == null) {
        ranges = new TreeMap<>(Bytes.ORDER);
        ranges.put(Bytes.EMPTY, 0L);
      }
      Map.Entry<byte[], Long> atEnd = ranges.floorEntry(end);
      if (Bytes.compare(atEnd.getKey(), end) != 0) {
        ranges.put(end, atEnd.getValue());
      }
      Map.Entry<byte[], Long> next = ranges.higherEntry(begin);
      if (next != null && Bytes.compare(next.getKey(), end) < 0) {
        ranges.subMap(begin, false, end, false).clear();
      }
      ranges.put(begin, version);
    }

    int size() {
      return count + (ranges == null ? 0 : ranges.size());
    }
  }

  /** Oldest first. */
  private final ArrayDeque<Epoch> epochs = new ArrayDeque<>();
  /** Newest version of any write dropped with its epoch; readers older than it cannot be checked. */
  private long forgottenVersion;

  /** Whether a transaction reading at {@code readVersion} can still be checked exactly. */
  public boolean canCheck(long readVersion) {
    return readVersion >= forgottenVersion;
  }

  /** Whether any write newer than {@code readVersion} touched [begin, end) (never, if the range is empty). */
  public boolean conflicts(byte[] begin, byte[] end, long readVersion) {
    if (Bytes.compare(begin, end) >= 0) {
      return false;
    }
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
  public void write(byte[] begin, byte[] end, long version) {
    if (Bytes.compare(begin, end) >= 0) {
      return;
    }
    Epoch current = epochs.peekLast();
    if (current == null || version - current.firstVersion >= EPOCH_VERSIONS) {
      // The previous epoch's key count predicts this one's: start at that size instead of
      // doubling up to it again.
      current = new Epoch(version, current == null ? 0 : current.count);
      epochs.addLast(current);
    }
    current.write(begin, end, version);
  }

  /** Forgets whole epochs whose writes are all at or below {@code version}. */
  public void forgetBefore(long version) {
    while (!epochs.isEmpty() && epochs.peekFirst().lastVersion <= version) {
      Epoch dropped = epochs.removeFirst();
      forgottenVersion = Math.max(forgottenVersion, dropped.lastVersion);
    }
  }

  /** Single-key entries plus range boundaries held, over all epochs (for tests and statistics). */
  int size() {
    int n = 0;
    for (Epoch e : epochs) {
      n += e.size();
    }
    return n;
  }
}
