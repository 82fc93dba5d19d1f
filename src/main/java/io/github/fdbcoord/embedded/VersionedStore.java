package io.github.fdbcoord.embedded;

import java.util.Iterator;
import java.util.Map;
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

  final ConcurrentSkipListMap<byte[], Version> data = new ConcurrentSkipListMap<>(Bytes.ORDER);

  /** The value of {@code key} at {@code version}, or null when absent. */
  byte[] get(byte[] key, long version) {
    Version v = data.get(key);
    return v == null ? null : valueAt(v, version);
  }

  /** The newest value of {@code key} (committed, possibly not yet durable), or null. */
  byte[] latest(byte[] key) {
    Version v = data.get(key);
    return v == null ? null : v.value;
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
    Version head = data.get(key);
    if (head == null) {
      if (value != null) {
        data.put(key, new Version(version, value, null));
      }
      return;
    }
    Version fresh = new Version(version, value, head);
    trim(fresh, oldestReadable);
    data.put(key, fresh);
  }

  /** Keeps every version above {@code oldestReadable} and the newest one at or below it. */
  private static void trim(Version head, long oldestReadable) {
    Version v = head;
    while (v != null) {
      if (v.version <= oldestReadable) {
        if (v.older != null) {
          v.older = null;
          v.trimmedBelow = true;
        }
        return;
      }
      v = v.older;
    }
  }

  /** Recovery: the key holds {@code value} as of {@code version}, with no older history. */
  void replaySet(byte[] key, byte[] value, long version) {
    data.put(key, new Version(version, value, null));
  }

  /** The keys with some version in [begin, end) (for clears: tombstone every one of them). */
  NavigableMap<byte[], Version> range(byte[] begin, byte[] end) {
    return data.subMap(begin, true, end, false);
  }

  /**
   * Drops keys whose only remaining version is a tombstone no reader can need. Caller holds the
   * commit lock.
   */
  int sweepTombstones(long oldestReadable) {
    int removed = 0;
    Iterator<Map.Entry<byte[], Version>> it = data.entrySet().iterator();
    while (it.hasNext()) {
      Map.Entry<byte[], Version> e = it.next();
      Version head = e.getValue();
      if (head.value == null && head.version <= oldestReadable) {
        it.remove();
        removed++;
      } else {
        trim(head, oldestReadable);
      }
    }
    return removed;
  }

  /** Number of keys with a live newest value (for size estimates and tests). */
  long liveKeyCount() {
    long n = 0;
    for (Version v : data.values()) {
      if (v.value != null) {
        n++;
      }
    }
    return n;
  }
}
