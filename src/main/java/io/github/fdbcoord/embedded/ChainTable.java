package io.github.fdbcoord.embedded;

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
final class ChainTable {
  private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(VersionedStore.Chain[].class);
  /** A removed entry: probing continues past it (a chain further on may have collided with it). */
  private static final VersionedStore.Chain REMOVED = new VersionedStore.Chain(new byte[0], null);
  private static final int INITIAL_CAPACITY = 1 << 10;

  private volatile VersionedStore.Chain[] slots = new VersionedStore.Chain[INITIAL_CAPACITY];
  /** Live chains, and slots holding either a chain or {@link #REMOVED}. Guarded by this. */
  private int live;
  private int occupied;

  /** The chain of {@code key} (whose {@link VersionedStore.HashKey#hash} is {@code hash}), or null. */
  VersionedStore.Chain get(byte[] key, int hash) {
    VersionedStore.Chain[] t = slots;
    int mask = t.length - 1;
    for (int i = hash & mask; ; i = (i + 1) & mask) {
      VersionedStore.Chain c = (VersionedStore.Chain) SLOT.getAcquire(t, i);
      if (c == null) {
        return null;
      }
      if (c.hashCode() == hash && c != REMOVED && Arrays.equals(c.bytes, key)) {
        return c;
      }
    }
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
    VersionedStore.Chain[] t = slots;
    int mask = t.length - 1;
    for (int i = chain.hashCode() & mask; ; i = (i + 1) & mask) {
      VersionedStore.Chain c = t[i];
      if (c == null) {
        return false;
      }
      if (c == chain) {
        SLOT.setRelease(t, i, REMOVED);
        live--;
        return true;
      }
    }
  }

  private void insert(VersionedStore.Chain chain) {
    if (occupied + 1 > slots.length / 2) {
      // Mostly removed slots: rehash at the same size; otherwise double.
      resize(live + 1 > slots.length / 4 ? slots.length * 2 : slots.length);
    }
    VersionedStore.Chain[] t = slots;
    int mask = t.length - 1;
    int i = chain.hashCode() & mask;
    while (t[i] != null) {
      i = (i + 1) & mask;
    }
    SLOT.setRelease(t, i, chain);
    live++;
    occupied++;
  }

  private void resize(int capacity) {
    VersionedStore.Chain[] old = slots;
    VersionedStore.Chain[] t = new VersionedStore.Chain[capacity];
    int mask = capacity - 1;
    for (VersionedStore.Chain c : old) {
      if (c != null && c != REMOVED) {
        int i = c.hashCode() & mask;
        while (t[i] != null) {
          i = (i + 1) & mask;
        }
        t[i] = c;
      }
    }
    occupied = live;
    // The volatile write publishes the filled array.
    slots = t;
  }

  /** Live chains (for tests). */
  synchronized int size() {
    return live;
  }
}
