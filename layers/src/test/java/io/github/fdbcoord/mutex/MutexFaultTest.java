package io.github.fdbcoord.mutex;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.api.MutexOwner;
import io.github.fdbcoord.api.MutexState;
import io.github.fdbcoord.api.QueueEntry;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Owners that stop heartbeating, late heartbeats and releases, racing reapers; and the reference implementation's defects. */
class MutexFaultTest extends MutexTestSupport {
  private static final Duration LEASE = Duration.ofMillis(600);
  private static final Duration HEARTBEAT = Duration.ofMillis(200);

  @Test
  void silentOwnerIsReplacedWithinLeasePlusOneHeartbeatInterval() {
    FdbMutexService s = service(fast().heartbeatInterval(HEARTBEAT));
    FencingToken ta = await(s.tryAcquire("m", "a")).token().orElseThrow();
    CompletableFuture<MutexHandle> b = s.acquire("m", "b", Duration.ofSeconds(10));
    for (int i = 0; i < 3; i++) {
      await(s.heartbeat("m", "a", ta));
      sleep(HEARTBEAT.toMillis());
    }
    await(s.heartbeat("m", "a", ta));
    long lastBeat = System.nanoTime(); // "a" stops here
    MutexHandle hb = await(b);
    long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lastBeat);
    assertTrue(ms >= LEASE.toMillis(), "evicted after " + ms + " ms, before the lease");
    assertTrue(ms <= LEASE.plus(HEARTBEAT).toMillis(), "replaced after " + ms + " ms, lease + heartbeat is "
        + LEASE.plus(HEARTBEAT).toMillis());
    assertTrue(hb.token().isNewerThan(ta));
    await(hb.release());
  }

  @Test
  void evictedOwnersLateHeartbeatAndReleaseFailAndDoNotDisturbTheNewOwner() throws Exception {
    FdbMutexService s = service(fast());
    List<LockEvent> events = new CopyOnWriteArrayList<>();
    await(s.subscribe("m", events::add));
    FencingToken ta = await(s.tryAcquire("m", "a")).token().orElseThrow();
    MutexHandle b = await(s.acquire("m", "b", Duration.ofSeconds(10)));
    eventually("b heartbeats", Duration.ofSeconds(5), () -> await(s.state("m")).owner().orElseThrow().heartbeats() > 0);
    MutexOwner before = await(s.state("m")).owner().orElseThrow();

    NotOwnerException hb = failure(NotOwnerException.class, s.heartbeat("m", "a", ta));
    assertEquals("b", hb.current().owner());
    failure(NotOwnerException.class, s.heartbeat("m", "a"));
    failure(NotOwnerException.class, s.release("m", "a", ta));
    failure(NotOwnerException.class, s.release("m", "a"));

    MutexOwner after = await(s.state("m")).owner().orElseThrow();
    assertEquals("b", after.owner());
    assertEquals(before.token(), after.token());
    assertTrue(b.isHeld());
    eventually("events seen", Duration.ofSeconds(5), () -> events.size() >= 2);
    assertEquals(LockEvent.Type.EXPIRED, events.get(1).type());
    assertEquals("a", events.get(1).previousOwner().orElseThrow());
    assertEquals(ta, events.get(1).previousToken().orElseThrow());
    assertEquals("b", events.get(1).owner().orElseThrow());
    await(b.release());
  }

  @Test
  void handleLearnsItWasEvictedAndStopsHeartbeating() {
    // The holder's process stalls longer than the lease (its heartbeat interval is longer than the
    // reaper's lease): its next heartbeat finds another owner and the handle reports the loss.
    FdbMutexService holder = service(quiet().heartbeatInterval(Duration.ofMillis(1500)).lease(Duration.ofSeconds(3)));
    FdbMutexService reaperSide = service(fast().lease(Duration.ofMillis(500)).heartbeatInterval(Duration.ofMillis(50)));
    MutexHandle a = await(holder.acquire("m", "a", Duration.ofSeconds(5)));
    MutexHandle b = await(reaperSide.acquire("m", "b", Duration.ofSeconds(10)));
    MutexException lost = await(a.lost());
    assertEquals(MutexException.Kind.NOT_OWNER, lost.kind());
    assertFalse(a.isHeld());
    assertEquals(0, holder.heartbeatingHandles());
    failure(NotOwnerException.class, a.release());
    assertEquals(b.token(), await(holder.state("m")).owner().orElseThrow().token());
    await(b.release());
  }

  @Test
  void heartbeatAndHandOffRacingNeverBothWin() {
    // Each round: an owner record observed by the reaper, then a heartbeat and an expiry started at once.
    FdbMutexService s = service(quiet());
    MutexReaper reaper = new MutexReaper(s, Duration.ofMillis(1), Duration.ofSeconds(1));
    int heartbeatsWon = 0;
    int expiriesWon = 0;
    for (int i = 0; i < 100; i++) {
      String name = "race-" + i;
      FencingToken t = await(s.tryAcquire(name, "a")).token().orElseThrow();
      await(s.tryAcquire(name, "b"));
      byte[] observed = await(s.db.readAsync(tr -> s.schema.readOwnerBytes(tr, name), s.executor));
      CompletableFuture<MutexOwner> beat = s.heartbeat(name, "a", t);
      CompletableFuture<Boolean> expiry = reaper.expire(name, observed);
      boolean expired = await(expiry);
      boolean beatWon;
      try {
        await(beat);
        beatWon = true;
      } catch (NotOwnerException e) {
        beatWon = false;
      }
      MutexOwner owner = await(s.state(name)).owner().orElseThrow();
      if (expired) {
        assertFalse(beatWon, "round " + i + ": heartbeat succeeded after its owner was evicted");
        assertEquals("b", owner.owner());
        expiriesWon++;
      } else {
        assertTrue(beatWon, "round " + i + ": neither won");
        assertEquals("a", owner.owner());
        heartbeatsWon++;
      }
    }
    assertEquals(100, heartbeatsWon + expiriesWon);
  }

  @Test
  void twoReapersRacingHandTheLockOnOnce() throws Exception {
    FdbMutexService s1 = service(fast());
    FdbMutexService s2 = service(fast());
    List<LockEvent> events = new CopyOnWriteArrayList<>();
    await(s1.subscribe("m", events::add));
    await(s1.tryAcquire("m", "a"));
    CompletableFuture<MutexHandle> c = s2.acquire("m", "c", Duration.ofSeconds(10));
    eventually("c queued", Duration.ofSeconds(5), () -> await(s1.state("m")).queue().size() == 1);
    // "a" does not heartbeat: it is expired once, by one of the two reapers; "c" heartbeats (its
    // queue entry, then its grant) and stays. (A waiter that does not heartbeat would be removed
    // from the queue instead: MutexLivenessTest.)
    MutexHandle hc = await(c);
    Thread.sleep(2 * LEASE.toMillis());
    assertEquals("c", await(s1.state("m")).owner().orElseThrow().owner());
    assertEquals(List.of(LockEvent.Type.ACQUIRED, LockEvent.Type.EXPIRED),
        events.stream().map(LockEvent::type).toList());
    assertEquals(1, s1.reaper().expiredCount() + s2.reaper().expiredCount());
    await(hc.release());
  }

  @Test
  void twoReapersExpiringTheSameRecordHandOffOnce() {
    FdbMutexService s = service(quiet());
    MutexReaper r1 = new MutexReaper(s, Duration.ofMillis(1), Duration.ofSeconds(1));
    MutexReaper r2 = new MutexReaper(s, Duration.ofMillis(1), Duration.ofSeconds(1));
    for (int i = 0; i < 50; i++) {
      String name = "duel-" + i;
      await(s.tryAcquire(name, "x"));
      await(s.tryAcquire(name, "y"));
      await(s.tryAcquire(name, "z"));
      byte[] observed = await(s.db.readAsync(tr -> s.schema.readOwnerBytes(tr, name), s.executor));
      CompletableFuture<Boolean> e1 = r1.expire(name, observed);
      CompletableFuture<Boolean> e2 = r2.expire(name, observed);
      assertTrue(await(e1) ^ await(e2), "round " + i + ": both or neither reaper handed off");
      MutexState st = await(s.state(name));
      assertEquals("y", st.owner().orElseThrow().owner());
      assertEquals(List.of("z"), st.queue().stream().map(QueueEntry::owner).toList());
    }
  }

  @Test
  void reaperScansEveryPageOfHeldMutexes() throws Exception {
    FdbMutexService s = service(quiet());
    int n = MutexReaper.PAGE + 150;
    List<CompletableFuture<AcquireResult>> taken = new java.util.ArrayList<>();
    for (int i = 0; i < n; i++) {
      taken.add(s.tryAcquire(String.format("page-%04d", i), "silent"));
    }
    taken.forEach(MutexTestSupport::await);
    FdbMutexService reaping = service(fast());
    eventually("every silent owner expired", Duration.ofSeconds(20), () -> reaping.reaper().expiredCount() == n);
    assertFalse(await(s.state("page-0000")).isHeld());
    assertFalse(await(s.state(String.format("page-%04d", n - 1))).isHeld());
  }

  // ---------------------------------------------------------------- janderland/fdb-mutex defects

  @Test
  void creatingAServiceNeverEvictsTheHolder() {
    FdbMutexService s = service(quiet());
    FencingToken ta = await(s.tryAcquire("m", "a")).token().orElseThrow();
    for (int i = 0; i < 3; i++) {
      MutexService other = service(quiet());
      assertEquals(new MutexOwner("a", ta, 0), await(other.state("m")).owner().orElseThrow());
    }
  }

  @Test
  void queueGrantedOwnerHeartbeatsAndIsNotReaped() throws Exception {
    FdbMutexService s = service(fast());
    MutexHandle a = await(s.acquire("m", "a", Duration.ofSeconds(5)));
    CompletableFuture<MutexHandle> bf = s.acquire("m", "b", Duration.ofSeconds(5));
    eventually("b queued", Duration.ofSeconds(5), () -> await(s.state("m")).queue().size() == 1);
    await(a.release());
    MutexHandle b = await(bf);
    Thread.sleep(LEASE.toMillis() * 3);
    MutexOwner owner = await(s.state("m")).owner().orElseThrow();
    assertEquals("b", owner.owner());
    assertEquals(b.token(), owner.token());
    assertTrue(owner.heartbeats() >= 5, "only " + owner.heartbeats() + " heartbeats");
    assertEquals(0, s.reaper().expiredCount());
    await(b.release());
  }

  @Test
  void releaseWithoutAnyHeartbeatRunningCompletes() {
    FdbMutexService s = service(quiet());
    await(s.tryAcquire("m", "a"));
    assertEquals(0, s.heartbeatingHandles());
    assertEquals(LockEvent.Type.RELEASED, await(s.release("m", "a")).type());
  }

  @Test
  void lateHeartbeatAfterReapNeverRecreatesOwnership() throws Exception {
    FdbMutexService s = service(fast());
    FencingToken ta = await(s.tryAcquire("m", "a")).token().orElseThrow();
    eventually("a expired", Duration.ofSeconds(5), () -> !await(s.state("m")).isHeld());
    failure(MutexNotHeldException.class, s.heartbeat("m", "a", ta));
    failure(MutexNotHeldException.class, s.heartbeat("m", "a"));
    assertFalse(await(s.state("m")).isHeld());
    // The same owner name acquiring again gets a new grant; the old token stays refused.
    FencingToken again = await(s.tryAcquire("m", "a")).token().orElseThrow();
    assertTrue(again.isNewerThan(ta));
    failure(NotOwnerException.class, s.heartbeat("m", "a", ta));
    assertEquals(again, await(s.heartbeat("m", "a", again)).token());
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
