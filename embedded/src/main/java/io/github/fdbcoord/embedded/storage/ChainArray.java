package io.github.fdbcoord.embedded.storage;

import io.github.fdbcoord.embedded.bytes.Bytes;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * Immutable: chains sorted by key, no duplicate keys. Next to each chain, 8 bytes of its key
 * after the prefix all keys share: comparing those (sequential, in one array) settles almost every
 * comparison without touching the key itself, which is a cache miss.
 */
final class ChainArray {
  static final ChainArray EMPTY = new ChainArray(new VersionedStore.Chain[0], new long[0], 0, Bytes.EMPTY);
  private static final VarHandle BIG_ENDIAN_LONG =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

  final VersionedStore.Chain[] chains;
  /** {@code window(chains[i].bytes)}: ordered like the keys wherever the two differ. */
  final long[] windows;
  final int size;
  /** The bytes every key in the array starts with. */
  final byte[] common;

  ChainArray(VersionedStore.Chain[] chains, long[] windows, int size, byte[] common) {
    this.chains = chains;
    this.windows = windows;
    this.size = size;
    this.common = common;
  }

  /** The 8 bytes of {@code key} after the common prefix, zero-padded, as an unsigned number. */
  static long window(byte[] key, int from) {
    if (key.length >= from + 8) {
      return (long) BIG_ENDIAN_LONG.get(key, from);
    }
    long w = 0;
    for (int i = from; i < from + 8; i++) {
      w = w << 8 | (i < key.length ? key[i] & 0xff : 0);
    }
    return w;
  }

  /** The first index whose key is at or after {@code key}. */
  int lowerBound(byte[] key) {
    return gallop(0, key);
  }

  /** {@link #lowerBound} searching from {@code from}, where the answer is known to be at or after. */
  int gallop(int from, byte[] key) {
    int n = common.length;
    if (key.length < n || !Arrays.equals(key, 0, n, common, 0, n)) {
      // Every base key starts with the common prefix: this key sorts before or after all of them.
      return Bytes.compare(key, common) < 0 ? from : size;
    }
    long w = window(key, n);
    int step = 1;
    int hi = from;
    while (hi < size && compareAt(hi, key, w) < 0) {
      from = hi + 1;
      hi += step;
      step <<= 1;
    }
    int lo = from;
    hi = Math.min(hi, size);
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (compareAt(mid, key, w) < 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }

  private int compareAt(int i, byte[] key, long window) {
    int c = Long.compareUnsigned(windows[i], window);
    return c != 0 ? c : Bytes.compare(chains[i].bytes, key);
  }

  /** The chains in [begin, end) ({@code end == null}: no bound), or null when the array is empty. */
  Iterator<VersionedStore.Chain> slice(byte[] begin, byte[] end, boolean reverse) {
    if (size == 0) {
      return null;
    }
    int lo = lowerBound(begin);
    int hi = end == null ? size : lowerBound(end);
    return new Slice(this, lo, hi, reverse);
  }

  /**
   * This array with the first {@code count} of {@code newer}'s chains (sorted, newer than
   * this array's) merged in. Each new key's place is found by galloping from the previous one over the
   * windows, and the runs between are block-copied. Killed chains of {@code newer} are dropped;
   * those of this array only when {@code dropKilled}.
   */
  ChainArray merge(VersionedStore.Chain[] newer, int count, boolean dropKilled) {
    ChainArray base = this;
    if (count == 0 && (!dropKilled || base.size == 0)) {
      return base;
    }
    byte[] common = commonPrefix(base, newer, count);
    int n = common.length;
    boolean rewindow = n != base.common.length;
    int capacity = base.size + count;
    VersionedStore.Chain[] chains = new VersionedStore.Chain[capacity];
    long[] windows = new long[capacity];
    int size = 0;
    int i = 0;
    for (int k = 0; k < count; k++) {
      VersionedStore.Chain c = newer[k];
      int p = base.gallop(i, c.bytes);
      System.arraycopy(base.chains, i, chains, size, p - i);
      System.arraycopy(base.windows, i, windows, size, p - i);
      size += p - i;
      if (c.killed()) {
        // Dropped, and the older level's chain of the key (if any) kept: it may be the key's live
        // chain, when the two memtable structures of one merge both held the key.
        i = p;
        continue;
      }
      i = p < base.size && Arrays.equals(base.chains[p].bytes, c.bytes) ? p + 1 : p;
      chains[size] = c;
      windows[size++] = window(c.bytes, n);
    }
    System.arraycopy(base.chains, i, chains, size, base.size - i);
    System.arraycopy(base.windows, i, windows, size, base.size - i);
    size += base.size - i;
    if (dropKilled || rewindow) {
      int live = 0;
      for (int j = 0; j < size; j++) {
        VersionedStore.Chain c = chains[j];
        if (!c.killed()) {
          chains[live] = c;
          windows[live++] = rewindow ? window(c.bytes, n) : windows[j];
        }
      }
      Arrays.fill(chains, live, size, null);
      size = live;
    }
    return new ChainArray(chains, windows, size, common);
  }

  /** The longest prefix shared by every key of the merged array: that of its first and last keys. */
  private static byte[] commonPrefix(ChainArray base, VersionedStore.Chain[] newer, int count) {
    byte[] first;
    byte[] last;
    if (count == 0) {
      first = base.chains[0].bytes;
      last = base.chains[base.size - 1].bytes;
    } else if (base.size == 0) {
      first = newer[0].bytes;
      last = newer[count - 1].bytes;
    } else {
      first = Bytes.min(base.chains[0].bytes, newer[0].bytes);
      last = Bytes.max(base.chains[base.size - 1].bytes, newer[count - 1].bytes);
    }
    int shared = Arrays.mismatch(first, last);
    return shared < 0 ? first : Arrays.copyOf(first, shared);
  }

  private static final class Slice implements Iterator<VersionedStore.Chain> {
    private final ChainArray base;
    private final int lo;
    private final int hi;
    private final boolean reverse;
    private int next;

    Slice(ChainArray base, int lo, int hi, boolean reverse) {
      this.base = base;
      this.lo = lo;
      this.hi = hi;
      this.reverse = reverse;
      this.next = reverse ? hi - 1 : lo;
    }

    @Override
    public boolean hasNext() {
      return reverse ? next >= lo : next < hi;
    }

    @Override
    public VersionedStore.Chain next() {
      if (!hasNext()) {
        throw new NoSuchElementException();
      }
      VersionedStore.Chain c = base.chains[next];
      next += reverse ? -1 : 1;
      return c;
    }
  }
}
