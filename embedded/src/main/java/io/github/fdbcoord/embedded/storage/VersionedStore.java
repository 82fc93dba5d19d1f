package io.github.fdbcoord.embedded.storage;

import io.github.fdbcoord.embedded.bytes.Bytes;
import io.github.fdbcoord.embedded.bytes.KeyHash;
import org.rocksdb.RocksIterator;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * The multi-version key-value data: for each key a short chain of (version, value or tombstone),
 * newest first, found by hash for point reads and writes and through a {@link SortedIndex} for
 * ranges. Readers walk chains lock-free at their read version; only the committer (holding the
 * engine's commit lock) adds versions and trims chains.
 */
public final class VersionedStore implements AutoCloseable {
  /**
   * One version of one key; {@code value == null} is a tombstone. Written before it is published
   * (through a chain's volatile head or a newer version's volatile link), never after.
   */
  static class Version {
    long version;
    public byte[] value;
    volatile Version older;
    /** True when older versions were trimmed away, so reads below this one are too old. */
    volatile boolean trimmedBelow;

    Version(long version, byte[] value, Version older) {
      this.version = version;
      this.value = value;
      this.older = older;
    }

    /** For a chain, whose own fields hold its key's first version. */
    Version() {}
  }

  /** Thrown internally when a read needs a version that was trimmed: maps to 1007. */
  public static final class TooOld extends RuntimeException {
    static final TooOld INSTANCE = new TooOld();

    private TooOld() {
      super(null, null, false, false);
    }
  }

  /**
   * A key's versions, newest first. The head is replaced in place (one lookup per write); a chain
   * with no head exists only between a commit preparing it and applying to it, and reads as absent.
   * The chain is itself its key's first (oldest) version: most keys are written once within the
   * MVCC window, and a separate version object would be one more long-lived object per key for the
   * collector to copy.
   */
  public static final class Chain extends Version {
    private static final AtomicIntegerFieldUpdater<Chain> PENDING =
        AtomicIntegerFieldUpdater.newUpdater(Chain.class, "pending");

    public final byte[] bytes;
    private final int hash;
    volatile Version head;
    /** Commits that prepared this chain and have not applied yet: it must stay in the maps. */
    volatile int pending;
    /** Whether the chain is in the sorted index (its creator adds it there after the hash index). */
    volatile boolean sorted;
    /** Versions in the chain, and the length at which it is next trimmed (committer only). */
    int length;
    int trimAt = 8;

    /** An empty chain, for a commit to write into; {@code hash} is {@link KeyHash#hash}{@code (key)}. */
    Chain(byte[] key, int hash) {
      this.bytes = key;
      this.hash = hash;
    }

    @Override
    public int hashCode() {
      return hash;
    }

    byte[] latest() {
      Version h = head;
      return h == null ? null : h.value;
    }

    /** Pins the chain for a commit; false when the sweeper has already removed it. */
    boolean tryPin() {
      while (true) {
        int p = pending;
        if (p < 0) {
          return false;
        }
        if (PENDING.compareAndSet(this, p, p + 1)) {
          return true;
        }
      }
    }

    /** Marks an unpinned chain removed, so no commit can pin it afterwards. */
    boolean tryKill() {
      return PENDING.compareAndSet(this, 0, -1);
    }

    int unpinCount() {
      return PENDING.decrementAndGet(this);
    }

    /** Whether the chain was removed; a removed key's next write creates a new chain. */
    boolean killed() {
      return pending < 0;
    }
  }

  /** Sorted, for range reads, key selectors and range clears. */
  private final SortedIndex sorted;
  /**
   * The same chains by hash, for point reads and writes: a sorted lookup over a large key
   * space costs a cache miss per level, a hash lookup one or two.
   */
  private final ChainTable index = new ChainTable();

  /**
   * The state below the MVCC window (durable mode), or null when the window is all there is (in
   * memory): then a key without a chain is absent.
   */
  private final RocksStorage base;
  /**
   * Range clears within the window that were too large to record as one tombstone per stored key
   * (see {@link #clearRange}); oldest first, replaced as a whole (copy on write).
   */
  private volatile RangeClear[] windowClears = new RangeClear[0];
  /**
   * The newest version through which window state is being dropped because the storage holds it:
   * a range cursor whose storage view is older must take a newer one before trusting it.
   */
  private volatile long evictingThrough;
  /** Chains whose eviction found them pinned, tried again at the next eviction (applier only). */
  private final ArrayList<Chain> evictLater = new ArrayList<>();

  /** At most this many stored keys of a range clear get tombstones; a larger clear is kept as a range. */
  static final int MATERIALIZED_CLEAR_LIMIT = 256;

  private record RangeClear(long version, byte[] begin, byte[] end) {}

  public VersionedStore() {
    this(new SortedIndex(), null);
  }

  VersionedStore(SortedIndex sorted) {
    this(sorted, null);
  }

  public VersionedStore(RocksStorage base) {
    this(new SortedIndex(), base);
  }

  VersionedStore(SortedIndex sorted, RocksStorage base) {
    this.sorted = sorted;
    this.base = base;
  }

  public RocksStorage base() {
    return base;
  }

  /**
   * Stops the store's background thread (the sorted index's merger). The {@link #base()} storage is
   * not closed: whoever opened it closes it. Idempotent.
   */
  @Override
  public void close() {
    sorted.close();
  }

  private Chain chain(byte[] key) {
    return index.get(key, KeyHash.hash(key));
  }

  /**
   * The chain {@code key}'s next version goes into, created (empty) if needed and pinned until
   * {@link #unpin}. Runs before the commit lock is taken, so the map lookups and inserts of a
   * commit happen outside its critical section.
   */
  Chain prepare(byte[] key) {
    Chain[] one = new Chain[1];
    prepareAll(List.of(key), one);
    return one[0];
  }

  /**
   * {@link #prepare} for each of {@code keys} (sorted, distinct) into {@code out}, adding the new
   * chains to the sorted index as one run.
   */
  public void prepareAll(Iterable<byte[]> keys, Chain[] out) {
    Chain[] created = null;
    int createdCount = 0;
    int i = 0;
    for (byte[] key : keys) {
      int hash = KeyHash.hash(key);
      Chain c;
      while (true) {
        c = index.get(key, hash);
        if (c == null) {
          Chain fresh = new Chain(key, hash);
          fresh.pending = 1;
          c = index.putIfAbsent(fresh);
          if (c == null) {
            if (created == null) {
              created = new Chain[out.length - i];
            }
            created[createdCount++] = fresh;
            c = fresh;
            break;
          }
        }
        if (c.tryPin()) {
          break;
        }
        // Removed by the sweeper between the lookup and the pin: look again.
        index.remove(c);
      }
      out[i++] = c;
    }
    if (createdCount > 0) {
      sorted.addAll(created, createdCount);
      for (int k = 0; k < createdCount; k++) {
        created[k].sorted = true;
      }
    }
  }

  /** Releases a prepared chain; one left empty is queued for the sweeper. */
  public void unpin(Chain c) {
    if (c.unpinCount() == 0 && c.head == null) {
      synchronized (emptied) {
        emptied.add(c);
      }
    }
  }

  private final ArrayList<Chain> emptied = new ArrayList<>();

  /**
   * Removes a killed chain from the hash index; the sorted index skips killed chains and drops
   * them at its next merge. Caller holds the commit lock.
   */
  private void remove(Chain chain) {
    index.remove(chain);
    sorted.noteKilled();
  }

  /** The value of {@code key} at {@code version}, or null when absent. */
  public byte[] get(byte[] key, long version) {
    Chain c = chain(key);
    if (c != null) {
      Version v = versionAt(c.head, version);
      if (v != null) {
        return v.value;
      }
    }
    return base == null ? null : stored(key, version);
  }

  /**
   * The value of a key that has no version at or below {@code readVersion} in the window. The order
   * matters: the chain was read first, then the window's range clears, then the storage. The
   * applier writes the storage before it drops clears and then chains, so a reader that missed a
   * dropped chain misses the clears dropped with it and finds both in the storage.
   */
  private byte[] stored(byte[] key, long readVersion) {
    if (clearedInWindow(key, readVersion)) {
      return null;
    }
    byte[] value = base.get(key);
    base.checkReadable(readVersion);
    return value;
  }

  /** The newest value of {@code key} (committed, possibly not yet durable), or null. Caller holds the commit lock. */
  public byte[] latest(byte[] key) {
    Chain c = chain(key);
    return c == null ? latestStored(key) : latest(c);
  }

  /** The newest value of {@code chain}'s key, looking below the window when it holds none. Caller holds the commit lock. */
  public byte[] latest(Chain chain) {
    Version h = chain.head;
    if (h != null) {
      return h.value;
    }
    return latestStored(chain.bytes);
  }

  private byte[] latestStored(byte[] key) {
    if (base == null || clearedInWindow(key, Long.MAX_VALUE)) {
      return null;
    }
    return base.get(key);
  }

  /** Whether a range clear the window keeps as a range covers {@code key} at {@code readVersion}. */
  boolean clearedInWindow(byte[] key, long readVersion) {
    for (RangeClear c : windowClears) {
      if (c.version <= readVersion && Bytes.compare(key, c.begin) >= 0 && Bytes.compare(key, c.end) < 0) {
        return true;
      }
    }
    return false;
  }

  /**
   * The newest version at or below {@code version}, or null when the chain has none (below the
   * window the key may still hold a value).
   */
  static Version versionAt(Version head, long version) {
    Version v = head;
    while (v != null) {
      if (v.version <= version) {
        return v;
      }
      if (v.trimmedBelow) {
        throw TooOld.INSTANCE;
      }
      v = v.older;
    }
    return null;
  }

  /**
   * Records {@code value} (null clears) for {@code key} at {@code version}; false when there was
   * nothing to do (clearing an absent key). Caller holds the commit lock.
   */
  public boolean put(byte[] key, byte[] value, long version, long oldestReadable) {
    if (value == null && base == null) {
      Chain chain = chain(key);
      return chain != null && put(chain, null, version, oldestReadable);
    }
    // Through prepare, so a commit preparing the same key concurrently finds the same chain.
    Chain chain = prepare(key);
    try {
      return put(chain, value, version, oldestReadable);
    } finally {
      unpin(chain);
    }
  }

  /**
   * Adds a version to {@code chain}, trimming versions that no reader at or above
   * {@code oldestReadable} can need. Returns false when there was nothing to do (clearing an
   * absent key). Caller holds the commit lock.
   */
  public boolean put(Chain chain, byte[] value, long version, long oldestReadable) {
    Version head = chain.head;
    // Below a durable window, a key without versions may still be stored: record its clear.
    if (value == null && (head == null ? base == null : head.value == null)) {
      return false;
    }
    if (!chain.sorted) {
      // Pinned by this commit before its creator reached the sorted index: range reads must see it.
      sorted.add(chain);
      chain.sorted = true;
    }
    Version fresh;
    if (head == null) {
      chain.version = version;
      chain.value = value;
      fresh = chain;
    } else {
      fresh = new Version(version, value, head);
    }
    chain.head = fresh;
    // Trimming walks the chain, so do it only when the chain has doubled: amortized constant
    // work per write even for a key rewritten thousands of times within the MVCC window.
    if (++chain.length >= chain.trimAt) {
      chain.length = trim(fresh, oldestReadable);
      chain.trimAt = Math.max(8, chain.length * 2);
    }
    if (value == null) {
      tombstones.add(new Tombstone(chain, version));
    }
    return true;
  }

  /** A cleared key, remembered so the sweeper can drop it once no reader needs it. */
  private static final class Tombstone {
    final Chain chain;
    final long version;

    Tombstone(Chain chain, long version) {
      this.chain = chain;
      this.version = version;
    }
  }

  private final ArrayDeque<Tombstone> tombstones = new ArrayDeque<>();

  /**
   * Keeps every version above {@code oldestReadable} and the newest one at or below it; returns
   * the number of versions kept.
   */
  private static int trim(Version head, long oldestReadable) {
    int kept = 0;
    Version v = head;
    while (v != null) {
      kept++;
      if (v.version <= oldestReadable) {
        if (v.older != null) {
          v.older = null;
          v.trimmedBelow = true;
        }
        return kept;
      }
      v = v.older;
    }
    return kept;
  }

  /**
   * The chains of keys in [begin, end) in key order ({@code end == null}: to the end of the key
   * space); a chain created after the call may or may not be included.
   */
  Iterator<Chain> chains(byte[] begin, byte[] end, boolean reverse) {
    return sorted.chains(begin, end, reverse);
  }

  /** The newest version through which window state is being dropped into the storage. */
  long evictingThrough() {
    return evictingThrough;
  }

  /**
   * Clears [begin, end) at {@code version}: a tombstone on every chain in the range and, below a
   * durable window, on every stored key in it, unless there are more than
   * {@link #MATERIALIZED_CLEAR_LIMIT} of those: then the clear is kept as a range until the storage
   * holds it. Below a durable window, returns every key the clear reached (window and storage) when
   * they are at most {@link #MATERIALIZED_CLEAR_LIMIT}, so that the caller can log point clears
   * instead of a range (each logged range becomes a RocksDB range tombstone, which every later
   * iterator pays for until compaction); else null. Caller holds the commit lock.
   */
  public List<byte[]> clearRange(byte[] begin, byte[] end, long version, long oldestReadable) {
    List<byte[]> reached = base == null ? null : new ArrayList<>();
    for (Iterator<Chain> it = chains(begin, end, false); it.hasNext(); ) {
      Chain chain = it.next();
      put(chain, null, version, oldestReadable);
      if (reached != null) {
        reached.add(chain.bytes);
      }
    }
    if (base == null) {
      return null;
    }
    List<byte[]> stored = new ArrayList<>();
    try (RocksIterator it = base.iterator()) {
      for (it.seek(begin); base.valid(it) && stored.size() <= MATERIALIZED_CLEAR_LIMIT; it.next()) {
        byte[] key = it.key();
        if (Bytes.compare(key, end) >= 0) {
          break;
        }
        stored.add(key);
      }
    }
    if (stored.size() > MATERIALIZED_CLEAR_LIMIT) {
      RangeClear[] old = windowClears;
      RangeClear[] grown = Arrays.copyOf(old, old.length + 1);
      grown[old.length] = new RangeClear(version, begin, end);
      windowClears = grown;
      return null;
    }
    for (byte[] key : stored) {
      Chain chain = prepare(key);
      try {
        put(chain, null, version, oldestReadable);
      } finally {
        unpin(chain);
      }
    }
    reached.addAll(stored);
    return reached.size() <= MATERIALIZED_CLEAR_LIMIT ? reached : null;
  }

  /**
   * Drops window state the storage now holds through {@code durable}: first the range clears, then
   * the chains of {@code keys} and of the keys in {@code ranges} (flattened [begin, end) pairs)
   * whose newest version is at or below it. Caller holds the commit lock; the storage write is done.
   */
  public int evict(long durable, List<byte[]> keys, List<byte[]> ranges) {
    evictingThrough = durable;
    RangeClear[] clears = windowClears;
    int keep = 0;
    while (keep < clears.length && clears[keep].version <= durable) {
      keep++;
    }
    if (keep > 0) {
      windowClears = Arrays.copyOfRange(clears, keep, clears.length);
    }
    int evicted = 0;
    if (!evictLater.isEmpty()) {
      List<Chain> retry = new ArrayList<>(evictLater);
      evictLater.clear();
      for (Chain c : retry) {
        evicted += evict(c, durable) ? 1 : 0;
      }
    }
    for (byte[] key : keys) {
      Chain c = chain(key);
      evicted += c != null && evict(c, durable) ? 1 : 0;
    }
    for (int i = 0; i < ranges.size(); i += 2) {
      for (Iterator<Chain> it = chains(ranges.get(i), ranges.get(i + 1), false); it.hasNext(); ) {
        evicted += evict(it.next(), durable) ? 1 : 0;
      }
    }
    return evicted;
  }

  private boolean evict(Chain chain, long durable) {
    Version head = chain.head;
    if (head == null || head.version > durable || chain.killed()) {
      return false;
    }
    if (chain.tryKill()) {
      remove(chain);
      return true;
    }
    // Pinned by a commit in flight; if that commit writes, its apply evicts the chain again.
    evictLater.add(chain);
    return false;
  }

  /** Chains in the window (live or not): what heap use grows with. */
  public int windowChains() {
    return index.size();
  }

  /**
   * The live pairs of [begin, end) at {@code readVersion} in key order ({@code end == null}: to the
   * end of the key space), merging the window with the storage below it. Close it when done.
   */
  public Cursor cursor(byte[] begin, byte[] end, boolean reverse, long readVersion) {
    return new Cursor(this, begin, end, reverse, readVersion);
  }

  /** See {@link #cursor}. {@link #next()} moves to the next live pair, then {@link #key} and {@link #value} hold it. */
  public static final class Cursor extends RangeCursor {
    private Cursor(VersionedStore store, byte[] begin, byte[] end, boolean reverse, long readVersion) {
      super(store, begin, end, reverse, readVersion);
    }
  }

  /**
   * Drops cleared keys whose tombstone no reader can need any more (oldest first), and chains
   * prepared by commits that never applied. Caller holds the commit lock.
   */
  public int sweepTombstones(long oldestReadable) {
    if (base != null) {
      // Only clears the readers know to be in the storage: a cursor whose view is older than a dropped
      // tombstone's clear renews its view when evictingThrough passes it, and would otherwise read the
      // key's old value from that view.
      oldestReadable = Math.min(oldestReadable, evictingThrough);
    }
    int removed = 0;
    while (!tombstones.isEmpty() && tombstones.peekFirst().version <= oldestReadable) {
      Chain chain = tombstones.removeFirst().chain;
      Version head = chain.head;
      if (head != null && head.value == null && head.version <= oldestReadable && chain.tryKill()) {
        remove(chain);
        removed++;
      }
    }
    List<Chain> empty;
    synchronized (emptied) {
      if (emptied.isEmpty()) {
        return removed;
      }
      empty = new ArrayList<>(emptied);
      emptied.clear();
    }
    for (Chain chain : empty) {
      if (chain.head == null && chain.tryKill()) {
        remove(chain);
        removed++;
      }
    }
    return removed;
  }
}
