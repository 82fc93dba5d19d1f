package io.github.fdbcoord.mutex;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.api.MutexState;
import io.github.fdbcoord.api.QueueEntry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Waiters are live or gone: a queue entry nobody heartbeats leaves the queue after the lease
 * instead of being granted; a waiter that heartbeats (by itself through {@code acquire}, or
 * explicitly through {@code heartbeatWaiter}) keeps its place; a restarted host removes what its
 * earlier start left behind; queues are bounded.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MutexLivenessTest extends MutexTestSupport {

  private static List<String> queue(MutexService s, String name) {
    List<String> owners = new ArrayList<>();
    for (QueueEntry q : await(s.state(name)).queue()) {
      owners.add(q.owner());
    }
    return owners;
  }

  @Test
  void silentWaitersLeaveTheQueueAfterTheLeaseAndTheLiveOneIsGranted() throws Exception {
    // A 2 s lease: at 600 ms the live waiter's heartbeat once came a lease late at load 11 (fifth hunt), and the
    // reaper rightly removed it too.
    FdbMutexService s = service(fast().lease(Duration.ofSeconds(2)));
    MutexHandle holder = await(s.acquire("m", "holder"));
    for (int i = 0; i < 5; i++) {
      assertFalse(await(s.tryAcquire("m", "silent-" + i)).isHeld()); // never heartbeats
    }
    CompletableFuture<MutexHandle> live = s.acquire("m", "live", Duration.ofSeconds(20));
    eventually("the live waiter is queued", Duration.ofSeconds(20), () -> queue(s, "m").contains("live"));

    eventually("the silent waiters are removed", Duration.ofSeconds(20), () -> queue(s, "m").equals(List.of("live")));
    assertTrue(s.reaper().removedWaiterCount() >= 5);
    // The live waiter heartbeated its entry all along: it is still queued, two leases later.
    Thread.sleep(2 * s.options().lease().toMillis());
    assertEquals(List.of("live"), queue(s, "m"));
    assertFalse(live.isDone());

    LockEvent handOff = await(holder.release());
    assertEquals(LockEvent.Type.HANDED_OFF, handOff.type());
    assertEquals("live", handOff.owner().orElseThrow());
    assertEquals("live", await(live).owner());
  }

  @Test
  void aWaiterThatHeartbeatsKeepsItsPlaceAndLearnsOfItsGrant() throws Exception {
    // A 2 s lease: at 600 ms, one heartbeat of this loop came a lease late at load 11 in the fifth hunt, and the
    // reaper rightly removed the waiter. Two leases of heartbeats every 100 ms still show the place kept.
    FdbMutexService s = service(fast().lease(Duration.ofSeconds(2)));
    MutexHandle holder = await(s.acquire("m", "holder"));
    AcquireResult queued = await(s.tryAcquire("m", "remote"));
    assertFalse(queued.isHeld());
    long end = System.nanoTime() + 2 * s.options().lease().toNanos();
    while (System.nanoTime() < end) {
      AcquireResult r = await(s.heartbeatWaiter("m", "remote"));
      assertFalse(r.isHeld());
      assertEquals(1, r.position());
      assertEquals(queued.ticket(), r.ticket());
      Thread.sleep(s.options().heartbeatInterval().toMillis());
    }
    assertEquals(List.of("remote"), queue(s, "m"));
    await(holder.release());
    AcquireResult granted = await(s.heartbeatWaiter("m", "remote"));
    assertTrue(granted.isHeld());
    assertEquals(await(s.state("m")).owner().orElseThrow().token(), granted.token().orElseThrow());
    assertEquals(MutexException.Kind.NOT_OWNER,
        failure(MutexException.class, s.heartbeatWaiter("m", "stranger")).kind());
  }

  @Test
  void waiterHeartbeatAndRemovalRacingNeverBothWin() {
    FdbMutexService s = service(quiet());
    MutexReaper reaper = new MutexReaper(s, Duration.ofMillis(1), Duration.ofSeconds(1));
    int removals = 0;
    for (int i = 0; i < 60; i++) {
      String name = "race-" + i;
      await(s.tryAcquire(name, "a"));
      await(s.tryAcquire(name, "b"));
      MutexSchema.Waiter observed = await(s.db.readAsync(
          tr -> s.schema.readWaiters(tr, name, 10), s.executor)).get(0);
      CompletableFuture<AcquireResult> beat = s.heartbeatWaiter(name, "b");
      boolean removed = await(reaper.removeWaiter(name, observed));
      boolean beatWon;
      try {
        await(beat);
        beatWon = true;
      } catch (MutexException e) {
        beatWon = false;
      }
      assertTrue(removed ^ beatWon, "round " + i + ": removed " + removed + ", heartbeat won " + beatWon);
      assertEquals(removed ? List.of() : List.of("b"), queue(s, name));
      removals += removed ? 1 : 0;
    }
    assertEquals(removals, reaper.removedWaiterCount());
  }

  @Test
  void queuesAreBounded() {
    FdbMutexService s = service(quiet().maxQueueLength(3));
    await(s.tryAcquire("m", "holder"));
    for (int i = 0; i < 3; i++) {
      assertEquals(i + 1, await(s.tryAcquire("m", "w" + i)).position());
    }
    MutexQueueFullException full = failure(MutexQueueFullException.class, s.tryAcquire("m", "w3"));
    assertEquals(MutexException.Kind.QUEUE_FULL, full.kind());
    assertEquals(3, full.maxQueueLength());
    assertEquals(MutexException.Kind.QUEUE_FULL, failure(MutexException.class, s.acquire("m", "w4", Duration.ofSeconds(5))).kind());
    // Someone already queued still gets its position back (tryAcquire is idempotent).
    assertEquals(2, await(s.tryAcquire("m", "w1")).position());
    assertEquals(List.of("w0", "w1", "w2"), queue(s, "m"));
  }

  @Test
  void aRestartedHostRemovesTheWaitersAndGrantsOfItsEarlierStart() throws Exception {
    MutexOptions.Builder hostA = quiet().hostId("host-a").directory(path);
    MutexService first = await(MutexService.open(db, hostA.build()));
    MutexService other = await(MutexService.open(db, quiet().hostId("host-b").directory(path).build()));
    try {
      assertTrue(await(first.tryAcquire("m", "dead-holder")).isHeld());
      await(first.tryAcquire("m", "dead-waiter"));
      await(other.tryAcquire("m", "live-elsewhere"));
      await(first.tryAcquire("m", "moved"));
      // 'moved' was queued through host A but kept alive since through host B: it is not A's to remove.
      await(other.heartbeatWaiter("m", "moved"));
      assertTrue(await(first.tryAcquire("n", "dead-only")).isHeld());
      first.close(); // host A dies: nothing is released

      MutexService restarted = await(MutexService.open(db, hostA.build()));
      try {
        MutexState m = await(restarted.state("m"));
        assertEquals("live-elsewhere", m.owner().orElseThrow().owner());
        assertEquals(List.of("moved"), queue(restarted, "m"));
        assertFalse(await(restarted.state("n")).isHeld());
        LockEvent last = await(restarted.latestEvent("m")).orElseThrow();
        assertEquals(LockEvent.Type.EXPIRED, last.type());
        assertEquals("dead-holder", last.previousOwner().orElseThrow());
        assertEquals("live-elsewhere", last.owner().orElseThrow());
      } finally {
        restarted.close();
      }
    } finally {
      first.close();
      other.close();
    }
  }

  @Test
  void withoutAHostIdNothingIsRemovedAtOpen() {
    MutexService first = await(MutexService.open(db, quiet().directory(path).build()));
    await(first.tryAcquire("m", "holder"));
    await(first.tryAcquire("m", "waiter"));
    first.close();
    MutexService second = await(MutexService.open(db, quiet().directory(path).build()));
    try {
      assertEquals("holder", await(second.state("m")).owner().orElseThrow().owner());
      assertEquals(List.of("waiter"), queue(second, "m"));
    } finally {
      second.close();
    }
  }

  @Test
  void eventsFromASequenceAndTheLatestEvent() {
    FdbMutexService s = service(quiet());
    LockEvent acquired = eventOf(s, "a");
    await(s.tryAcquire("m", "b"));
    LockEvent handOff = await(s.release("m", "a"));
    LockEvent released = await(s.release("m", "b"));
    assertEquals(List.of(acquired, handOff, released), await(s.events("m", acquired.sequence(), 100)));
    assertEquals(List.of(handOff, released), await(s.events("m", handOff.sequence(), 100)));
    assertEquals(List.of(acquired), await(s.events("m", acquired.sequence(), 1)));
    assertEquals(released, await(s.latestEvent("m")).orElseThrow());
    assertTrue(await(s.latestEvent("never-used")).isEmpty());
  }

  private static LockEvent eventOf(MutexService s, String owner) {
    FencingToken token = await(s.tryAcquire("m", owner)).token().orElseThrow();
    return await(s.events("m", token, 1)).get(0);
  }

  /**
   * Many waiters over three services, a third of them going away without a word (their processes
   * die: the entry stays, nobody heartbeats it), while live contenders loop acquire/work/release:
   * never two owners, tokens strictly increasing, live waiters served in ticket order, and every
   * silent entry gone from the queue within a few leases.
   */
  @Test
  void manyWaitersSomeSilentNoTwoOwnersFifoAmongLiveOnes() throws Exception {
    List<FdbMutexService> services = List.of(service(fast()), service(fast()), service(fast()));
    int live = 12;
    int rounds = 6;
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger maxInside = new AtomicInteger();
    List<FencingToken> grants = Collections.synchronizedList(new ArrayList<>());
    Map<String, Boolean> silent = new ConcurrentHashMap<>();
    List<Throwable> failures = new CopyOnWriteArrayList<>();
    List<Thread> threads = new ArrayList<>();
    List<String> liveGrantsOutOfOrder = new CopyOnWriteArrayList<>();
    Object ticketLock = new Object();
    com.apple.foundationdb.tuple.Versionstamp[] lastQueueTicket = {null};
    for (int c = 0; c < live; c++) {
      FdbMutexService svc = services.get(c % services.size());
      String owner = "live-" + c;
      Thread t = new Thread(() -> {
        try {
          for (int r = 0; r < rounds; r++) {
            MutexHandle h = await(svc.acquire("hot", owner, Duration.ofSeconds(40)));
            int now = inside.incrementAndGet();
            maxInside.accumulateAndGet(now, Math::max);
            grants.add(h.token());
            synchronized (ticketLock) {
              if (h.ticket().isPresent()) {
                if (lastQueueTicket[0] != null && h.ticket().get().compareTo(lastQueueTicket[0]) < 0) {
                  liveGrantsOutOfOrder.add(owner + " " + h.ticket().get() + " after " + lastQueueTicket[0]);
                }
                lastQueueTicket[0] = h.ticket().get();
              }
            }
            Thread.sleep(5);
            inside.decrementAndGet();
            await(h.release());
            if (r % 2 == 0) {
              String ghost = owner + "-ghost-" + r;
              silent.put(ghost, true);
              svc.tryAcquire("hot", ghost); // enqueues, then never heartbeats
            }
          }
        } catch (Throwable e) {
          failures.add(e);
        }
      });
      threads.add(t);
      t.start();
    }
    for (Thread t : threads) {
      t.join(55_000);
    }
    assertTrue(failures.isEmpty(), () -> "contenders failed: " + failures);
    assertEquals(1, maxInside.get(), "two owners held the mutex at once");
    List<FencingToken> sorted = new ArrayList<>(grants);
    Collections.sort(sorted);
    assertEquals(sorted, grants, "fencing tokens did not increase with each grant");
    assertEquals(List.of(), liveGrantsOutOfOrder, "live waiters were not served in ticket order");
    FdbMutexService s = services.get(0);
    eventually("every silent waiter leaves the queue or its grant expires", Duration.ofSeconds(15), () -> {
      MutexState st = await(s.state("hot"));
      return st.queue().isEmpty() && st.owner().isEmpty();
    });
  }
}
