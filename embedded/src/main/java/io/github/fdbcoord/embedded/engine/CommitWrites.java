package io.github.fdbcoord.embedded.engine;

import io.github.fdbcoord.embedded.bytes.Bytes;
import io.github.fdbcoord.embedded.log.LogRecordWriter;
import io.github.fdbcoord.embedded.storage.VersionedStore;

import java.util.List;
import java.util.Map;

/** Writes a resolved commit's mutations into the MVCC window, its log record and its watches. */
final class CommitWrites {
  private final VersionedStore store;
  private final Watches watches;

  CommitWrites(VersionedStore store, Watches watches) {
    this.store = store;
    this.watches = watches;
  }

  /**
   * Applies a resolved commit at {@code version}: its range clears, then its writes into their
   * {@code prepared} chains (atomic operations on the newest value, versionstamps filled in), then its
   * versionstamped keys, less those a range the transaction cleared after them covers once stamped; records each change in {@code record} (null in memory) and adds the watches
   * they fire to {@code fired}. Caller holds the commit lock.
   */
  void apply(CommitRequest req, VersionedStore.Chain[] prepared, long version, long oldest, LogRecordWriter record,
      List<Watches.Watch> fired) {
    boolean watching = !watches.isEmpty();
    if (req.clearedRanges != null) {
      for (Map.Entry<byte[], byte[]> r : req.clearedRanges.entrySet()) {
        byte[] begin = r.getKey();
        byte[] end = r.getValue();
        List<byte[]> reached = store.clearRange(begin, end, version, oldest);
        if (record != null && reached != null) {
          // The keys the range held, as point clears: the same change on replay, and the storage then
          // writes point deletes instead of a range tombstone per small clear.
          for (byte[] key : reached) {
            record.clear(key);
          }
        } else if (record != null) {
          record.clearRange(begin, end);
        }
        if (watching) {
          for (byte[] k : watches.keysIn(begin, end)) {
            watches.changed(k, null, fired);
          }
        }
      }
    }
    if (req.writes != null) {
      byte[] stamp = null;
      int i = 0;
      for (Map.Entry<byte[], PendingWrite> e : req.writes.entrySet()) {
        VersionedStore.Chain chain = prepared[i++];
        PendingWrite w = e.getValue();
        byte[] value;
        switch (w.kind) {
          case KNOWN:
            value = w.value;
            break;
          case DEPENDENT:
            value = w.applyOps(store.latest(chain));
            break;
          default:
            if (stamp == null) {
              stamp = StampedOperands.versionstamp(version);
            }
            value = w.applyOps(StampedOperands.fillStamp(w.stampOperand, stamp));
            break;
        }
        if (store.put(chain, value, version, oldest)) {
          logged(chain.bytes, value, record, watching, fired);
        }
      }
    }
    if (req.stampedKeys != null) {
      byte[] stamp = StampedOperands.versionstamp(version);
      for (CommitRequest.StampedKey k : req.stampedKeys) {
        byte[] key = StampedOperands.fillStamp(k.template(), stamp);
        if (!clearedLater(req.clearsAfterStamps, k.clearsBefore(), key)) {
          set(key, k.value(), version, oldest, record, watching, fired);
        }
      }
    }
  }

  /** Whether a range of {@code clears} (flattened pairs) from pair {@code from} on covers {@code key}. */
  private static boolean clearedLater(List<byte[]> clears, int from, byte[] key) {
    if (clears == null) {
      return false;
    }
    for (int i = 2 * from; i < clears.size(); i += 2) {
      if (Bytes.compare(key, clears.get(i)) >= 0 && Bytes.compare(key, clears.get(i + 1)) < 0) {
        return true;
      }
    }
    return false;
  }

  private void set(byte[] key, byte[] value, long version, long oldest, LogRecordWriter record, boolean watching,
      List<Watches.Watch> fired) {
    if (store.put(key, value, version, oldest)) {
      logged(key, value, record, watching, fired);
    }
  }

  /** Records an applied write in the commit's log record and checks the key's watches. */
  private void logged(byte[] key, byte[] value, LogRecordWriter record, boolean watching,
      List<Watches.Watch> fired) {
    if (record != null) {
      if (value == null) {
        record.clear(key);
      } else {
        record.set(key, value);
      }
    }
    if (watching) {
      watches.changed(key, value, fired);
    }
  }
}
