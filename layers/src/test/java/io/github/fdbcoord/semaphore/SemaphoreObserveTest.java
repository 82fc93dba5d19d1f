package io.github.fdbcoord.semaphore;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.Tuple;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.lease.StateSubscription;
import io.github.fdbcoord.semaphore.SemaphoreService.SemaphoreState;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link SemaphoreService#observe}: the current state first, then each change of holders and queue pushed (a queue
 * change alone too), versions only growing, the last state pushed equal to {@code state()} under many contenders,
 * and nothing after close.
 */
class SemaphoreObserveTest extends SemaphoreTestSupport {
  private static final Duration WITHIN = Duration.ofSeconds(30);

  private record Told(FencingToken version, SemaphoreState state) {}

  private static final class Recorder {
    final List<Told> told = new ArrayList<>();

    synchronized void add(FencingToken version, SemaphoreState state) {
      told.add(new Told(version, state));
    }

    synchronized SemaphoreState last() {
      return told.isEmpty() ? null : told.get(told.size() - 1).state();
    }

    synchronized int count() {
      return told.size();
    }

    /** Every version newer than the one before: never an older state after a newer, nor one twice. */
    synchronized List<String> disorders() {
      List<String> out = new ArrayList<>();
      for (int i = 1; i < told.size(); i++) {
        if (!told.get(i).version().isNewerThan(told.get(i - 1).version())) {
          out.add("#" + i + " " + told.get(i) + " after " + told.get(i - 1));
        }
      }
      return out;
    }
  }

  @Test
  void tellsTheCurrentStateThenEachChangeOfHoldersAndQueue() {
    FdbSemaphoreService s = service(quiet());
    SemaphoreHandle a = await(s.acquire("sem", 1, "a", Duration.ZERO));
    Recorder r = new Recorder();
    StateSubscription sub = await(s.observeVersions("sem", r::add));
    assertEquals("sem", sub.name());
    eventually("the current state", WITHIN, () -> r.last() != null);
    assertEquals(List.of("a"), r.last().holders().stream().map(SemaphoreService.Holder::owner).toList());
    assertEquals(a.token(), r.last().holders().get(0).token());

    CompletableFuture<SemaphoreHandle> b = s.acquire("sem", 1, "b", WITHIN);
    // Only the queue changed: pushed through the queue generation.
    eventually("b queued", WITHIN, () -> r.last().waiters().equals(List.of("b")));
    await(a.release());
    SemaphoreHandle bh = await(b);
    eventually("b holds", WITHIN, () -> r.last().waiters().isEmpty() && r.last().holders().size() == 1
        && r.last().holders().get(0).owner().equals("b"));
    assertEquals(bh.token(), r.last().holders().get(0).token());
    await(bh.release());
    eventually("free", WITHIN, () -> r.last().holders().isEmpty());
    assertEquals(await(s.state("sem")), r.last());
    assertEquals(List.of(), r.disorders());
    sub.close();
  }

  @Test
  void aWaiterThatGivesUpIsPushedOutOfTheQueue() {
    FdbSemaphoreService s = service(quiet());
    SemaphoreHandle a = await(s.acquire("q", 1, "a", Duration.ZERO));
    Recorder r = new Recorder();
    await(s.observeVersions("q", r::add));
    CompletableFuture<SemaphoreHandle> b = s.acquire("q", 1, "b", WITHIN);
    eventually("b queued", WITHIN, () -> r.last() != null && r.last().waiters().equals(List.of("b")));
    b.cancel(false);
    eventually("b left", WITHIN, () -> r.last().waiters().isEmpty());
    assertEquals(List.of("a"), r.last().holders().stream().map(SemaphoreService.Holder::owner).toList());
    await(a.release());
  }

  @Test
  void manyContendersTheLastStatePushedIsTheStateAndVersionsOnlyGrow() {
    FdbSemaphoreService[] services = {service(quiet()), service(quiet())};
    Recorder[] recorders = {new Recorder(), new Recorder()};
    StateSubscription[] subs = {await(services[0].observeVersions("busy", recorders[0]::add)),
        await(services[1].observeVersions("busy", recorders[1]::add))};
    ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
    List<CompletableFuture<Void>> all = new ArrayList<>();
    for (int i = 0; i < 16; i++) {
      SemaphoreService s = services[i % 2];
      String owner = "c" + i;
      CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
      for (int cycle = 0; cycle < 3; cycle++) {
        chain = chain.thenCompose(v -> s.acquire("busy", 3, owner, WITHIN)).thenCompose(SemaphoreHandle::release);
      }
      all.add(chain);
    }
    await(CompletableFuture.allOf(all.toArray(new CompletableFuture<?>[0])));
    SemaphoreState end = await(services[0].state("busy"));
    for (Recorder r : recorders) {
      eventually("the last state pushed is the state", WITHIN, () -> end.equals(r.last()));
      violations.addAll(r.disorders());
      synchronized (r) {
        r.told.forEach(t -> {
          if (t.state().holders().size() > 3) {
            violations.add("more holders than permits: " + t);
          }
        });
      }
      assertTrue(r.count() > 2, "changes were pushed, not only the first state: " + r.count());
    }
    assertTrue(violations.isEmpty(), violations.toString());
    for (StateSubscription sub : subs) {
      sub.close();
    }
  }

  @Test
  void closingStopsPushes() {
    FdbSemaphoreService s = service(quiet());
    Recorder closed = new Recorder();
    Recorder open = new Recorder();
    StateSubscription sub = await(s.observeVersions("c", closed::add));
    await(s.observeVersions("c", open::add));
    eventually("both told the current state", WITHIN, () -> closed.count() == 1 && open.count() == 1);
    sub.close();
    AtomicInteger changes = new AtomicInteger();
    for (int i = 0; i < 3; i++) {
      await(await(s.acquire("c", 1, "x" + i, Duration.ZERO)).release());
      changes.incrementAndGet();
    }
    // The open observer saw the last change: the closed one, watching the same keys, would have by now.
    eventually("the open observer saw the changes", WITHIN, () -> open.last().holders().isEmpty() && open.count() > 1);
    assertEquals(1, closed.count(), "nothing told after close");
  }

  @Test
  void aWatchRefusedWithTooManyWatchesIsFollowedByReadsAfterABackOff() {
    // A store that takes one watch: each read's second watch is refused (1032), so the observer lives on its
    // re-reads after a back-off, and still tells every state it reads, never an older one after a newer.
    try (Database small = EmbeddedDatabase.inMemory()) {
      small.options().setMaxWatches(1);
      SemaphoreService s = SemaphoreService.create(small, new Subspace(Tuple.from("observe")), quiet().build());
      try {
        Recorder r = new Recorder();
        StateSubscription sub = await(s.observeVersions("w", r::add));
        eventually("the current state", WITHIN, () -> r.last() != null);
        SemaphoreHandle a = await(s.acquire("w", 2, "a", Duration.ZERO));
        eventually("a holding", WITHIN, () -> r.last().holders().size() == 1);
        SemaphoreHandle b = await(s.acquire("w", 2, "b", Duration.ZERO));
        await(a.release());
        SemaphoreState end = await(s.state("w"));
        eventually("b alone, as state() reads", WITHIN, () -> end.equals(r.last()));
        assertEquals(List.of(), r.disorders());
        await(b.release());
        sub.close();
      } finally {
        s.close();
      }
    }
  }

  @Test
  void refusesABadNameOrListener() {
    FdbSemaphoreService s = service(quiet());
    assertThrows(IllegalArgumentException.class, () -> s.observe("", st -> { }));
    assertThrows(IllegalArgumentException.class, () -> s.observe("x", null));
  }
}
