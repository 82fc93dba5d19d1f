package io.github.fdbcoord.election;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.tuple.Tuple;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.api.QueueEntry;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.mutex.MutexException;
import io.github.fdbcoord.mutex.MutexOptions;
import io.github.fdbcoord.mutex.MutexService;
import io.github.fdbcoord.mutex.NotOwnerException;
import io.github.fdbcoord.mutex.NotQueuedException;
import io.github.fdbcoord.testsupport.LayerTestSupport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link Leadership#handOver}: leadership handed to a named candidate, on the embedded engine. */
@Timeout(180)
class LeaderHandOverTest {
  private Database db;
  private List<String> directory;
  private final List<AutoCloseable> closing = new ArrayList<>();

  @BeforeEach
  void open() {
    db = EmbeddedDatabase.inMemory();
    directory = List.of("test", "election-" + UUID.randomUUID());
  }

  @AfterEach
  void close() throws Exception {
    for (AutoCloseable c : closing) {
      c.close();
    }
    db.close();
  }

  /** One process's elections; lease 10 s (nobody is replaced unless the test stops it), heartbeats every 500 ms. */
  private LeaderElection process() {
    return process(Duration.ofSeconds(10), Duration.ofMillis(500));
  }

  private LeaderElection process(Duration lease, Duration heartbeatInterval) {
    LeaderElection e = await(LeaderElection.open(db, MutexOptions.builder().directory(directory)
        .lease(lease).heartbeatInterval(heartbeatInterval).reaperInterval(Duration.ofMillis(20)).build()));
    closing.add(e);
    return e;
  }

  /** The mutexes under the elections, to read their line; no reaper of its own. */
  private MutexService inspector() {
    MutexService m = await(MutexService.open(db, MutexOptions.builder().directory(directory).reaperEnabled(false)
        .build()));
    closing.add(m);
    return m;
  }

  private static <T> T await(CompletableFuture<T> f) {
    return LayerTestSupport.await(f);
  }

  private static List<String> line(MutexService m, String election) {
    return await(m.state(election)).queue().stream().map(QueueEntry::owner).toList();
  }

  private static void awaitLine(MutexService m, String election, List<String> expected) {
    LayerTestSupport.eventually("the line of " + election + " is " + expected, Duration.ofSeconds(60),
        () -> line(m, election).equals(expected));
  }

  @Test
  void theNamedCandidateLeadsAndThoseQueuedBeforeItKeepTheirOrder() {
    LeaderElection e = process();
    MutexService m = inspector();
    Leadership a = await(e.campaign("jobs", "a", null));
    CompletableFuture<Leadership> b = e.campaign("jobs", "b", null);
    awaitLine(m, "jobs", List.of("b"));
    CompletableFuture<Leadership> c = e.campaign("jobs", "c", null);
    awaitLine(m, "jobs", List.of("b", "c"));
    CompletableFuture<Leadership> d = e.campaign("jobs", "d", null);
    awaitLine(m, "jobs", List.of("b", "c", "d"));

    Leader next = await(a.handOver("c"));
    assertEquals("c", next.candidate());
    assertTrue(next.epoch().isNewerThan(a.epoch()), "a strictly greater epoch");
    Leadership cLeads = await(c);
    assertEquals(next, cLeads.leader(), "c's campaign won with the epoch the hand-over answered");
    assertEquals(Optional.of(next), await(e.leader("jobs")));
    assertFalse(a.isLeading());
    assertFalse(a.lost().isDone(), "a hand-over is no loss");
    assertFalse(b.isDone());
    assertFalse(d.isDone());
    assertEquals(List.of("b", "d"), line(m, "jobs"), "b and d keep their order");
    LockEvent logged = await(m.latestEvent("jobs")).orElseThrow();
    assertEquals(LockEvent.Type.HANDED_OFF, logged.type());
    assertEquals(Optional.of("a"), logged.previousOwner());
    assertEquals(Optional.of("c"), logged.owner());

    await(cLeads.resign());
    Leadership bLeads = await(b);
    assertTrue(bLeads.epoch().isNewerThan(next.epoch()));
    await(bLeads.resign());
    await(await(d).resign());
    assertEquals(Optional.empty(), await(e.leader("jobs")));
  }

  @Test
  void aCandidateThatIsNotCampaigningIsRefusedAndTheLeaderStays() {
    LeaderElection e = process();
    MutexService m = inspector();
    Leadership a = await(e.campaign("jobs", "a", null));
    CompletableFuture<Leadership> b = e.campaign("jobs", "b", null);
    awaitLine(m, "jobs", List.of("b"));
    NotQueuedException refused = assertThrows(NotQueuedException.class, () -> await(a.handOver("zed")));
    assertEquals(MutexException.Kind.NOT_QUEUED, refused.kind());
    assertTrue(refused.getMessage().contains("'zed'"), refused.getMessage());
    assertTrue(a.isLeading());
    assertFalse(a.lost().isDone());
    assertEquals(Optional.of(a.leader()), await(e.leader("jobs")), "the same leader under the same epoch");
    await(a.confirm());
    assertEquals(List.of("b"), line(m, "jobs"));
    IllegalArgumentException self = assertThrows(IllegalArgumentException.class, () -> a.handOver("a"));
    assertTrue(self.getMessage().contains("'a'"), self.getMessage());
    assertThrows(IllegalArgumentException.class, () -> a.handOver(null));
    assertFalse(b.isDone());
    // Once it campaigns the same candidate can be handed the leadership.
    CompletableFuture<Leadership> zed = e.campaign("jobs", "zed", null);
    awaitLine(m, "jobs", List.of("b", "zed"));
    assertEquals("zed", await(a.handOver("zed")).candidate());
    assertEquals("zed", await(zed).leader().candidate());
  }

  @Test
  void aLeaderThatLostItsLeadershipCannotHandItOver() {
    LeaderElection paused = process(Duration.ofMillis(600), Duration.ofMillis(100));
    LeaderElection other = process(Duration.ofMillis(600), Duration.ofMillis(100));
    MutexService m = inspector();
    Leadership old = await(paused.campaign("jobs", "paused", null));
    CompletableFuture<Leadership> next = other.campaign("jobs", "next", null);
    awaitLine(m, "jobs", List.of("next"));
    CompletableFuture<Leadership> third = other.campaign("jobs", "third", null);
    awaitLine(m, "jobs", List.of("next", "third"));
    // Its heartbeats stop as a paused process's do: the reaper elsewhere makes the next candidate leader.
    paused.close();
    Leadership now = await(next);
    NotOwnerException stale = assertThrows(NotOwnerException.class, () -> await(old.handOver("third")));
    assertEquals("next", stale.current().owner());
    assertEquals(stale, await(old.lost()), "the refusal tells the old leader it lost");
    assertEquals(Optional.of(now.leader()), await(other.leader("jobs")), "the current leader is untouched");
    assertEquals(List.of("third"), line(m, "jobs"));
    assertFalse(third.isDone());
    await(now.handOver("third"));
    assertEquals("third", await(third).leader().candidate());
  }

  /**
   * Candidates on three processes campaign again and again; each leader writes fenced records under its epoch and
   * then hands over to a candidate picked at random from the line (resigning only when nobody else is left to lead). Never two
   * leaders at once, epochs strictly increasing in commit order, and every hand-over lands on the candidate named.
   */
  @Test
  void repeatedHandOversAmongManyCampaignersKeepOneLeaderAndLandOnTheNamedCandidate() throws Exception {
    List<LeaderElection> processes = List.of(process(), process(), process());
    MutexService m = inspector();
    int candidates = 12;
    int terms = 3;
    byte[] counter = Tuple.from("handover-test", "counter").pack();
    AtomicInteger leading = new AtomicInteger();
    AtomicInteger unfinished = new AtomicInteger(candidates);
    AtomicInteger mostAtOnce = new AtomicInteger();
    Map<FencingToken, String> wonBy = new ConcurrentHashMap<>();
    List<Leader> handedTo = new CopyOnWriteArrayList<>();
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
            Leadership l = await(e.campaign("jobs", candidate, Duration.ofSeconds(150)));
            mostAtOnce.accumulateAndGet(leading.incrementAndGet(), Math::max);
            if (wonBy.put(l.epoch(), candidate) != null) {
              throw new AssertionError("epoch " + l.epoch() + " won twice");
            }
            for (int w = 0; w < 2; w++) {
              await(db.runAsync(tr -> l.fence(tr).thenCompose(v -> tr.get(counter)).thenAccept(bytes -> {
                long n = bytes == null ? 0 : Tuple.fromBytes(bytes).getLong(0);
                tr.set(counter, Tuple.from(n + 1).pack());
                tr.set(Tuple.from("handover-test", "log", n).pack(),
                    Tuple.from(candidate, l.epoch().bytes()).pack());
              })));
            }
            // Another candidate still to lead is in line or about to be: wait for it, so that terms end in hand-overs.
            List<String> waiting = line(m, "jobs");
            while (waiting.isEmpty() && unfinished.get() > 1) {
              Thread.sleep(1);
              waiting = line(m, "jobs");
            }
            leading.decrementAndGet();
            if (waiting.isEmpty()) {
              await(l.resign());
            } else {
              String chosen = waiting.get(ThreadLocalRandom.current().nextInt(waiting.size()));
              Leader next = await(l.handOver(chosen));
              assertEquals(chosen, next.candidate());
              assertTrue(next.epoch().isNewerThan(l.epoch()));
              handedTo.add(next);
            }
          }
          unfinished.decrementAndGet();
        } catch (Throwable t) {
          failure.compareAndSet(null, t);
        }
      }, candidate));
    }
    threads.forEach(Thread::start);
    start.countDown();
    for (Thread t : threads) {
      t.join(170_000);
      assertFalse(t.isAlive(), t.getName() + " did not finish");
    }
    if (failure.get() != null) {
      throw new AssertionError("a candidate failed", failure.get());
    }
    assertEquals(1, mostAtOnce.get(), "never two leaders at once");
    assertEquals(candidates * terms, wonBy.size());
    // Only the last candidate to finish resigns (each of its terms left), when nobody else is left to lead.
    assertTrue(handedTo.size() >= candidates * terms - terms, "terms that ended in a hand-over: " + handedTo.size());
    for (Leader h : handedTo) {
      assertEquals(h.candidate(), wonBy.get(h.epoch()), "the hand-over to " + h + " made that candidate leader");
    }
    long writes = Tuple.fromBytes(await(db.readAsync(tr -> tr.get(counter)))).getLong(0);
    assertEquals(candidates * terms * 2L, writes);
    FencingToken epoch = null;
    int epochs = 0;
    for (long i = 0; i < writes; i++) {
      long n = i;
      Tuple entry = Tuple.fromBytes(await(db.readAsync(tr -> tr.get(Tuple.from("handover-test", "log", n).pack()))));
      FencingToken e = FencingToken.of(entry.getBytes(1));
      assertEquals(wonBy.get(e), entry.getString(0), "write " + i + " under epoch " + e + " by its winner only");
      if (!e.equals(epoch)) {
        assertTrue(epoch == null || e.isNewerThan(epoch), "write " + i + " under " + e + " after one under " + epoch);
        epochs++;
      }
      epoch = e;
    }
    assertEquals(candidates * terms, epochs, "each term wrote under an epoch of its own, never interleaved");
  }
}
