package io.github.fdbcoord.embedded.storage;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.github.fdbcoord.embedded.bytes.KeyHash;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;

/**
 * Values read from the storage, by key, on the heap: a hot key is answered without a call into
 * RocksDB (a JNI call and a block lookup, several microseconds; a cached read is a hash lookup).
 * Absent keys are not cached: the interner and the directory mostly ask for a key that does not
 * exist yet and then write it, so a cached absence is an insert and an invalidation for nothing
 * (they took a sixth of the durable interner's time), while RocksDB's bloom filters answer an
 * absent key without reading a data block.
 *
 * <p>The cache must never answer with a value the storage no longer holds. Every apply to the storage
 * runs between {@link #beginApply()} and {@link #endApply}, which move a generation counter to an odd
 * and then the next even value, and removes the keys it wrote (or, after a range clear, replaces the
 * whole cache by an empty one) before it ends. A reader notes the generation before it reads RocksDB
 * and offers the value with it; the offer is kept only if the generation is still the same, even one,
 * checked inside the map's atomic compute of that key. An apply that began after the reader's note
 * makes the offer fail, and one whose removal of the key ran before the offer began had already moved
 * the generation on; a removal that waits for an offer in progress removes what it put.
 */
final class RowCache {
  /** Map and entry bookkeeping per cached pair, beyond the key's and value's bytes. */
  private static final int ENTRY_OVERHEAD = 96;

  private final long maxBytes;
  /** Reads a key's value from the storage (null when absent). */
  private final UnaryOperator<byte[]> storage;
  /** Replaced by an empty one when an apply clears a range. */
  private volatile Cache<Key, byte[]> cache;
  private final AtomicLong generation = new AtomicLong();

  /** A byte-string key with value equality. */
  private record Key(byte[] bytes, int hash) {
    static Key of(byte[] bytes) {
      return new Key(bytes, KeyHash.hash(bytes));
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Key k && k.hash == hash && Arrays.equals(k.bytes, bytes);
    }

    @Override
    public int hashCode() {
      return hash;
    }
  }

  RowCache(long maxBytes, UnaryOperator<byte[]> storage) {
    this.maxBytes = maxBytes;
    this.storage = storage;
    this.cache = newCache(maxBytes);
  }

  private static Cache<Key, byte[]> newCache(long maxBytes) {
    // Caffeine's maintenance (replaying reads into its LRU order and frequency sketch) stays on its
    // default executor: run on the reading thread, it cost a microsecond a read (650,000 reads/s on
    // one thread instead of 1.4 million), and the read buffer it drains may drop entries under load.
    return Caffeine.newBuilder()
        .maximumWeight(maxBytes)
        .weigher((Key k, byte[] v) -> k.bytes.length + v.length + ENTRY_OVERHEAD)
        .build();
  }

  /** The cached value of {@code key}, or null when the cache does not hold it. */
  byte[] lookup(byte[] key) {
    return cache.getIfPresent(Key.of(key));
  }

  /** The value of {@code key}: the cached one, else the one the storage holds, offered to the cache. */
  byte[] get(byte[] key) {
    byte[] cached = lookup(key);
    if (cached != null) {
      return cached;
    }
    long seen = generation.get();
    byte[] value = storage.apply(key);
    if (value != null) {
      offer(key, value, seen);
    }
    return value;
  }

  /** Caches the value the storage holds for {@code key}, unless an apply may have changed it since {@code seen}. */
  private void offer(byte[] key, byte[] value, long seen) {
    if ((seen & 1) != 0) {
      return;
    }
    // A copy: the caller's key array may change after the read.
    cache.asMap().compute(Key.of(key.clone()), (k, old) -> generation.get() == seen ? value : old);
  }

  void beginApply() {
    generation.incrementAndGet();
  }

  /** Ends an apply that wrote {@code keys} (and, with {@code anyRange}, cleared ranges: everything goes). */
  void endApply(List<byte[]> keys, boolean anyRange) {
    if (anyRange) {
      // A new, empty cache rather than invalidateAll() or removals while iterating: both are weakly
      // consistent in Caffeine, and RowCacheTest found values two applies old left behind by each.
      cache = newCache(maxBytes);
    } else {
      for (byte[] k : keys) {
        cache.asMap().remove(Key.of(k));
      }
    }
    generation.incrementAndGet();
  }
}
