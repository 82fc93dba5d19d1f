package io.github.fdbcoord.embedded.storage;

import io.github.fdbcoord.embedded.bytes.Bytes;
import java.util.Arrays;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.concurrent.locks.StampedLock;

/**
 * Chains in key order in a plain array, taking whole sorted runs at once: a run of a commit's keys
 * clusters (one client's strings, one sequence's ids), so each key is placed by a short gallop from
 * the previous one and each gap costs one block move, where a skip list pays a search, a node and
 * a cache miss per level for every key. Writers hold the write lock for that move, so small adds,
 * which would pay the move for one key and could queue behind a descheduled holder, go to the
 * skip list instead. Readers copy short slices out under an optimistic read and retry under the
 * read lock only when a writer got in between. Once frozen (handed to a merge) it never changes.
 */
final class RunTable {
  private final StampedLock lock = new StampedLock();
  private VersionedStore.Chain[] chains;
  private int size;
  private boolean frozen;

  RunTable(int capacity) {
    chains = new VersionedStore.Chain[Math.max(16, capacity)];
  }

  /** The number of chains (racy: for deciding when to merge). */
  int size() {
    return size;
  }

  /** Whether nothing was added yet (racy: for skipping an empty level). */
  boolean isEmpty() {
    return size == 0;
  }

  /**
   * Adds {@code run[0, n)} (sorted, distinct keys); a chain whose key is present replaces the one
   * there. Returns the size afterwards, or -1 when it was frozen (add to the next memtable).
   */
  int insert(VersionedStore.Chain[] run, int n) {
    long stamp = lock.writeLock();
    try {
      if (frozen) {
        return -1;
      }
      int[] at = new int[n];
      VersionedStore.Chain[] fresh = new VersionedStore.Chain[n];
      int k = 0;
      int from = 0;
      for (int i = 0; i < n; i++) {
        VersionedStore.Chain c = run[i];
        int p = gallop(chains, size, from, c.bytes);
        if (p < size && Arrays.equals(chains[p].bytes, c.bytes)) {
          chains[p] = c;
        } else {
          at[k] = p;
          fresh[k++] = c;
        }
        from = p;
      }
      if (size + k > chains.length) {
        chains = Arrays.copyOf(chains, Math.max(chains.length * 2, size + k));
      }
      // From the back: each block of existing chains moves once, to its final place.
      int dst = size + k;
      int src = size;
      for (int j = k - 1; j >= 0; j--) {
        int moved = src - at[j];
        dst -= moved;
        System.arraycopy(chains, at[j], chains, dst, moved);
        src = at[j];
        chains[--dst] = fresh[j];
      }
      size += k;
      return size;
    } finally {
      lock.unlockWrite(stamp);
    }
  }

  /** Stops further inserts (they return -1); after this the contents never change. */
  void freeze() {
    long stamp = lock.writeLock();
    frozen = true;
    lock.unlockWrite(stamp);
  }

  /** The chains of a frozen memtable, sorted; only {@code [0, frozenSize())} are valid. */
  VersionedStore.Chain[] frozenChains() {
    return chains;
  }

  int frozenSize() {
    return size;
  }

  /**
   * Copies into {@code out} up to {@code out.length} chains in [begin, end) ({@code end == null}:
   * no bound), forward from the first key after {@code resumeAt} (null: from {@code begin}), or
   * backward from the last key before {@code resumeAt} (null: from {@code end}). Returns the count.
   */
  int copy(byte[] begin, byte[] end, boolean reverse, byte[] resumeAt, VersionedStore.Chain[] out) {
    long stamp = lock.tryOptimisticRead();
    if (stamp != 0) {
      int n = copyUnlocked(begin, end, reverse, resumeAt, out);
      if (lock.validate(stamp)) {
        return n;
      }
    }
    stamp = lock.readLock();
    try {
      return copyUnlocked(begin, end, reverse, resumeAt, out);
    } finally {
      lock.unlockRead(stamp);
    }
  }

  /**
   * Under an optimistic read the fields may be mid-update: every index is bounded by the array
   * actually read, every slot below the size holds some chain, and a torn result is discarded by
   * the caller's validation.
   */
  private int copyUnlocked(byte[] begin, byte[] end, boolean reverse, byte[] resumeAt, VersionedStore.Chain[] out) {
    VersionedStore.Chain[] a = chains;
    int n = Math.min(size, a.length);
    int count = 0;
    if (!reverse) {
      int i = resumeAt == null ? lowerBound(a, n, 0, begin) : upperBound(a, n, resumeAt);
      for (; i < n && count < out.length; i++) {
        VersionedStore.Chain c = a[i];
        if (c == null || (end != null && Bytes.compare(c.bytes, end) >= 0)) {
          break;
        }
        out[count++] = c;
      }
    } else {
      int i = (resumeAt != null ? lowerBound(a, n, 0, resumeAt) : end == null ? n : lowerBound(a, n, 0, end)) - 1;
      for (; i >= 0 && count < out.length; i--) {
        VersionedStore.Chain c = a[i];
        if (c == null || Bytes.compare(c.bytes, begin) < 0) {
          break;
        }
        out[count++] = c;
      }
    }
    return count;
  }

  /** The first index in [from, n) whose key is at or after {@code key}. */
  private static int lowerBound(VersionedStore.Chain[] a, int n, int from, byte[] key) {
    int lo = from;
    int hi = n;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      VersionedStore.Chain c = a[mid];
      if (c != null && Bytes.compare(c.bytes, key) < 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  /**
   * {@link #lowerBound} for a key known to be at or after index {@code from}'s: a commit's keys
   * cluster (one client's strings, one sequence's ids), so the next one is usually a few places on.
   */
  private static int gallop(VersionedStore.Chain[] a, int n, int from, byte[] key) {
    int lo = from;
    int step = 1;
    int hi = from;
    while (hi < n && Bytes.compare(a[hi].bytes, key) < 0) {
      lo = hi + 1;
      hi += step;
      step <<= 1;
    }
    return lowerBound(a, Math.min(hi, n), lo, key);
  }

  /** The first index whose key is after {@code key}. */
  private static int upperBound(VersionedStore.Chain[] a, int n, byte[] key) {
    int lo = 0;
    int hi = n;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      VersionedStore.Chain c = a[mid];
      if (c != null && Bytes.compare(c.bytes, key) <= 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  /** The chains in [begin, end) ({@code end == null}: no bound), or null when the table is empty. */
  Iterator<VersionedStore.Chain> slice(byte[] begin, byte[] end, boolean reverse) {
    return isEmpty() ? null : new Slice(this, begin, end, reverse);
  }

  /**
   * A run table's chains in [begin, end), copied out a few at a time: each refill resumes after the
   * last key returned, so chains added meanwhile may or may not be seen, as with a skip list.
   */
  private static final class Slice implements Iterator<VersionedStore.Chain> {
    private static final int CHUNK = 32;
    private final RunTable table;
    private final byte[] begin;
    private final byte[] end;
    private final boolean reverse;
    private final VersionedStore.Chain[] buffer = new VersionedStore.Chain[CHUNK];
    private int position;
    private int count;
    private boolean exhausted;

    Slice(RunTable table, byte[] begin, byte[] end, boolean reverse) {
      this.table = table;
      this.begin = begin;
      this.end = end;
      this.reverse = reverse;
      refill(null);
    }

    private void refill(byte[] resumeAt) {
      count = table.copy(begin, end, reverse, resumeAt, buffer);
      position = 0;
      exhausted = count < CHUNK;
    }

    @Override
    public boolean hasNext() {
      if (position == count && !exhausted) {
        refill(buffer[count - 1].bytes);
      }
      return position < count;
    }

    @Override
    public VersionedStore.Chain next() {
      if (!hasNext()) {
        throw new NoSuchElementException();
      }
      return buffer[position++];
    }
  }
}
