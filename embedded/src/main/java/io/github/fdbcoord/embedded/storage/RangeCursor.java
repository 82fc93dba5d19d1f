package io.github.fdbcoord.embedded.storage;

import io.github.fdbcoord.embedded.bytes.Bytes;
import org.rocksdb.RocksIterator;
import java.util.Iterator;

/**
 * The live pairs of a key range at one read version, in key order: the MVCC window's chains merged
 * with the storage beneath them (durable mode). The public face is {@link VersionedStore.Cursor}.
 */
class RangeCursor implements AutoCloseable {
  private final VersionedStore store;
  /** The storage below the window, or null in memory. */
  private final RocksStorage base;
  private final byte[] begin;
  private final byte[] end;
  private final boolean reverse;
  private final long readVersion;
  private final Iterator<VersionedStore.Chain> chains;
  private VersionedStore.Chain chain;
  private RocksIterator stored;
  /** The storage view holds every version up to this one. */
  private long viewThrough;
  private byte[] storedKey;
  /** The last key decided (returned or passed over), in scan order; null before the first. */
  private byte[] decided;
  /** The current pair's key, once {@link #next()} returned true. */
  public byte[] key;
  /** The current pair's value, once {@link #next()} returned true. */
  public byte[] value;

  RangeCursor(VersionedStore store, byte[] begin, byte[] end, boolean reverse, long readVersion) {
    this.store = store;
    this.base = store.base();
    this.begin = begin;
    this.end = end;
    this.reverse = reverse;
    this.readVersion = readVersion;
    this.chains = store.chains(begin, end, reverse);
    this.chain = chains.hasNext() ? chains.next() : null;
    if (base != null) {
      openView(null);
    }
  }

  /**
   * Takes a storage view positioned at the first key after {@code after} in scan order (null: the start):
   * a new view after chains were dropped into the storage resumes behind the last key decided.
   */
  private void openView(byte[] after) {
    if (stored != null) {
      stored.close();
    }
    viewThrough = base.durableVersion();
    stored = base.iterator();
    base.checkReadable(readVersion);
    if (!reverse) {
      stored.seek(after != null ? Bytes.keyAfter(after) : begin);
    } else if (after != null) {
      stored.seekForPrev(after);
      if (base.valid(stored) && Bytes.compare(stored.key(), after) >= 0) {
        stored.prev();
      }
    } else if (end == null) {
      stored.seekToLast();
    } else {
      stored.seekForPrev(end);
      if (base.valid(stored) && Bytes.compare(stored.key(), end) >= 0) {
        stored.prev();
      }
    }
    readStoredKey();
  }

  private void readStoredKey() {
    storedKey = null;
    if (!base.valid(stored)) {
      return;
    }
    byte[] k = stored.key();
    boolean inside = reverse ? Bytes.compare(k, begin) >= 0 : end == null || Bytes.compare(k, end) < 0;
    if (inside) {
      storedKey = k;
    }
  }

  private void advanceStored() {
    if (reverse) {
      stored.prev();
    } else {
      stored.next();
    }
    readStoredKey();
  }

  /** Whether chains the view does not hold were dropped: then the view is renewed before it is trusted. */
  private boolean viewStale() {
    return store.evictingThrough() > viewThrough;
  }

  /** Moves to the next live pair; false when the range has no more. */
  public boolean next() {
    while (true) {
      if (base != null && viewStale()) {
        // Chains dropped into the storage after this view was taken are gone from the window's
        // iterator and missing from the view: a new view from the last key decided finds them.
        openView(decided);
      }
      if (chain == null && storedKey == null) {
        return false;
      }
      int order = chain == null ? 1 : storedKey == null ? -1 : Bytes.compare(chain.bytes, storedKey) * (reverse ? -1 : 1);
      VersionedStore.Chain c = chain;
      if (order <= 0) {
        VersionedStore.Version v = VersionedStore.versionAt(c.head, readVersion);
        if (v != null || base == null) {
          decided = c.bytes;
          chain = chains.hasNext() ? chains.next() : null;
          if (order == 0) {
            advanceStored();
          }
          if (v == null || v.value == null) {
            continue;
          }
          key = c.bytes;
          value = v.value;
          return true;
        }
      }
      // The window holds nothing at the read version for this key: the storage decides. Clears
      // are read before the view is checked, as the applier drops them before it drops chains.
      byte[] k = order < 0 ? c.bytes : storedKey;
      boolean cleared = store.clearedInWindow(k, readVersion);
      if (viewStale()) {
        // The key's versions may have been dropped into the storage after this view was taken.
        openView(decided);
        continue;
      }
      decided = k;
      if (order <= 0) {
        chain = chains.hasNext() ? chains.next() : null;
      }
      if (order < 0) {
        continue;
      }
      byte[] storedValue = stored.value();
      advanceStored();
      if (cleared) {
        continue;
      }
      key = k;
      value = storedValue;
      return true;
    }
  }

  @Override
  public void close() {
    if (stored != null) {
      stored.close();
      stored = null;
    }
  }
}
