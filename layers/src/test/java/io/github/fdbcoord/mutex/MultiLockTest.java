package io.github.fdbcoord.mutex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.api.MutexState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** {@link MutexService#acquireAll}: several mutexes, all or none, no deadlock, released together. */
class MultiLockTest extends MutexTestSupport {

  @Test
  void takesEveryFreeMutexAndReleasesThemInOneTransaction() {
    MutexService s = service(quiet());
    MultiMutexHandle all = await(s.acquireAll(List.of("b", "a", "c", "a"), "x", null));
    assertEquals(List.of("a", "b", "c"), List.copyOf(all.handles().keySet()), "each name once, in order");
    for (String name : List.of("a", "b", "c")) {
      assertEquals("x", await(s.state(name)).owner().orElseThrow().owner());
      assertEquals(all.tokens().get(name), await(s.state(name)).owner().orElseThrow().token());
    }
    // One commit released all three: their events carry one versionstamp.
    List<LockEvent> released = await(all.release());
    assertEquals(3, released.size());
    assertEquals(1, released.stream().map(LockEvent::sequence).distinct().count(), released.toString());
    for (String name : List.of("a", "b", "c")) {
      assertTrue(await(s.state(name)).owner().isEmpty());
    }
    assertFalse(all.isHeld());
  }

  @Test
  void waitsForEveryMutexAndQueuesOnAllOfThemAtOnce() throws Exception {
    MutexService s = service(quiet());
    MutexHandle b = await(s.acquire("b", "holder"));
    CompletableFuture<MultiMutexHandle> waiting = s.acquireAll(List.of("a", "b"), "x", null);
    eventually("x queued on b", Duration.ofSeconds(30), () -> await(s.state("b")).queue().size() == 1);
    MutexState a = await(s.state("a"));
    assertEquals("x", a.owner().orElseThrow().owner(), "the free mutex was taken in the same transaction");
    assertFalse(waiting.isDone(), "not all are held yet");
    await(b.release());
    MultiMutexHandle all = await(waiting);
    assertTrue(all.isHeld());
    await(all.release());
  }

  @Test
  void aTimeoutGivesBackWhatWasGrantedAndLeavesTheOtherQueues() throws Exception {
    MutexService s = service(quiet());
    MutexHandle b = await(s.acquire("b", "holder"));
    MutexTimeoutException e = failure(MutexTimeoutException.class, s.acquireAll(List.of("a", "b"), "x",
        Duration.ofMillis(300)));
    assertTrue(e.getMessage().contains("'b'"), e.getMessage());
    eventually("a given back", Duration.ofSeconds(30), () -> await(s.state("a")).owner().isEmpty());
    assertTrue(await(s.state("b")).queue().isEmpty(), "x left b's queue");
    assertEquals("holder", await(s.state("b")).owner().orElseThrow().owner());
    await(b.release());
  }

  @Test
  void badInputIsRefusedAtTheCall() {
    MutexService s = service(quiet());
    assertThrows(IllegalArgumentException.class, () -> s.acquireAll(List.of(), "x", null));
    assertThrows(IllegalArgumentException.class, () -> s.acquireAll(null, "x", null));
    assertThrows(IllegalArgumentException.class, () -> s.acquireAll(List.of("a", ""), "x", null));
    assertThrows(IllegalArgumentException.class, () -> s.acquireAll(List.of("a"), "", null));
    assertThrows(IllegalArgumentException.class, () -> s.acquireAll(List.of("a"), "x", Duration.ofMillis(-1)));
    List<String> tooMany = new ArrayList<>();
    for (int i = 0; i <= MutexService.MAX_NAMES_PER_CALL; i++) {
      tooMany.add("m" + i);
    }
    assertThrows(IllegalArgumentException.class, () -> s.acquireAll(tooMany, "x", null));
  }

  /**
   * Callers on three services take random sets of 2-4 of 6 mutexes, listed in random orders (the order that
   * deadlocks lockers taking their locks one by one), beside single-mutex lockers. Every call completes (no
   * deadlock), and no mutex ever has two holders.
   */
  @Test
  void overlappingSetsInAnyOrderNeverDeadlockOrOverlap() throws Exception {
    List<MutexService> services = List.of(service(quiet()), service(quiet()), service(quiet()));
    List<String> mutexes = List.of("m0", "m1", "m2", "m3", "m4", "m5");
    Map<String, String> holders = new ConcurrentHashMap<>();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> threads = new ArrayList<>();
    for (int c = 0; c < 12; c++) {
      MutexService svc = services.get(c % 3);
      boolean single = c % 4 == 3;
      String caller = "caller-" + c;
      threads.add(new Thread(() -> {
        try {
          start.await();
          for (int r = 0; r < 10; r++) {
            List<String> set = new ArrayList<>(mutexes);
            Collections.shuffle(set, ThreadLocalRandom.current());
            set = set.subList(0, single ? 1 : 2 + ThreadLocalRandom.current().nextInt(3));
            String owner = caller + "/" + r;
            MultiMutexHandle held = await(svc.acquireAll(set, owner, Duration.ofSeconds(60)));
            for (String m : set) {
              String was = holders.putIfAbsent(m, owner);
              assertNull(was, owner + " holds " + m + " while " + was + " does");
            }
            assertEquals(Set.copyOf(set), held.handles().keySet());
            for (String m : set) {
              assertTrue(holders.remove(m, owner));
            }
            await(held.release());
          }
        } catch (Throwable t) {
          failure.compareAndSet(null, t);
        }
      }, caller));
    }
    threads.forEach(Thread::start);
    start.countDown();
    for (Thread t : threads) {
      t.join(120_000);
      assertFalse(t.isAlive(), t.getName() + " still waits after 120 s: a deadlock");
    }
    if (failure.get() != null) {
      throw new AssertionError("a caller failed", failure.get());
    }
    for (String m : mutexes) {
      MutexState state = await(services.get(0).state(m));
      assertTrue(state.owner().isEmpty() && state.queue().isEmpty(), m + " is left " + state);
    }
  }
}
