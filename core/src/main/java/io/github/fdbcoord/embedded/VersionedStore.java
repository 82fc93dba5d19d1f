package io.github.fdbcoord.embedded;

import java.util.Iterator;
import java.util.List;

/**
 * The multi-version key-value data: for each key a short chain of (version, value or tombstone),
 * newest first, found by hash for point reads and writes and through a {@link SortedIndex} for
 * ranges. Readers walk chains lock-free at their read version; only the committer (holding the
 * engine's commit lock) adds versions and trims chains.
 */
final class VersionedStore {
  /**
   * One version of one key; {@code value == null} is a tombstone. Written before it is published
   * (through a chain's volatile head or a newer version's volatile link), never after.
   */
  static class Version {
    long version;
    byte[] value;
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
  static final class TooOld extends RuntimeException {
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
  static final class Chain extends Version {
    private static final java.util.concurrent.atomic.AtomicIntegerFieldUpdater<Chain> PENDING =
        java.util.concurrent.atomic.AtomicIntegerFieldUpdater.newUpdater(Chain.class, "pending");

    final byte[] bytes;
    private final int hash;
    volatile Version head;
    /** Commits that prepared this chain and have not applied yet: it must stay in the maps. */
    volatile int pending;
    /** Whether the chain is in the sorted index (its creator adds it there after the hash index). */
    volatile boolean sorted;
    /** Versions in the chain, and the length at which it is next trimmed (committer only). */
    int length;
    int trimAt = 8;

    /** An empty chain, for a commit to write into; {@code hash} is {@link HashKey#hash}{@code (key)}. */
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

  /** The hash of keys in the hash indexes (the store's {@link ChainTable}, the resolver's tables). */
  static final class HashKey {
    private HashKey() {}

    private static final java.lang.invoke.VarHandle LONGS =
        java.lang.invoke.MethodHandles.byteArrayViewVarHandle(long[].class, java.nio.ByteOrder.LITTLE_ENDIAN);

    /**
     * A well-mixed hash: keys often differ only in a few trailing bytes (tuple-encoded integers),
     * which {@code Arrays.hashCode} maps onto few buckets.
     */
    static int hash(byte[] b) {
      long h = 0x9E3779B97F4A7C15L ^ b.length;
      int i = 0;
      for (; i + 8 <= b.length; i += 8) {
        // A multiply and a fold per word; the final mix spreads what is left.
        h = (h ^ (long) LONGS.get(b, i)) * 0x9E3779B97F4A7C15L;
        h ^= h >>> 29;
      }
      long tail = 0;
      for (int shift = 0; i < b.length; i++, shift += 8) {
        tail |= (b[i] & 0xffL) << shift;
      }
      h = mix(h ^ tail);
      return (int) (h ^ (h >>> 32));
    }

    private static long mix(long z) {
      z = (z ^ (z >>> 33)) * 0xff51afd7ed558ccdL;
      z = (z ^ (z >>> 33)) * 0xc4ceb9fe1a85ec53L;
      return z ^ (z >>> 33);
    }
  }

  /** Sorted, for range reads, key selectors and range clears. */
  private final SortedIndex sorted;
  /**
   * The same chains by hash, for point reads and writes: a sorted lookup over a large key
   * space costs a cache miss per level, a hash lookup one or two.
   */
  private final ChainTable index = new ChainTable();

  VersionedStore() {
    this(new SortedIndex());
  }

  VersionedStore(SortedIndex sorted) {
    this.sorted = sorted;
  }

  private Chain chain(byte[] key) {
    return index.get(key, HashKey.hash(key));
  }

  /**
   * The chain {@code key}'s next version goes into, created (empty) if needed and pinned until
   * {@link #unpin}. Runs before the commit lock is taken, so the map lookups and inserts of a
   * commit happen outside its critical section.
   */
  Chain prepare(byte[] key) {
    Chain[] one = new Chain[1];
    prepareAll(java.util.List.of(key), one);
    return one[0];
  }

  /**
   * {@link #prepare} for each of {@code keys} (sorted, distinct) into {@code out}, adding the new
   * chains to the sorted index as one run.
   */
  void prepareAll(Iterable<byte[]> keys, Chain[] out) {
    Chain[] created = null;
    int createdCount = 0;
    int i = 0;
    for (byte[] key : keys) {
      int hash = HashKey.hash(key);
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
  void unpin(Chain c) {
    if (c.unpinCount() == 0 && c.head == null) {
      synchronized (emptied) {
        emptied.add(c);
      }
    }
  }

  private final java.util.ArrayList<Chain> emptied = new java.util.ArrayList<>();

  /**
   * Removes a killed chain from the hash index; the sorted index skips killed chains and drops
   * them at its next merge. Caller holds the commit lock.
   */
  private void remove(Chain chain) {
    index.remove(chain);
    sorted.noteKilled();
  }

  /** Removes {@code key} (recovery only: nothing can have pinned it). */
  void remove(byte[] key) {
    Chain c = chain(key);
    if (c != null && c.tryKill()) {
      remove(c);
    }
  }

  /** Removes every key in [begin, end) (recovery only). */
  void removeRange(byte[] begin, byte[] end) {
    Iterator<Chain> r = chains(begin, end, false);
    while (r.hasNext()) {
      Chain c = r.next();
      if (c.tryKill()) {
        remove(c);
      }
    }
  }

  /** The value of {@code key} at {@code version}, or null when absent. */
  byte[] get(byte[] key, long version) {
    Chain c = chain(key);
    return c == null ? null : valueAt(c.head, version);
  }

  /** The newest value of {@code key} (committed, possibly not yet durable), or null. */
  byte[] latest(byte[] key) {
    Chain c = chain(key);
    return c == null ? null : c.latest();
  }

  static byte[] valueAt(Version head, long version) {
    Version v = head;
    while (v != null) {
      if (v.version <= version) {
        return v.value;
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
  boolean put(byte[] key, byte[] value, long version, long oldestReadable) {
    if (value == null) {
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
  boolean put(Chain chain, byte[] value, long version, long oldestReadable) {
    Version head = chain.head;
    if (value == null && (head == null || head.value == null)) {
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

  private void insert(Chain chain) {
    Chain replaced = index.put(chain);
    if (replaced != null) {
      replaced.tryKill();
    }
    sorted.add(chain);
    chain.sorted = true;
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

  private final java.util.ArrayDeque<Tombstone> tombstones = new java.util.ArrayDeque<>();

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

  /** Recovery: the key holds {@code value} as of {@code version}, with no older history. */
  void replaySet(byte[] key, byte[] value, long version) {
    Chain chain = new Chain(key, HashKey.hash(key));
    chain.version = version;
    chain.value = value;
    chain.length = 1;
    chain.head = chain;
    insert(chain);
  }

  /**
   * The chains of keys in [begin, end) in key order ({@code end == null}: to the end of the key
   * space); a chain created after the call may or may not be included.
   */
  Iterator<Chain> chains(byte[] begin, byte[] end, boolean reverse) {
    return sorted.chains(begin, end, reverse);
  }

  /**
   * Drops cleared keys whose tombstone no reader can need any more (oldest first), and chains
   * prepared by commits that never applied. Caller holds the commit lock.
   */
  int sweepTombstones(long oldestReadable) {
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
      empty = new java.util.ArrayList<>(emptied);
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

  /** Number of keys with a live newest value (for size estimates and tests). */
  long liveKeyCount() {
    long n = 0;
    for (Iterator<Chain> it = chains(Bytes.EMPTY, null, false); it.hasNext(); ) {
      if (it.next().latest() != null) {
        n++;
      }
    }
    return n;
  }
}
