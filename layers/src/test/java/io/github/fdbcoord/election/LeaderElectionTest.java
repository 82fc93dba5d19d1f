package io.github.fdbcoord.election;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.tuple.Tuple;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.mutex.MutexException;
import io.github.fdbcoord.mutex.MutexOptions;
import io.github.fdbcoord.mutex.MutexService;
import io.github.fdbcoord.mutex.MutexTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Leader election over the mutex layer, on the embedded engine: one leader at a time, epochs only grow. */
@Timeout(180)
class LeaderElectionTest {
  private Database db;
  private List<String> directory;
  private final List<LeaderElection> elections = new ArrayList<>();

  @BeforeEach
  void open() {
    db = EmbeddedDatabase.inMemory();
    directory = List.of("test", "election-" + UUID.randomUUID());
  }

  @AfterEach
  void close() {
    elections.forEach(LeaderElection::close);
    db.close();
  }

  /**
   * One process's elections, with a lease far above any stall of a loaded machine (lease 10 s, heartbeats every
   * 500 ms, reaper every 20 ms): no leader is replaced unless the test stops it.
   */
  private LeaderElection process() {
    return process(Duration.ofSeconds(10), Duration.ofMillis(500));
  }

  private LeaderElection process(Duration lease, Duration heartbeatInterval) {
    LeaderElection e = await(LeaderElection.open(db, MutexOptions.builder().directory(directory)
        .lease(lease).heartbeatInterval(heartbeatInterval).reaperInterval(Duration.ofMillis(20)).build()));
    elections.add(e);
    return e;
  }

  private static <T> T await(CompletableFuture<T> f) {
    try {
      return f.get(60, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      throw new AssertionError(e.getCause());
    } catch (Exception e) {
      throw new AssertionError("not complete in 60 s", e);
    }
  }

  private static void eventually(String what, BooleanSupplier condition) throws InterruptedException {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > end) {
        fail("not within 60 s: " + what);
      }
      Thread.sleep(5);
    }
  }

  @Test
  void candidatesLeadOneAtATimeInTheOrderTheyCampaignedWithGrowingEpochs() {
    LeaderElection e = process();
    Leadership a = await(e.campaign("jobs", "a", null));
    CompletableFuture<Leadership> b = e.campaign("jobs", "b", null);
    assertEquals(Optional.of(a.leader()), await(e.leader("jobs")));
    assertFalse(b.isDone());
    assertEquals(a.epoch(), await(e.campaign("jobs", "a", Duration.ZERO)).epoch(), "a leads already: the same epoch");
    await(a.resign());
    Leadership bLeads = await(b);
    assertTrue(bLeads.epoch().isNewerThan(a.epoch()));
    assertEquals(Optional.of(bLeads.leader()), await(e.leader("jobs")));
    assertFalse(a.isLeading());
    await(bLeads.resign());
    assertEquals(Optional.empty(), await(e.leader("jobs")));
  }

  @Test
  void aCampaignThatTimesOutWithdrawsAndBadNamesAreRefused() {
    LeaderElection e = process();
    Leadership a = await(e.campaign("jobs", "a", null));
    CompletableFuture<Leadership> b = e.campaign("jobs", "b", Duration.ofMillis(300));
    ExecutionException timedOut = assertThrows(ExecutionException.class, () -> b.get(60, TimeUnit.SECONDS));
    assertTrue(timedOut.getCause() instanceof MutexTimeoutException, timedOut.getCause().toString());
    await(a.resign());
    assertEquals(Optional.empty(), await(e.leader("jobs")), "the withdrawn candidate was not made leader");
    assertThrows(IllegalArgumentException.class, () -> e.campaign("", "a", null));
    assertThrows(IllegalArgumentException.class, () -> e.campaign("jobs", null, null));
    assertThrows(IllegalArgumentException.class, () -> e.observe("jobs", null));
  }

  @Test
  void aCancelledCampaignWithdrawsTheCandidate() throws Exception {
    LeaderElection e = process();
    Leadership a = await(e.campaign("jobs", "a", null));
    CompletableFuture<Leadership> b = e.campaign("jobs", "b", null);
    LeaderElection observer = process();
    MutexService mutexes = await(MutexService.open(db, MutexOptions.builder().directory(directory).reaperEnabled(false).build()));
    try {
      eventually("b waits in line", () -> await(mutexes.state("jobs")).queue().size() == 1);
      assertTrue(b.cancel(false));
      eventually("b left the line", () -> await(mutexes.state("jobs")).queue().isEmpty());
      await(a.resign());
      assertEquals(Optional.empty(), await(observer.leader("jobs")), "the cancelled candidate was not made leader");
    } finally {
      mutexes.close();
    }
  }

  @Test
  void aLeadershipIsExclusiveUntilALeaseAfterItsLastConfirmedHeartbeatBegan() {
    // Scheduled heartbeats far apart: the first comes long after the test's own.
    Duration lease = Duration.ofSeconds(60);
    LeaderElection e = process(lease, Duration.ofSeconds(15));
    Leadership a = await(e.campaign("jobs", "a", null));
    assertTrue(a.exclusiveUntilNanos().isEmpty(), "unknown until a heartbeat committed");
    long before = System.nanoTime();
    await(a.confirm());
    long after = System.nanoTime();
    long until = a.exclusiveUntilNanos().orElseThrow();
    assertTrue(until - (before + lease.toNanos()) >= 0 && (after + lease.toNanos()) - until >= 0,
        "a lease from the start of the confirming heartbeat: " + (until - before) / 1_000_000 + " ms after it began");
    await(a.confirm());
    assertTrue(a.exclusiveUntilNanos().orElseThrow() - until >= 0, "a later heartbeat never shortens it");
    await(a.resign());
  }

  @Test
  void anObserverIsToldTheLeaderThenEveryChangeInEpochOrder() throws Exception {
    MutexService mutexes = await(MutexService.open(db, MutexOptions.builder().directory(directory).build()));
    LeaderElection e = LeaderElection.over(mutexes);
    elections.add(e);
    Leadership first = await(e.campaign("jobs", "a", null));
    List<Optional<Leader>> told = new CopyOnWriteArrayList<>();
    ElectionSubscription s = await(e.observe("jobs", told::add));
    eventually("the observer is told the current leader", () -> told.size() >= 1);
    assertEquals(Optional.of(first.leader()), told.get(0));
    CompletableFuture<Leadership> second = e.campaign("jobs", "b", null);
    eventually("b is queued", () -> await(mutexes.state("jobs")).queue().size() == 1);
    await(first.resign());
    Leadership b = await(second);
    await(b.resign());
    eventually("the observer is told b and then no leader", () -> told.size() >= 3);
    assertEquals(List.of(Optional.of(first.leader()), Optional.of(b.leader()), Optional.<Leader>empty()), told);
    s.close();
    mutexes.close();
  }

  @Test
  void aLeaderSilentPastItsLeaseIsReplacedAndItsFencedWritesAreRefused() throws Exception {
    LeaderElection paused = process(Duration.ofMillis(600), Duration.ofMillis(100));
    LeaderElection other = process(Duration.ofMillis(600), Duration.ofMillis(100));
    Leadership old = await(paused.campaign("jobs", "paused", null));
    CompletableFuture<Leadership> next = other.campaign("jobs", "next", null);
    // The process stops heartbeating (as a paused or dead one does): its lease runs out and the reaper elsewhere
    // makes the next candidate leader.
    paused.close();
    Leadership now = await(next);
    assertTrue(now.epoch().isNewerThan(old.epoch()));
    byte[] key = Tuple.from("election-test", "written").pack();
    ExecutionException refused = assertThrows(ExecutionException.class, () ->
        db.runAsync(tr -> old.fence(tr).thenRun(() -> tr.set(key, new byte[] {1}))).get(60, TimeUnit.SECONDS));
    assertTrue(refused.getCause() instanceof MutexException, refused.getCause().toString());
    assertEquals(refused.getCause(), await(old.lost()), "the old leader learns it lost the leadership");
    assertNull(await(db.readAsync(tr -> tr.get(key))), "the old leader wrote nothing");
    await(db.runAsync(tr -> now.fence(tr).thenRun(() -> tr.set(key, new byte[] {2}))));
  }

  /**
   * Many candidates on three processes campaign, write under their epoch through fenced transactions and resign.
   * Every committed write carries the epoch current at its commit: epochs never go down, and no two candidates
   * wrote under one epoch.
   */
  @Test
  void manyCandidatesNeverWriteUnderTwoLeadersAtOnce() throws Exception {
    List<LeaderElection> processes = List.of(process(), process(), process());
    int candidates = 9;
    int terms = 4;
    byte[] counter = Tuple.from("election-test", "counter").pack();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> threads = new ArrayList<>();
    for (int c = 0; c < candidates; c++) {
      LeaderElection e = processes.get(c % processes.size());
      String candidate = "candidate-" + c;
      threads.add(new Thread(() -> {
        try {
          start.await();
          for (int t = 0; t < terms; t++) {
            Leadership l = await(e.campaign("jobs", candidate, Duration.ofSeconds(120)));
            for (int w = 0; w < 3; w++) {
              await(db.runAsync(tr -> l.fence(tr).thenCompose(v -> tr.get(counter)).thenAccept(bytes -> {
                long n = bytes == null ? 0 : Tuple.fromBytes(bytes).getLong(0);
                tr.set(counter, Tuple.from(n + 1).pack());
                tr.set(Tuple.from("election-test", "log", n).pack(), Tuple.from(candidate, l.epoch().bytes()).pack());
              })));
            }
            await(l.resign());
          }
        } catch (Throwable t) {
          failure.compareAndSet(null, t);
        }
      }, candidate));
    }
    threads.forEach(Thread::start);
    start.countDown();
    for (Thread t : threads) {
      t.join(150_000);
      assertFalse(t.isAlive(), t.getName() + " did not finish");
    }
    if (failure.get() != null) {
      throw new AssertionError("a candidate failed", failure.get());
    }
    long writes = Tuple.fromBytes(await(db.readAsync(tr -> tr.get(counter)))).getLong(0);
    assertEquals(candidates * terms * 3L, writes);
    FencingToken epoch = null;
    String writer = null;
    int epochs = 0;
    for (long i = 0; i < writes; i++) {
      long n = i;
      Tuple entry = Tuple.fromBytes(await(db.readAsync(tr -> tr.get(Tuple.from("election-test", "log", n).pack()))));
      FencingToken e = FencingToken.of(entry.getBytes(1));
      String who = entry.getString(0);
      if (epoch != null && e.equals(epoch)) {
        assertEquals(writer, who, "two candidates wrote under epoch " + e);
      } else {
        assertTrue(epoch == null || e.isNewerThan(epoch), "write " + i + " under " + e + " after one under " + epoch);
        epochs++;
      }
      epoch = e;
      writer = who;
    }
    assertEquals(candidates * terms, epochs, "each term wrote under an epoch of its own");
  }
}
