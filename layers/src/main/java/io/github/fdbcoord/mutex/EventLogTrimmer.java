package io.github.fdbcoord.mutex;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.async.AsyncUtil;
import com.apple.foundationdb.tuple.ByteArrayUtil;

import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;

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
 * <p>The trim runs in a transaction of its own, started once a transition has committed
 * ({@link #trimAfter}), not inside the transition (issue 36): on a real FoundationDB its read was one
 * more round trip before the transition's commit, on the path of every grant and release it ran in.
 * At most one trim per mutex runs at a time in this service, and one that left older events behind
 * is followed by the next at once, so the log still keeps events for the retention plus at most one
 * trim step (and the time of the trims in flight); a mutex that never changes owner again keeps its
 * last events, as before.
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
  /** Mutexes with a trim of this service in flight. */
  private final Set<String> trimming = ConcurrentHashMap.newKeySet();
  private volatile boolean stopped;
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
   * Once {@code tr} commits (a transition of {@code name}): trims {@code name}'s log in a transaction
   * of its own on {@code db} if it is time to and no trim of it runs already. Completes when that trim
   * (and the ones it found still due) committed, or at once when none was due; a failed trim is left
   * to the next transition.
   */
  CompletableFuture<Void> trimAfter(Transaction tr, Database db, Executor executor, String name) {
    return tr.getVersionstamp().thenCompose(vs -> {
      long commitVersion = ByteBuffer.wrap(vs).getLong();
      if (stopped || !due(name, commitVersion - retentionVersions) || !trimming.add(name)) {
        return AsyncUtil.DONE;
      }
      return trimWhileDue(db, executor, name).whenComplete((v, e) -> trimming.remove(name));
    }).exceptionally(e -> null);
  }

  private CompletableFuture<Void> trimWhileDue(Database db, Executor executor, String name) {
    // The cutoff comes from the trim's own read version: a reader that sees the clears reads at a
    // later version, so it can tell from its own read version what may be gone (eventsSince).
    return db.runAsync(tr -> tr.getReadVersion().thenCompose(rv -> trimIn(tr, name, rv)), executor)
        .thenCompose(behind -> behind && !stopped ? trimWhileDue(db, executor, name) : AsyncUtil.DONE);
  }

  /** No more trims start; the service closed. */
  void stop() {
    stopped = true;
  }

  /** Whether a trim with {@code cutoff} would read anything (see the class comment). */
  private boolean due(String name, long cutoff) {
    if (cutoff <= 0) {
      return false;
    }
    Mark mark = mark(name);
    return mark == null || !mark.caughtUp() || cutoff - mark.cutoffVersion() >= stepVersions;
  }

  /**
   * Within {@code tr}, whose read version is {@code readVersion}: clears up to {@link #BATCH} of
   * {@code name}'s events older than the retention, if it is time to.
   */
  CompletableFuture<Void> trim(Transaction tr, String name, long readVersion) {
    return trimIn(tr, name, readVersion).thenApply(behind -> null);
  }

  /** {@link #trim}, completing with whether it left older events behind (a full batch). */
  private CompletableFuture<Boolean> trimIn(Transaction tr, String name, long readVersion) {
    long cutoff = readVersion - retentionVersions;
    if (!due(name, cutoff)) {
      return CompletableFuture.completedFuture(false);
    }
    Mark mark = mark(name);
    byte[] begin = mark == null ? schema.eventRange(name).begin : mark.resumeKey();
    byte[] end = schema.packEventCutoffKey(name, cutoff);
    if (ByteArrayUtil.compareUnsigned(begin, end) >= 0) {
      return CompletableFuture.completedFuture(false);
    }
    return tr.snapshot().getRange(begin, end, BATCH).asList().thenApply(old -> {
      if (old.isEmpty()) {
        // Nothing older than the cutoff at this read version, and every later event is newer: known
        // at once. A trim transaction that clears nothing commits no version, so it could not wait.
        remember(name, new Mark(end, cutoff, true));
        return false;
      }
      clear(tr, old);
      boolean caughtUp = old.size() < BATCH;
      byte[] resume = caughtUp ? end : ByteArrayUtil.join(old.get(old.size() - 1).getKey(), new byte[] {0});
      // Remembered only once this attempt commits: a failed attempt cleared nothing.
      tr.getVersionstamp().thenRun(() -> remember(name, new Mark(resume, cutoff, caughtUp)));
      return !caughtUp;
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
