package io.github.fdbcoord.mutex;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.bench.CountingDatabase;
import io.github.fdbcoord.bench.CountingDatabase.Counts;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.embedded.EmbeddedOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What each transition costs in the store (issue 36): one transaction whose reads are issued together,
 * so a read version, one round of reads and one commit, and no event-log trim inside it. Counted by
 * {@link CountingDatabase} over an embedded engine whose reads take 250 ms (far above a busy machine's scheduling gaps), so that reads issued
 * together are in flight together (without latency each would complete before the next is issued).
 */
@Timeout(60)
class MutexRoundTripsTest {
  /**
   * Longer than the embedded engine's versions (microseconds since the epoch) reach back: no trim is ever
   * due, so no trim transaction runs beside the counted ones.
   */
  private static final Duration NO_TRIM = Duration.ofDays(365L * 100);

  private EmbeddedDatabase store;
  private CountingDatabase counting;
  private FdbMutexService mutexes;

  @BeforeEach
  void open() {
    store = EmbeddedDatabase.open(EmbeddedOptions.builder().readLatency(Duration.ofMillis(250)).build());
    counting = new CountingDatabase(store);
    mutexes = (FdbMutexService) MutexService.create(counting.database(),
        new com.apple.foundationdb.subspace.Subspace(com.apple.foundationdb.tuple.Tuple.from("round-trips")),
        MutexTestSupport.quiet().eventRetention(NO_TRIM).build());
  }

  @AfterEach
  void close() {
    mutexes.close();
    store.close();
  }

  /** What {@code op} cost, and its result. */
  private <T> Counts cost(Supplier<CompletableFuture<T>> op, T[] result) {
    Counts before = counting.counts();
    result[0] = MutexTestSupport.await(op.get());
    return counting.counts().minus(before);
  }

  /** One transaction: its read version, at most {@code reads} reads all in flight together, its commit. */
  private static void assertOneRound(Counts c, int reads) {
    assertEquals(1, c.attempts(), "transactions: " + c);
    assertEquals(1, c.commits(), "commits: " + c);
    assertEquals(1, c.grvs(), "read versions: " + c);
    assertTrue(c.reads() >= 1 && c.reads() <= reads, "reads: " + c);
    assertEquals(3, c.roundTrips(), "round trips (read version, the reads together, commit): " + c);
  }

  /**
   * {@code measure}'s cost, measured up to three times (each on a mutex of its own), keeping the fewest round trips.
   * Load can only add round trips to a measurement (a read that completes before the next is issued, after a stall
   * of the test's thread longer than the read latency: 1 in 13 runs at load 21 in the fifth hunt), never remove
   * them: a transaction that waits for one read before the next never shows its reads in one round trip.
   */
  private static Counts fewestRoundTrips(Function<String, Counts> measure) {
    Counts best = null;
    for (int attempt = 0; attempt < 3 && (best == null || best.roundTrips() > 3); attempt++) {
      Counts c = measure.apply("m" + attempt);
      if (best == null || c.roundTrips() < best.roundTrips()) {
        best = c;
      }
    }
    return best;
  }

  @Test
  void takingAFreeMutexIsOneRoundOfReadsAndACommit() {
    Counts c = fewestRoundTrips(m -> {
      AcquireResult[] r = new AcquireResult[1];
      Counts cost = cost(() -> mutexes.tryAcquire(m, "a"), r);
      assertTrue(r[0].isHeld());
      return cost;
    });
    // The owner record, the caller's queue entry and the queue, all three before anything is known.
    assertOneRound(c, 3);
  }

  @Test
  void joiningTheQueueIsOneRoundOfReadsAndACommit() {
    Counts c = fewestRoundTrips(m -> {
      MutexTestSupport.await(mutexes.tryAcquire(m, "a"));
      AcquireResult[] r = new AcquireResult[1];
      Counts cost = cost(() -> mutexes.tryAcquire(m, "b"), r);
      assertFalse(r[0].isHeld());
      assertEquals(1, r[0].position());
      return cost;
    });
    assertOneRound(c, 3);
  }

  @Test
  void aReleaseThatHandsOffIsOneRoundOfReadsAndACommit() {
    Counts c = fewestRoundTrips(m -> {
      FencingToken a = MutexTestSupport.await(mutexes.tryAcquire(m, "a")).token().orElseThrow();
      MutexTestSupport.await(mutexes.tryAcquire(m, "b"));
      LockEvent[] e = new LockEvent[1];
      Counts cost = cost(() -> mutexes.release(m, "a", a), e);
      assertEquals(LockEvent.Type.HANDED_OFF, e[0].type());
      assertEquals("b", e[0].owner().orElseThrow());
      return cost;
    });
    // The owner record and the queue's head.
    assertOneRound(c, 2);
  }

  @Test
  void theReapersExpiryIsOneRoundOfReadsAndACommit() {
    MutexReaper reaper = new MutexReaper(mutexes, Duration.ofMillis(1), Duration.ofSeconds(1));
    Counts c = fewestRoundTrips(m -> {
      MutexTestSupport.await(mutexes.tryAcquire(m, "a"));
      MutexTestSupport.await(mutexes.tryAcquire(m, "b"));
      byte[] record = MutexTestSupport.await(store.readAsync(tr -> mutexes.schema.readOwnerBytes(tr, m)));
      Boolean[] expired = new Boolean[1];
      Counts cost = cost(() -> reaper.expire(m, record), expired);
      assertTrue(expired[0]);
      assertEquals("b", MutexTestSupport.await(mutexes.state(m)).owner().orElseThrow().owner());
      return cost;
    });
    // The owner record and the queue's head.
    assertOneRound(c, 2);
  }

  @Test
  void aReleaseThatFreesIsOneRoundOfReadsAndACommit() {
    Counts c = fewestRoundTrips(m -> {
      FencingToken a = MutexTestSupport.await(mutexes.tryAcquire(m, "a")).token().orElseThrow();
      LockEvent[] e = new LockEvent[1];
      Counts cost = cost(() -> mutexes.release(m, "a", a), e);
      assertEquals(LockEvent.Type.RELEASED, e[0].type());
      return cost;
    });
    assertOneRound(c, 2);
  }
}
