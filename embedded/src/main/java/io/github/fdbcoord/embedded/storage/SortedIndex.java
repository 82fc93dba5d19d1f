package io.github.fdbcoord.embedded.storage;

import io.github.fdbcoord.embedded.bytes.Bytes;
import java.util.Iterator;
import java.util.NavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

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
   * What a reader sees: published whole, so the levels are consistent with each other.
   * {@code frozen} is the memtable a merge is folding into the middle array, or null.
   */
  private record State(ChainArray base, ChainArray middle, Memtable frozen, Memtable mem) {}

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
    this.state = new State(ChainArray.EMPTY, ChainArray.EMPTY, null, new Memtable(memtableSize));
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
            size = m.added.addAndGet(n) + m.runs.size();
            break;
          }
        } finally {
          m.writers.decrementAndGet();
        }
      }
    }
    if (size >= memtableSize && s.frozen() == null) {
      scheduleMerge();
    }
  }

  private void scheduleMerge() {
    if (!closed && mergeScheduled.compareAndSet(false, true)) {
      try {
        merger.execute(this::merge);
      } catch (RejectedExecutionException e) {
        // Closed meanwhile: the memtable keeps growing, as it does after close.
        mergeScheduled.set(false);
      }
    }
  }

  /**
   * Whether enough chains were killed since the last pass over the base that readers and range
   * clears crossing them (a log trimmed from its start crosses every key cleared before) cost more
   * than copying the base without them.
   */
  private boolean killedPileUp(ChainArray base) {
    return killedSinceMerge.get() >= Math.max(memtableSize, base.size / BASE_TO_MIDDLE_RATIO);
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
      // The middle array is rewritten here anyway: its killed chains go with it.
      ChainArray middle = before.middle().merge(singles, singles.length, true);
      middle = merge(middle, frozen.runs.frozenChains(), frozen.runs.frozenSize(), false);
      state = new State(before.base(), middle, null, during.mem());
      if (middle.size >= Math.max(memtableSize * MIN_MIDDLE_MEMTABLES, before.base().size / BASE_TO_MIDDLE_RATIO)
          || killedPileUp(before.base())) {
        ChainArray base = merge(before.base(), middle.chains, middle.size, true);
        state = new State(base, ChainArray.EMPTY, null, during.mem());
      }
      merges.incrementAndGet();
    } finally {
      mergeScheduled.set(false);
    }
    // Adds and kills that came while this merge ran could not start one; left alone, a memtable
    // overfilled or a pile of killed chains would wait for the next add or kill, which may never come.
    State after = state;
    if (after.mem().added.get() + after.mem().runs.size() >= memtableSize || killedPileUp(after.base())) {
      scheduleMerge();
    }
  }

  /**
   * {@code base} with {@code newer[0, count)} merged in; killed chains of the base are dropped when
   * {@code mayDropKilled} and enough were killed to pay for a pass over every chain.
   */
  private ChainArray merge(ChainArray base, VersionedStore.Chain[] newer, int count, boolean mayDropKilled) {
    boolean dropKilled = mayDropKilled && killedSinceMerge.get() >= Math.max(1, base.size / BASE_TO_MIDDLE_RATIO);
    if (dropKilled) {
      killedSinceMerge.set(0);
    }
    return base.merge(newer, count, dropKilled);
  }

  /**
   * Counts a killed chain: merges drop killed chains from the base once enough accumulated, and once
   * they pile up a merge starts without waiting for the memtable to fill (a workload that clears as
   * many keys as it adds, such as a log trimmed behind its head, would otherwise leave readers
   * crossing them until the next merge of the base).
   */
  void noteKilled() {
    killedSinceMerge.incrementAndGet();
    if (state.frozen() == null && killedPileUp(state.base())) {
      scheduleMerge();
    }
  }

  /** The chains with keys in [begin, end) ({@code end == null}: no bound), skipping killed ones. */
  Iterator<VersionedStore.Chain> chains(byte[] begin, byte[] end, boolean reverse) {
    State s = state;
    Memtable frozen = s.frozen();
    return new MergedChains(reverse, s.base().slice(begin, end, reverse), s.middle().slice(begin, end, reverse),
        skipList(frozen, begin, end, reverse), frozen == null ? null : frozen.runs.slice(begin, end, reverse),
        skipList(s.mem(), begin, end, reverse), s.mem().runs.slice(begin, end, reverse));
  }

  private static Iterator<VersionedStore.Chain> skipList(Memtable m, byte[] begin, byte[] end, boolean reverse) {
    if (m == null || m.map.isEmpty()) {
      return null;
    }
    NavigableMap<byte[], VersionedStore.Chain> r = end == null ? m.map.tailMap(begin, true)
        : m.map.subMap(begin, true, end, false);
    return (reverse ? r.descendingMap() : r).values().iterator();
  }

  /** Chains held in the merged levels, killed ones included (for tests). */
  int mergedChains() {
    State s = state;
    return s.base().size + s.middle().size;
  }

  /** Merges done so far (for tests). */
  int merges() {
    return merges.get();
  }
}
