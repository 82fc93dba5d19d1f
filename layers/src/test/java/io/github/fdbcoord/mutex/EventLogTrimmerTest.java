package io.github.fdbcoord.mutex;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.mutex.MutexSchema.EventRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The event log's trim (issue 24): bounded per transaction, resumed where it stopped, skipped while
 * the log is within its retention, and keeping a hot mutex's log to the retention.
 */
@Timeout(60)
class EventLogTrimmerTest extends MutexTestSupport {
  private static final long RETENTION_VERSIONS = 1_000;

  @Test
  void aTrimClearsAtMostOneBatchAndTheNextResumesWhereItStopped() {
    FdbMutexService s = service(quiet());
    int events = 2 * EventLogTrimmer.BATCH + 100;
    for (int i = 0; i < events; i += 500) {
      int n = Math.min(500, events - i);
      await(db.runAsync(tr -> {
        for (int j = 0; j < n; j++) {
          // One commit, one versionstamp: the user version tells the events apart.
          tr.mutate(com.apple.foundationdb.MutationType.SET_VERSIONSTAMPED_KEY,
              io.github.fdbcoord.fdb.Versionstamps.packKey(s.schema.mutex("m").getKey(),
                  com.apple.foundationdb.tuple.Tuple.from("events", com.apple.foundationdb.tuple.Versionstamp.incomplete(j))),
              s.schema.packEventValue(new EventRecord(LockEvent.Type.ACQUIRED, null, null, "o" + j)));
        }
        return java.util.concurrent.CompletableFuture.completedFuture(null);
      }));
    }
    assertEquals(events, retained(s));
    EventLogTrimmer trimmer = new EventLogTrimmer(s.schema, RETENTION_VERSIONS);

    trimOnce(trimmer, s);
    assertEquals(events - EventLogTrimmer.BATCH, retained(s), "one batch cleared");
    trimOnce(trimmer, s);
    assertEquals(100, retained(s), "the next batch, from where the first stopped");
    trimOnce(trimmer, s);
    assertEquals(0, retained(s));
  }

  @Test
  void noTrimWithinOneStepOfTheLastOne() {
    FdbMutexService s = service(quiet());
    long retention = 8_000_000_000L; // a step of one second's versions
    EventLogTrimmer trimmer = new EventLogTrimmer(s.schema, retention);
    long a = append(s, "a");
    long b = append(s, "b");
    assertTrue(b - a < 1_000_000L, "the two events were written within a second");

    trimAt(trimmer, a + retention + 1);
    assertEquals(1, retained(s), "the first trim clears the event older than the retention");
    trimAt(trimmer, b + retention + 1);
    assertEquals(1, retained(s), "within a step of the last trim nothing is read or cleared");
    trimAt(trimmer, a + retention + 1 + 1_000_000L);
    assertEquals(0, retained(s), "a step later the aged event is cleared");
  }

  /** Appends an event; returns its commit version. */
  private long append(FdbMutexService s, String owner) {
    await(db.runAsync(tr -> {
      s.schema.appendEvent(tr, "m", new EventRecord(LockEvent.Type.ACQUIRED, null, null, owner));
      return java.util.concurrent.CompletableFuture.completedFuture(null);
    }));
    List<LockEvent> log = await(db.readAsync(tr -> s.schema.readEventsAfter(tr, "m", null, 100), s.executor));
    return log.get(log.size() - 1).sequence().commitVersion();
  }

  private void trimAt(EventLogTrimmer trimmer, long readVersion) {
    await(db.runAsync(tr -> trimmer.trim(tr, "m", readVersion)
        .thenCompose(v -> tr.getReadVersion()).thenApply(v -> {
          tr.addWriteConflictKey(new byte[] {(byte) 0xfe}); // something to commit, so the versionstamp resolves
          return v;
        })));
  }

  @Test
  void aHotMutexKeepsOnlyItsRetention() throws Exception {
    Duration retention = Duration.ofMillis(200);
    FdbMutexService s = service(quiet().eventRetention(retention));
    long until = System.nanoTime() + Duration.ofMillis(1500).toNanos();
    int cycles = 0;
    while (System.nanoTime() < until) {
      FencingToken t = await(s.tryAcquire("m", "a")).token().orElseThrow();
      await(s.release("m", "a", t));
      cycles++;
    }
    List<LockEvent> log = await(db.readAsync(tr -> s.schema.readEventsAfter(tr, "m", null, 100_000), s.executor));
    long newest = log.get(log.size() - 1).sequence().commitVersion();
    long oldest = log.get(0).sequence().commitVersion();
    long step = Math.min(1_000_000L, retention.toMillis() * 1000 / 8);
    // Versions follow the clock: a transition stalled between its read version and its commit (a
    // collection, a starved thread) widens the span by the stall, so the bound allows one retention of
    // slack; a log that is not trimmed spans all 1.5 s of cycles, several times this bound.
    assertTrue(newest - oldest <= 2 * retention.toMillis() * 1000 + 2 * step,
        "log spans " + (newest - oldest) + " versions after " + cycles + " cycles; retention is " + retention);
  }

  private void trimOnce(EventLogTrimmer trimmer, FdbMutexService s) {
    long readVersion = await(db.runAsync(tr -> tr.getReadVersion()));
    trimAt(trimmer, readVersion + 10 * RETENTION_VERSIONS);
  }

  private int retained(FdbMutexService s) {
    return await(db.readAsync(tr -> com.apple.foundationdb.async.AsyncUtil.collect(tr.getRange(s.schema.eventRange("m")),
        s.executor), s.executor)).size();
  }
}
