package io.github.fdbcoord.embedded.storage;

import io.github.fdbcoord.embedded.bytes.Bytes;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Iterator;
import java.util.NavigableMap;
import java.util.NoSuchElementException;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.StampedLock;

/**
 * The store's chains in key order, for range reads, key selectors and range clears.
 *
 * <p>A single skip list over every key costs a cache miss per level on each insert, and inserting
 * new keys was the largest cost of a write commit. So the index is a small log-structured merge
 * tree: new chains go into a small memtable (cache-resident: a skip list for chains added singly,
 * a sorted array taking a commit's many new keys as one run); a background thread merges each
 * full memtable into a middle sorted array, and the middle array, once it holds a fraction of the
 * base, into the base sorted array. Merges are sequential passes and block copies. A reader merges
 * the base, the middle array, the memtable being merged (if any) and the current memtable.
 *
 * <p>Invariants: a key has at most one live chain (the hash index hands out one chain per key, and
 * a new chain for a key is created only after the old one was killed), and a chain in a newer
 * level was created after any chain of the same key in an older level (within a memtable, its two
 * structures are not ordered). So on equal keys the live chain wins, killed chains (whose tombstone
 * no reader can need) are skipped, and merges drop them.
 */
public final class SortedIndex implements AutoCloseable {
  /** Chains a memtable takes before it is merged: small enough to stay in the processor's cache. */
  static final int DEFAULT_MEMTABLE_SIZE = 8_192;
  /** The middle array is merged into the base once it holds this fraction of it (a merge copies the base). */
  private static final int BASE_TO_MIDDLE_RATIO = 16;
  /** ... and holds at least this many memtables. */
  private static final int MIN_MIDDLE_MEMTABLES = 8;

  /** How long the merge thread outlives its last merge: an idle index then holds no thread. */
  private static final long MERGER_KEEP_ALIVE_SECONDS = 10;

  /**
   * A memtable: a concurrent skip list for chains added one or a few at a time, and a sorted array
   * for long sorted runs (a commit's new keys), with a count of skip-list adders still writing.
   */
  private static final class Memtable {
    final ConcurrentSkipListMap<byte[], VersionedStore.Chain> map = new ConcurrentSkipListMap<>(Bytes.ORDER);
    /** Skip-list adders that may still put into this memtable; a merge waits for them after freezing it. */
    final AtomicInteger writers = new AtomicInteger();
    final AtomicInteger added = new AtomicInteger();
    final RunTable runs;

    Memtable(int capacity) {
      runs = new RunTable(capacity);
    }
  }

  /**
   * Chains in key order in a plain array, taking whole sorted runs at once: a run of a commit's keys
   * clusters (one client's strings, one sequence's ids), so each key is placed by a short gallop from
   * the previous one and each gap costs one block move, where a skip list pays a search, a node and
   * a cache miss per level for every key. Writers hold the write lock for that move, so small adds,
   * which would pay the move for one key and could queue behind a descheduled holder, go to the
   * skip list instead. Readers copy short slices out under an optimistic read and retry under the
   * read lock only when a writer got in between. Once frozen (handed to a merge) it never changes.
   */
  private static final class RunTable {
    private final StampedLock lock = new StampedLock();
    private VersionedStore.Chain[] chains;
    private int size;
    private boolean frozen;

    RunTable(int capacity) {
      chains = new VersionedStore.Chain[Math.max(16, capacity)];
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
  }

  /**
   * Immutable: chains sorted by key, no duplicate keys. Next to each chain, 8 bytes of its key
   * after the prefix all keys share: comparing those (sequential, in one array) settles almost every
   * comparison without touching the key itself, which is a cache miss.
   */
  private static final class Base {
    static final Base EMPTY = new Base(new VersionedStore.Chain[0], new long[0], 0, Bytes.EMPTY);
    private static final VarHandle BIG_ENDIAN_LONG =
        MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    final VersionedStore.Chain[] chains;
    /** {@code window(chains[i].bytes)}: ordered like the keys wherever the two differ. */
    final long[] windows;
    final int size;
    /** The bytes every key in the base starts with. */
    final byte[] common;

    Base(VersionedStore.Chain[] chains, long[] windows, int size, byte[] common) {
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
  }

  /**
   * What a reader sees: published whole, so the levels are consistent with each other.
   * {@code frozen} is the memtable a merge is folding into the middle array, or null.
   */
  private record State(Base base, Base middle, Memtable frozen, Memtable mem) {}

  private final int memtableSize;
  private volatile State state;
  private final AtomicBoolean mergeScheduled = new AtomicBoolean();
  private final AtomicInteger killedSinceMerge = new AtomicInteger();
  private final AtomicInteger merges = new AtomicInteger();
  /**
   * This index's merge thread, started on the first merge and stopped by {@link #close()}: merges are
   * rare, but one engine's long merge must not hold back another's.
   */
  private final ThreadPoolExecutor merger;
  private volatile boolean closed;

  SortedIndex() {
    this(DEFAULT_MEMTABLE_SIZE);
  }

  SortedIndex(int memtableSize) {
    this.memtableSize = memtableSize;
    this.state = new State(Base.EMPTY, Base.EMPTY, null, new Memtable(memtableSize));
    this.merger = new ThreadPoolExecutor(1, 1, MERGER_KEEP_ALIVE_SECONDS, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
        r -> {
          Thread t = new Thread(r, MERGE_THREAD_NAME);
          t.setDaemon(true);
          return t;
        });
    this.merger.allowCoreThreadTimeOut(true);
  }

  /**
   * Stops the merge thread, waiting for a merge in progress. The index stays readable and writable:
   * memtables just stop being merged. Idempotent.
   */
  @Override
  public void close() {
    closed = true;
    merger.shutdown();
    boolean interrupted = false;
    while (true) {
      try {
        if (merger.awaitTermination(1, TimeUnit.MINUTES)) {
          break;
        }
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /** The name of every index's merge thread. */
  static final String MERGE_THREAD_NAME = "fdb-embedded-index-merge";

  /** Runs at least this long go to a memtable's {@link RunTable}, shorter ones to its skip list. */
  static final int MIN_RUN = 8;

  /** Adds {@code chain} (or re-adds it: adding a chain twice is harmless). Any thread. */
  void add(VersionedStore.Chain chain) {
    addAll(new VersionedStore.Chain[] {chain}, 1);
  }

  /**
   * Adds {@code run[0, n)}, sorted by key with distinct keys (a commit's new chains, in the order of
   * its write set). Any thread.
   */
  void addAll(VersionedStore.Chain[] run, int n) {
    if (n == 0) {
      return;
    }
    int size;
    State s;
    if (n >= MIN_RUN) {
      do {
        s = state;
        // -1: a merge froze this memtable after we read the state; the new state has the next one.
        size = s.mem().runs.insert(run, n);
      } while (size < 0);
      size += s.mem().added.get();
    } else {
      while (true) {
        s = state;
        Memtable m = s.mem();
        m.writers.incrementAndGet();
        try {
          // Checked after announcing ourselves: a merge that froze this memtable already waits for us.
          if (state.mem() == m) {
            for (int i = 0; i < n; i++) {
              m.map.put(run[i].bytes, run[i]);
            }
            size = m.added.addAndGet(n) + m.runs.size;
            break;
          }
        } finally {
          m.writers.decrementAndGet();
        }
      }
    }
    if (size >= memtableSize && s.frozen() == null && !closed && mergeScheduled.compareAndSet(false, true)) {
      try {
        merger.execute(this::merge);
      } catch (RejectedExecutionException e) {
        // Closed meanwhile: the memtable keeps growing, as it does after close.
        mergeScheduled.set(false);
      }
    }
  }

  /**
   * Merges the current memtable into the middle array, and that into the base when it has grown;
   * runs on the merge thread only, which is the only thread replacing the state.
   */
  private void merge() {
    try {
      State before = state;
      Memtable frozen = before.mem();
      State during = new State(before.base(), before.middle(), frozen, new Memtable(memtableSize));
      state = during;
      for (int spins = 0; frozen.writers.get() != 0; spins++) {
        // An adder holds it for a few skip-list inserts, unless it was descheduled meanwhile.
        if (spins < 1_000) {
          Thread.onSpinWait();
        } else {
          Thread.yield();
        }
      }
      // Waits for a run adder inside it; those that come later see it frozen and use the new one.
      frozen.runs.freeze();
      VersionedStore.Chain[] singles = frozen.map.values().toArray(new VersionedStore.Chain[0]);
      Base middle = merge(before.middle(), singles, singles.length, false);
      middle = merge(middle, frozen.runs.frozenChains(), frozen.runs.frozenSize(), false);
      state = new State(before.base(), middle, null, during.mem());
      if (middle.size >= Math.max(memtableSize * MIN_MIDDLE_MEMTABLES, before.base().size / BASE_TO_MIDDLE_RATIO)) {
        Base base = merge(before.base(), middle.chains, middle.size, true);
        state = new State(base, Base.EMPTY, null, during.mem());
      }
      merges.incrementAndGet();
    } finally {
      mergeScheduled.set(false);
    }
  }

  /**
   * {@code base} with the first {@code count} of {@code newer}'s chains (sorted, newer than the
   * base's) merged in. Each new key's place is found by galloping from the previous one over the
   * windows, and the runs between are block-copied. Killed chains of {@code newer} are dropped;
   * those of the base only when {@code mayDropKilled} and enough were killed to pay for a pass over
   * every chain.
   */
  private Base merge(Base base, VersionedStore.Chain[] newer, int count, boolean mayDropKilled) {
    boolean dropKilled = mayDropKilled && killedSinceMerge.get() >= Math.max(1, base.size / BASE_TO_MIDDLE_RATIO);
    if (dropKilled) {
      killedSinceMerge.set(0);
    }
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
      windows[size++] = Base.window(c.bytes, n);
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
          windows[live++] = rewindow ? Base.window(c.bytes, n) : windows[j];
        }
      }
      Arrays.fill(chains, live, size, null);
      size = live;
    }
    return new Base(chains, windows, size, common);
  }

  /** The longest prefix shared by every key of the merged array: that of its first and last keys. */
  private static byte[] commonPrefix(Base base, VersionedStore.Chain[] newer, int count) {
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

  /** Counts a killed chain: merges drop killed chains from the base once enough accumulated. */
  void noteKilled() {
    killedSinceMerge.incrementAndGet();
  }

  /** The chains with keys in [begin, end) ({@code end == null}: no bound), skipping killed ones. */
  Iterator<VersionedStore.Chain> chains(byte[] begin, byte[] end, boolean reverse) {
    State s = state;
    Memtable frozen = s.frozen();
    return new Merged(reverse, slice(s.base(), begin, end, reverse), slice(s.middle(), begin, end, reverse),
        skipList(frozen, begin, end, reverse), runs(frozen, begin, end, reverse),
        skipList(s.mem(), begin, end, reverse), runs(s.mem(), begin, end, reverse));
  }

  private static Iterator<VersionedStore.Chain> slice(Base base, byte[] begin, byte[] end, boolean reverse) {
    if (base.size == 0) {
      return null;
    }
    int lo = base.lowerBound(begin);
    int hi = end == null ? base.size : base.lowerBound(end);
    return new BaseSlice(base, lo, hi, reverse);
  }

  private static Iterator<VersionedStore.Chain> skipList(Memtable m, byte[] begin, byte[] end, boolean reverse) {
    if (m == null || m.map.isEmpty()) {
      return null;
    }
    NavigableMap<byte[], VersionedStore.Chain> r = end == null ? m.map.tailMap(begin, true)
        : m.map.subMap(begin, true, end, false);
    return (reverse ? r.descendingMap() : r).values().iterator();
  }

  private static Iterator<VersionedStore.Chain> runs(Memtable m, byte[] begin, byte[] end, boolean reverse) {
    return m == null || m.runs.isEmpty() ? null : new RunSlice(m.runs, begin, end, reverse);
  }

  /**
   * A run table's chains in [begin, end), copied out a few at a time: each refill resumes after the
   * last key returned, so chains added meanwhile may or may not be seen, as with a skip list.
   */
  private static final class RunSlice implements Iterator<VersionedStore.Chain> {
    private static final int CHUNK = 32;
    private final RunTable table;
    private final byte[] begin;
    private final byte[] end;
    private final boolean reverse;
    private final VersionedStore.Chain[] buffer = new VersionedStore.Chain[CHUNK];
    private int position;
    private int count;
    private boolean exhausted;

    RunSlice(RunTable table, byte[] begin, byte[] end, boolean reverse) {
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

  /** Merges done so far (for tests). */
  int merges() {
    return merges.get();
  }

  private static final class BaseSlice implements Iterator<VersionedStore.Chain> {
    private final Base base;
    private final int lo;
    private final int hi;
    private final boolean reverse;
    private int next;

    BaseSlice(Base base, int lo, int hi, boolean reverse) {
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

  /** Merges levels given oldest first; on equal keys a live chain wins, else the newest level's. */
  private static final class Merged implements Iterator<VersionedStore.Chain> {
    private final Iterator<VersionedStore.Chain>[] levels;
    private final VersionedStore.Chain[] heads;
    private final int sign;
    private VersionedStore.Chain pending;

    @SafeVarargs
    Merged(boolean reverse, Iterator<VersionedStore.Chain>... levels) {
      this.levels = levels;
      this.heads = new VersionedStore.Chain[levels.length];
      this.sign = reverse ? -1 : 1;
      for (int l = 0; l < levels.length; l++) {
        heads[l] = advance(l);
      }
      pending = find();
    }

    private VersionedStore.Chain advance(int level) {
      Iterator<VersionedStore.Chain> it = levels[level];
      return it != null && it.hasNext() ? it.next() : null;
    }

    /** The next live chain in order, consuming every level's chain of the same key. */
    private VersionedStore.Chain find() {
      while (true) {
        int best = -1;
        for (int l = 0; l < heads.length; l++) {
          if (heads[l] == null) {
            continue;
          }
          // On equal keys l, the newer level, wins.
          if (best < 0 || Bytes.compare(heads[l].bytes, heads[best].bytes) * sign <= 0) {
            best = l;
          }
        }
        if (best < 0) {
          return null;
        }
        VersionedStore.Chain winner = heads[best];
        for (int l = 0; l < heads.length; l++) {
          if (heads[l] != null && (l == best || Arrays.equals(heads[l].bytes, winner.bytes))) {
            // A key has at most one live chain: it wins over killed ones in any level (the skip
            // list and the run table of one memtable are not ordered by age).
            if (winner.killed() && !heads[l].killed()) {
              winner = heads[l];
            }
            heads[l] = advance(l);
          }
        }
        if (!winner.killed()) {
          return winner;
        }
      }
    }

    @Override
    public boolean hasNext() {
      return pending != null;
    }

    @Override
    public VersionedStore.Chain next() {
      if (pending == null) {
        throw new NoSuchElementException();
      }
      VersionedStore.Chain c = pending;
      pending = find();
      return c;
    }
  }
}
