package io.github.fdbcoord.embedded;

import java.util.NavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * The multi-version key-value data: a concurrent sorted map from key to a short chain of
 * (version, value or tombstone), newest first. Readers walk chains lock-free at their read
 * version; only the committer (holding the engine's commit lock) adds versions and trims chains.
 */
final class VersionedStore {
  /** One version of one key; {@code value == null} is a tombstone. */
  static final class Version {
    final long version;
    final byte[] value;
    volatile Version older;
    /** True when older versions were trimmed away, so reads below this one are too old. */
    volatile boolean trimmedBelow;

    Version(long version, byte[] value, Version older) {
      this.version = version;
      this.value = value;
      this.older = older;
    }
  }

  /** Thrown internally when a read needs a version that was trimmed: maps to 1007. */
  static final class TooOld extends RuntimeException {
    static final TooOld INSTANCE = new TooOld();

    private TooOld() {
      super(null, null, false, false);
    }
  }

  /** A key's versions; the head is replaced in place so a write costs one lookup. */
  static final class Chain {
    volatile Version head;
    /** Versions in the chain, and the length at which it is next trimmed (committer only). */
    int length = 1;
    int trimAt = 8;

    Chain(Version head) {
      this.head = head;
    }
  }

  /** A key as a hash-map key. */
  static final class HashKey {
    final byte[] bytes;
    private final int hash;

    HashKey(byte[] bytes) {
      this.bytes = bytes;
      this.hash = hash(bytes);
    }

    @Override
    public int hashCode() {
      return hash;
    }

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
        h = mix(h ^ (long) LONGS.get(b, i));
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

    @Override
    public boolean equals(Object o) {
      return o instanceof HashKey && java.util.Arrays.equals(bytes, ((HashKey) o).bytes);
    }
  }

  /** Sorted, for range reads and key selectors. */
  final ConcurrentSkipListMap<byte[], Chain> data = new ConcurrentSkipListMap<>(Bytes.ORDER);
  /**
   * The same chains by hash, for point reads and writes: a skip list lookup over a large key
   * space costs a cache miss per level, a hash lookup one or two.
   */
  private final java.util.concurrent.ConcurrentHashMap<HashKey, Chain> index =
      new java.util.concurrent.ConcurrentHashMap<>();

  private Chain chain(byte[] key) {
    return index.get(new HashKey(key));
  }

  private void insert(byte[] key, Chain chain) {
    data.put(key, chain);
    index.put(new HashKey(key), chain);
  }

  /** Removes {@code key}; caller holds the commit lock. */
  void remove(byte[] key) {
    data.remove(key);
    index.remove(new HashKey(key));
  }

  /** Removes every key in [begin, end); caller holds the commit lock. */
  void removeRange(byte[] begin, byte[] end) {
    NavigableMap<byte[], Chain> r = range(begin, end);
    for (byte[] k : r.keySet()) {
      index.remove(new HashKey(k));
    }
    r.clear();
  }

  /** The value of {@code key} at {@code version}, or null when absent. */
  byte[] get(byte[] key, long version) {
    Chain c = chain(key);
    return c == null ? null : valueAt(c.head, version);
  }

  /** The newest value of {@code key} (committed, possibly not yet durable), or null. */
  byte[] latest(byte[] key) {
    Chain c = chain(key);
    return c == null ? null : c.head.value;
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
   * Records {@code value} (null clears) for {@code key} at {@code version}, trimming versions that
   * no reader at or above {@code oldestReadable} can need. Caller holds the commit lock.
   */
  void put(byte[] key, byte[] value, long version, long oldestReadable) {
    Chain chain = chain(key);
    if (chain == null) {
      if (value != null) {
        insert(key, new Chain(new Version(version, value, null)));
      }
      return;
    }
    Version fresh = new Version(version, value, chain.head);
    chain.head = fresh;
    // Trimming walks the chain, so do it only when the chain has doubled: amortized constant
    // work per write even for a key rewritten thousands of times within the MVCC window.
    if (++chain.length >= chain.trimAt) {
      chain.length = trim(fresh, oldestReadable);
      chain.trimAt = Math.max(8, chain.length * 2);
    }
    if (value == null) {
      tombstones.add(new Tombstone(key, version));
    }
  }

  /** A cleared key, remembered so the sweeper can drop it once no reader needs it. */
  private static final class Tombstone {
    final byte[] key;
    final long version;

    Tombstone(byte[] key, long version) {
      this.key = key;
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
    insert(key, new Chain(new Version(version, value, null)));
  }

  /** The keys with some version in [begin, end) (for clears: tombstone every one of them). */
  NavigableMap<byte[], Chain> range(byte[] begin, byte[] end) {
    return data.subMap(begin, true, end, false);
  }

  /**
   * Drops cleared keys whose tombstone no reader can need any more (oldest first). Caller holds
   * the commit lock.
   */
  int sweepTombstones(long oldestReadable) {
    int removed = 0;
    while (!tombstones.isEmpty() && tombstones.peekFirst().version <= oldestReadable) {
      Tombstone t = tombstones.removeFirst();
      Chain chain = chain(t.key);
      Version head = chain == null ? null : chain.head;
      if (head != null && head.value == null && head.version <= oldestReadable) {
        remove(t.key);
        removed++;
      }
    }
    return removed;
  }

  /** Number of keys with a live newest value (for size estimates and tests). */
  long liveKeyCount() {
    long n = 0;
    for (Chain c : data.values()) {
      if (c.head.value != null) {
        n++;
      }
    }
    return n;
  }
}
