package io.github.fdbcoord.rwlock;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.lease.StateSubscription;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link ReadWriteLockService#observe}: the current state, each change of holders, modes and queue pushed, versions
 * only growing, the last state pushed equal to {@code state()} under many readers and writers, nothing after close.
 */
class ReadWriteLockObserveTest extends ReadWriteLockTestSupport {
  private static final Duration WITHIN = Duration.ofSeconds(30);

  private record Told(FencingToken version, ReadWriteLockState state) {}

  private static final class Recorder {
    final List<Told> told = new ArrayList<>();

    synchronized void add(FencingToken version, ReadWriteLockState state) {
      told.add(new Told(version, state));
    }

    synchronized ReadWriteLockState last() {
      return told.isEmpty() ? null : told.get(told.size() - 1).state();
    }

    synchronized int count() {
      return told.size();
    }

    synchronized List<String> violations() {
      List<String> out = new ArrayList<>();
      for (int i = 0; i < told.size(); i++) {
        ReadWriteLockState s = told.get(i).state();
        long writers = s.holders().stream().filter(g -> g.mode() == LockMode.WRITE).count();
        if (writers > 1 || (writers == 1 && s.holders().size() > 1)) {
          out.add("a writer beside another holder: " + s);
        }
        if (i > 0 && !told.get(i).version().isNewerThan(told.get(i - 1).version())) {
          out.add("#" + i + " " + told.get(i) + " after " + told.get(i - 1));
        }
      }
      return out;
    }
  }

  private static List<String> modes(ReadWriteLockState s) {
    return s.holders().stream().map(g -> g.owner() + ":" + g.mode()).toList();
  }

  @Test
  void tellsHoldersModesAndQueue() {
    FdbReadWriteLockService s = service(quiet());
    Recorder r = new Recorder();
    StateSubscription sub = await(s.observeVersions("l", r::add));
    eventually("the current (empty) state", WITHIN, () -> r.last() != null);
    assertTrue(r.last().holders().isEmpty() && r.last().queue().isEmpty(), r.last().toString());
    ReadWriteLockHandle w = await(s.acquireWrite("l", "w", Duration.ZERO));
    eventually("the writer", WITHIN, () -> modes(r.last()).equals(List.of("w:WRITE")));
    CompletableFuture<ReadWriteLockHandle> reader = s.acquireRead("l", "r", WITHIN);
    eventually("the reader queued", WITHIN, () -> r.last().queue().equals(
        List.of(new ReadWriteLockState.Request("r", LockMode.READ))));
    ReadWriteLockHandle down = await(w.downgrade());
    await(reader);
    eventually("both read", WITHIN, () -> modes(r.last()).equals(List.of("r:READ", "w:READ"))
        && r.last().queue().isEmpty());
    assertEquals(LockMode.READ, down.mode());
    assertEquals(await(s.state("l")), r.last());
    assertEquals(List.of(), r.violations());
    sub.close();
  }

  @Test
  void manyReadersAndWritersTheLastStatePushedIsTheState() {
    FdbReadWriteLockService[] services = {service(quiet()), service(quiet())};
    Recorder[] recorders = {new Recorder(), new Recorder()};
    StateSubscription[] subs = {await(services[0].observeVersions("busy", recorders[0]::add)),
        await(services[1].observeVersions("busy", recorders[1]::add))};
    List<CompletableFuture<Void>> all = new ArrayList<>();
    for (int i = 0; i < 16; i++) {
      ReadWriteLockService s = services[i % 2];
      String owner = "c" + i;
      CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
      for (int cycle = 0; cycle < 3; cycle++) {
        chain = chain.thenCompose(v -> s.acquire("busy", owner,
                ThreadLocalRandom.current().nextInt(3) == 0 ? LockMode.WRITE : LockMode.READ, WITHIN))
            .thenCompose(ReadWriteLockHandle::release);
      }
      all.add(chain);
    }
    await(CompletableFuture.allOf(all.toArray(new CompletableFuture<?>[0])));
    ReadWriteLockState end = await(services[0].state("busy"));
    ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
    for (Recorder r : recorders) {
      eventually("the last state pushed is the state", WITHIN, () -> end.equals(r.last()));
      violations.addAll(r.violations());
      assertTrue(r.count() > 2, "changes were pushed, not only the first state: " + r.count());
    }
    assertTrue(violations.isEmpty(), violations.toString());
    for (StateSubscription sub : subs) {
      sub.close();
    }
  }

  @Test
  void closingStopsPushes() {
    FdbReadWriteLockService s = service(quiet());
    Recorder closed = new Recorder();
    Recorder open = new Recorder();
    StateSubscription sub = await(s.observeVersions("c", closed::add));
    await(s.observeVersions("c", open::add));
    eventually("both told the current state", WITHIN, () -> closed.count() == 1 && open.count() == 1);
    sub.close();
    for (int i = 0; i < 3; i++) {
      await(await(s.acquireWrite("c", "x" + i, Duration.ZERO)).release());
    }
    eventually("the open observer saw the changes", WITHIN, () -> open.last().holders().isEmpty() && open.count() > 1);
    assertEquals(1, closed.count(), "nothing told after close");
  }

  @Test
  void refusesABadName() {
    FdbReadWriteLockService s = service(quiet());
    assertThrows(IllegalArgumentException.class, () -> s.observe("", st -> { }));
  }
}
