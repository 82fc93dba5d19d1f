package io.github.fdbcoord.embedded.storage;

import io.github.fdbcoord.embedded.bytes.KeyHash;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;

/**
 * The store's chains by key hash, for point reads and writes: open addressing over one array of
 * chains, so a lookup touches the slot and the chain (a {@code ConcurrentHashMap} adds a node per
 * key: one more object for the collector to copy and one more cache miss per lookup).
 *
 * <p>Readers are lock-free: they probe the current array, whose slots are published with release
 * semantics. Inserts, removals and resizes take this table's lock (each is short), and a resize
 * publishes a complete new array, so a reader sees every chain inserted before it read the array.
 */
public final class ChainTable {
  private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(VersionedStore.Chain[].class);
  private static final VarHandle HASH = MethodHandles.arrayElementVarHandle(int[].class);
  /** A removed entry: probing continues past it (a chain further on may have collided with it). */
  private static final VersionedStore.Chain REMOVED = new VersionedStore.Chain(new byte[0], 0);
  private static final int INITIAL_CAPACITY = 1 << 10;

  /**
   * Slots and their chains' hashes side by side: probing reads only hashes (0 marks an empty slot;
   * a chain's hash 0 is stored as 1), touching a chain (a cache miss) only on a match. A slot's
   * chain is written before its hash is published.
   */
  private static final class Slots {
    final VersionedStore.Chain[] chains;
    final int[] hashes;

    Slots(int capacity) {
      chains = new VersionedStore.Chain[capacity];
      hashes = new int[capacity];
    }
  }

  private volatile Slots slots = new Slots(INITIAL_CAPACITY);
  /** Live chains, and slots holding either a chain or {@link #REMOVED}. Guarded by this. */
  private int live;
  private int occupied;

  /** The chain of {@code key} (whose {@link KeyHash#hash} is {@code hash}), or null. */
  VersionedStore.Chain get(byte[] key, int hash) {
    int stored = stored(hash);
    Slots t = slots;
    int mask = t.chains.length - 1;
    for (int i = stored & mask; ; i = (i + 1) & mask) {
      int h = (int) HASH.getAcquire(t.hashes, i);
      if (h == 0) {
        return null;
      }
      if (h == stored) {
        VersionedStore.Chain c = t.chains[i];
        if (c != REMOVED && Arrays.equals(c.bytes, key)) {
          return c;
        }
      }
    }
  }

  /** A hash as stored in a slot: never 0, which marks an empty slot. */
  private static int stored(int hash) {
    return hash == 0 ? 1 : hash;
  }

  /** Inserts {@code chain} unless its key has one; returns the chain already there, or null. */
  synchronized VersionedStore.Chain putIfAbsent(VersionedStore.Chain chain) {
    VersionedStore.Chain existing = get(chain.bytes, chain.hashCode());
    if (existing != null) {
      return existing;
    }
    insert(chain);
    return null;
  }

  /** Inserts {@code chain}, replacing its key's chain; returns the replaced chain, or null. */
  synchronized VersionedStore.Chain put(VersionedStore.Chain chain) {
    VersionedStore.Chain existing = get(chain.bytes, chain.hashCode());
    if (existing != null) {
      remove(existing);
    }
    insert(chain);
    return existing;
  }

  /** Removes exactly {@code chain} (not another chain of the same key); false when absent. */
  synchronized boolean remove(VersionedStore.Chain chain) {
    Slots t = slots;
    int mask = t.chains.length - 1;
    for (int i = stored(chain.hashCode()) & mask; ; i = (i + 1) & mask) {
      if (t.hashes[i] == 0) {
        return false;
      }
      if (t.chains[i] == chain) {
        SLOT.setRelease(t.chains, i, REMOVED);
        live--;
        return true;
      }
    }
  }

  private void insert(VersionedStore.Chain chain) {
    int capacity = slots.chains.length;
    if (occupied + 1 > capacity / 2) {
      // Mostly removed slots: rehash at the same size; otherwise double.
      resize(live + 1 > capacity / 4 ? capacity * 2 : capacity);
    }
    Slots t = slots;
    int hash = stored(chain.hashCode());
    int i = place(t, hash);
    t.chains[i] = chain;
    HASH.setRelease(t.hashes, i, hash);
    live++;
    occupied++;
  }

  /** The first empty slot on the probe path of a stored hash. */
  private static int place(Slots t, int hash) {
    int mask = t.chains.length - 1;
    int i = hash & mask;
    while (t.hashes[i] != 0) {
      i = (i + 1) & mask;
    }
    return i;
  }

  private void resize(int capacity) {
    Slots old = slots;
    Slots t = new Slots(capacity);
    for (int j = 0; j < old.chains.length; j++) {
      VersionedStore.Chain c = old.chains[j];
      if (c != null && c != REMOVED) {
        int i = place(t, old.hashes[j]);
        t.hashes[i] = old.hashes[j];
        t.chains[i] = c;
      }
    }
    occupied = live;
    // The volatile write publishes the filled arrays.
    slots = t;
  }

  /** Live chains (for tests). */
  synchronized int size() {
    return live;
  }
}
