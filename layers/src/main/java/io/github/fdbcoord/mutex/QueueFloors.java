package io.github.fdbcoord.mutex;

import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.tuple.Versionstamp;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Per mutex, a queue ticket below which no entry can exist any more, so that the queue reads of
 * hand-offs and enqueues start there instead of at the start of the queue.
 *
 * <p>Why: every dequeued entry stays in the store as a deleted key for the MVCC window (five
 * seconds) and, on FoundationDB, in the storage engine until compaction; a read from the start of
 * the queue steps over all of them. Under lock ping-pong that was a few thousand deleted keys per
 * read, most of a release transaction's time (0.43 ms for 5,000 in the embedded engine, idle).
 *
 * <p>Why a floor is safe: a ticket is the versionstamp of the enqueue's commit, and an entry is
 * only ever appended (its key is a newer commit's versionstamp) or removed; a rewrite keeps its
 * ticket. So once a read at version {@code rv} saw ticket {@code t} as the first entry, no entry
 * before {@code t} existed at {@code rv}, and none can appear later: every commit after {@code rv}
 * gets a larger versionstamp. A floor is learnt only when the transaction whose read saw it
 * commits, because that read may have seen the transaction's own dequeues, which an aborted
 * attempt never made. The floors live in this process only; each process learns its own.
 */
final class QueueFloors {
  /** Mutexes whose floor this service remembers; a forgotten one is read from the start of its queue. */
  private static final int REMEMBERED = 4096;

  private final Map<String, Versionstamp> floors = new LinkedHashMap<>(16, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, Versionstamp> eldest) {
      return size() > REMEMBERED;
    }
  };

  /** Where queue reads of {@code name} may start, or null when nothing is known (the queue's start). */
  synchronized Versionstamp of(String name) {
    return floors.get(name);
  }

  /**
   * Once {@code tr} commits: {@code firstSeen} was the first queue entry of {@code name} that a read
   * of {@code tr} returned. A read-only {@code tr} never commits a version, so it teaches nothing.
   */
  void learnOnCommit(Transaction tr, String name, Versionstamp firstSeen) {
    tr.getVersionstamp().thenRun(() -> raise(name, firstSeen));
  }

  private synchronized void raise(String name, Versionstamp ticket) {
    floors.merge(name, ticket, (a, b) -> a.compareTo(b) >= 0 ? a : b);
  }
}
