package io.github.fdbcoord.mutex;

import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.async.AsyncUtil;
import com.apple.foundationdb.tuple.ByteArrayUtil;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Keeps each mutex's event log to its retention without a range clear per transition (issue 24:
 * clearing from the start of the log on every transition made each clear cross every event cleared
 * before, and on the durable store left one RocksDB range tombstone per transition, until lock
 * cycles fell from thousands to tens per second).
 *
 * <p>A transition trims only when this service has not trimmed the mutex for a while (an eighth of the
 * retention, at most a second), or when its last trim left older events behind; a trim reads at most
 * {@link #BATCH} events older than the retention (a snapshot read, so it adds no conflict) and clears
 * exactly those: a few point clears, or one range clear over just them, as FoundationDB's and RocksDB's
 * guidance on range clears and range tombstones recommends. The read starts where this service's
 * previous trim of the mutex ended, so it does not cross the events already cleared.
 *
 * <p>The log therefore keeps events for the retention plus at most one trim step; a mutex that never
 * changes owner again keeps its last events, as before.
 */
final class EventLogTrimmer {
  /** Most events one transition clears. */
  static final int BATCH = 1024;
  /** Up to this many events are cleared one key at a time; more in one range clear over exactly them. */
  static final int POINT_CLEARS = 16;
  /** Mutexes whose trim position this service remembers; a forgotten one is trimmed from its log's start. */
  private static final int REMEMBERED = 4096;
  private static final long MAX_STEP_VERSIONS = 1_000_000L;

  /** Where this service's last committed trim of a mutex ended, and whether it cleared all it found. */
  private record Mark(byte[] resumeKey, long cutoffVersion, boolean caughtUp) {}

  private final MutexSchema schema;
  private final long retentionVersions;
  private final long stepVersions;
  private final Map<String, Mark> marks = new LinkedHashMap<>(16, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, Mark> eldest) {
      return size() > REMEMBERED;
    }
  };

  EventLogTrimmer(MutexSchema schema, long retentionVersions) {
    this.schema = schema;
    this.retentionVersions = retentionVersions;
    this.stepVersions = Math.max(1, Math.min(MAX_STEP_VERSIONS, retentionVersions / 8));
  }

  /**
   * Within {@code tr}, whose read version is {@code readVersion}: clears up to {@link #BATCH} of
   * {@code name}'s events older than the retention, if it is time to.
   */
  CompletableFuture<Void> trim(Transaction tr, String name, long readVersion) {
    long cutoff = readVersion - retentionVersions;
    if (cutoff <= 0) {
      return AsyncUtil.DONE;
    }
    Mark mark = mark(name);
    if (mark != null && mark.caughtUp() && cutoff - mark.cutoffVersion() < stepVersions) {
      return AsyncUtil.DONE;
    }
    byte[] begin = mark == null ? schema.eventRange(name).begin : mark.resumeKey();
    byte[] end = schema.packEventCutoffKey(name, cutoff);
    if (ByteArrayUtil.compareUnsigned(begin, end) >= 0) {
      return AsyncUtil.DONE;
    }
    return tr.snapshot().getRange(begin, end, BATCH).asList().thenAccept(old -> {
      clear(tr, old);
      boolean caughtUp = old.size() < BATCH;
      byte[] resume = caughtUp ? end : ByteArrayUtil.join(old.get(old.size() - 1).getKey(), new byte[] {0});
      // Remembered only once this attempt commits: a failed attempt cleared nothing.
      tr.getVersionstamp().thenRun(() -> remember(name, new Mark(resume, cutoff, caughtUp)));
    });
  }

  private static void clear(Transaction tr, List<KeyValue> old) {
    if (old.size() <= POINT_CLEARS) {
      for (KeyValue kv : old) {
        tr.clear(kv.getKey());
      }
    } else {
      tr.clear(old.get(0).getKey(), ByteArrayUtil.join(old.get(old.size() - 1).getKey(), new byte[] {0}));
    }
  }

  private synchronized Mark mark(String name) {
    return marks.get(name);
  }

  private synchronized void remember(String name, Mark mark) {
    marks.put(name, mark);
  }
}
