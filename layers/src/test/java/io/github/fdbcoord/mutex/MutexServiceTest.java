package io.github.fdbcoord.mutex;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.api.MutexOwner;
import io.github.fdbcoord.api.MutexState;
import io.github.fdbcoord.api.QueueEntry;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** One test per behaviour of issue 4, on the embedded engine. */
class MutexServiceTest extends MutexTestSupport {

  @Test
  void tryAcquireTakesAFreeMutexAndQueuesOthersInOrder() {
    MutexService s = service(quiet());
    AcquireResult a = await(s.tryAcquire("m", "a"));
    assertTrue(a.isHeld());
    AcquireResult b = await(s.tryAcquire("m", "b"));
    AcquireResult c = await(s.tryAcquire("m", "c"));
    assertFalse(b.isHeld());
    assertEquals(1, b.position());
    assertEquals(2, c.position());
    assertTrue(c.ticket().orElseThrow().compareTo(b.ticket().orElseThrow()) > 0);
    MutexState st = await(s.state("m"));
    assertEquals("a", st.owner().orElseThrow().owner());
    assertEquals(a.token().orElseThrow(), st.owner().orElseThrow().token());
    assertEquals(List.of("b", "c"), st.queue().stream().map(QueueEntry::owner).collect(Collectors.toList()));
  }

  @Test
  void tryAcquireIsIdempotentForHolderAndWaiter() {
    // A retry of a transaction that did commit (commit_unknown_result) runs the same body again:
    // it must find the earlier effect and neither take a new grant nor enqueue twice.
    MutexService s = service(quiet());
    AcquireResult a1 = await(s.tryAcquire("m", "a"));
    AcquireResult a2 = await(s.tryAcquire("m", "a"));
    assertEquals(a1.token(), a2.token());
    AcquireResult b1 = await(s.tryAcquire("m", "b"));
    AcquireResult b2 = await(s.tryAcquire("m", "b"));
    assertEquals(b1.ticket(), b2.ticket());
    assertEquals(1, b2.position());
    assertEquals(1, await(s.state("m")).queue().size());
  }

  @Test
  void tryAcquireRetriedAfterCommitUnknownResultEnqueuesOnce() {
    FdbMutexService s = service(quiet());
    await(s.tryAcquire("m", "a"));
    AcquireResult b = await(committedThenUnknown(s, tr -> s.tryAcquireIn(tr, "m", "b")));
    assertEquals(1, b.position());
    assertEquals(List.of("b"), await(s.state("m")).queue().stream().map(QueueEntry::owner).toList());
    // And a grant retried the same way is the same grant.
    AcquireResult c = await(committedThenUnknown(s, tr -> s.tryAcquireIn(tr, "free", "c")));
    assertEquals(c.token().orElseThrow(), await(s.state("free")).owner().orElseThrow().token());
  }

  @Test
  void releaseRetriedAfterCommitUnknownResultSucceedsOnce() {
    FdbMutexService s = service(quiet());
    FencingToken ta = await(s.tryAcquire("m", "a")).token().orElseThrow();
    await(s.tryAcquire("m", "b"));
    await(s.tryAcquire("m", "c"));
    LockEvent e = await(committedThenUnknown(s, tr -> s.releaseIn(tr, "m", "a", ta)));
    assertEquals(LockEvent.Type.HANDED_OFF, e.type());
    assertEquals(Optional.of("b"), e.owner());
    MutexState st = await(s.state("m"));
    assertEquals("b", st.owner().orElseThrow().owner()); // not handed on a second time to "c"
    assertEquals(List.of("c"), st.queue().stream().map(QueueEntry::owner).toList());
  }

  @Test
  void concurrentTryAcquiresGrantOnceAndQueueEveryoneElseOnce() {
    MutexService s = service(quiet());
    int n = 40;
    List<CompletableFuture<AcquireResult>> fs = new java.util.ArrayList<>();
    for (int i = 0; i < n; i++) {
      fs.add(s.tryAcquire("m", "o" + i));
      fs.add(s.tryAcquire("m", "o" + i)); // each twice at once: still one queue entry
    }
    long held = fs.stream().map(MutexTestSupport::await).filter(AcquireResult::isHeld).count();
    MutexState st = await(s.state("m"));
    String owner = st.owner().orElseThrow().owner();
    assertTrue(held >= 1 && held <= 2, "only the one owner's two calls can report held, got " + held);
    assertEquals(n - 1, st.queue().size());
    assertFalse(st.queue().stream().anyMatch(e -> e.owner().equals(owner)));
    assertEquals(n - 1, st.queue().stream().map(QueueEntry::owner).distinct().count());
  }

  @Test
  void releaseHandsToQueueHeadInTheSameTransaction() {
    MutexService s = service(quiet());
    FencingToken ta = await(s.tryAcquire("m", "a")).token().orElseThrow();
    await(s.tryAcquire("m", "b"));
    await(s.tryAcquire("m", "c"));
    LockEvent e = await(s.release("m", "a"));
    assertEquals(LockEvent.Type.HANDED_OFF, e.type());
    assertEquals(Optional.of("a"), e.previousOwner());
    assertEquals(Optional.of(ta), e.previousToken());
    assertEquals(Optional.of("b"), e.owner());
    MutexState st = await(s.state("m"));
    assertEquals("b", st.owner().orElseThrow().owner());
    assertEquals(e.token().orElseThrow(), st.owner().orElseThrow().token());
    assertEquals(List.of("c"), st.queue().stream().map(QueueEntry::owner).collect(Collectors.toList()));
    assertEquals(LockEvent.Type.HANDED_OFF, await(s.release("m", "b")).type());
    LockEvent last = await(s.release("m", "c"));
    assertEquals(LockEvent.Type.RELEASED, last.type());
    assertFalse(await(s.state("m")).isHeld());
  }

  @Test
  void onlyTheOwnerCanRelease() {
    MutexService s = service(quiet());
    MutexNotHeldException notHeld = failure(MutexNotHeldException.class, s.release("m", "a"));
    assertEquals(MutexException.Kind.NOT_HELD, notHeld.kind());
    FencingToken ta = await(s.tryAcquire("m", "a")).token().orElseThrow();
    NotOwnerException notOwner = failure(NotOwnerException.class, s.release("m", "b"));
    assertEquals(MutexException.Kind.NOT_OWNER, notOwner.kind());
    assertEquals("a", notOwner.current().owner());
    assertEquals("a", await(s.state("m")).owner().orElseThrow().owner());
    // A token that is not the current grant's is refused even for the right owner name.
    FencingToken wrong = FencingToken.of(new byte[10]);
    failure(NotOwnerException.class, s.release("m", "a", wrong));
    assertEquals(LockEvent.Type.RELEASED, await(s.release("m", "a", ta)).type());
    failure(MutexNotHeldException.class, s.heartbeat("m", "a"));
  }

  @Test
  void releaseOfTheSameGrantTwiceReturnsTheFirstRelease() {
    // What a release retried after commit_unknown_result sees: its grant already ended by itself.
    MutexService s = service(quiet());
    FencingToken ta = await(s.tryAcquire("m", "a")).token().orElseThrow();
    await(s.tryAcquire("m", "b"));
    LockEvent first = await(s.release("m", "a", ta));
    LockEvent again = await(s.release("m", "a", ta));
    assertEquals(first, again);
    assertEquals("b", await(s.state("m")).owner().orElseThrow().owner());
  }

  @Test
  void heartbeatUpdatesTheOwnerRecordOnly() {
    MutexService s = service(quiet());
    FencingToken ta = await(s.tryAcquire("m", "a")).token().orElseThrow();
    MutexOwner h1 = await(s.heartbeat("m", "a"));
    MutexOwner h2 = await(s.heartbeat("m", "a", ta));
    assertEquals(1, h1.heartbeats());
    assertEquals(2, h2.heartbeats());
    assertEquals(ta, h2.token());
    failure(NotOwnerException.class, s.heartbeat("m", "b"));
    assertEquals(h2, await(s.state("m")).owner().orElseThrow());
  }

  @Test
  void acquireWaitsForTheWatchAndHeartbeatsItsGrant() throws Exception {
    FdbMutexService s = service(quiet().heartbeatInterval(Duration.ofMillis(50)));
    MutexHandle a = await(s.acquire("m", "a", Duration.ofSeconds(10)));
    CompletableFuture<MutexHandle> b = s.acquire("m", "b", Duration.ofSeconds(10));
    eventually("b queued", Duration.ofSeconds(5), () -> await(s.state("m")).queue().size() == 1);
    assertFalse(b.isDone());
    await(a.release());
    MutexHandle hb = await(b);
    assertEquals("b", hb.owner());
    assertTrue(hb.token().isNewerThan(a.token()));
    assertTrue(hb.ticket().isPresent());
    // The queue-granted owner heartbeats by itself.
    eventually("b heartbeats", Duration.ofSeconds(5),
        () -> await(s.state("m")).owner().orElseThrow().heartbeats() >= 3);
    await(hb.release());
  }

  @Test
  void heartbeatsDoNotWakeWaiters() throws Exception {
    FdbMutexService s = service(quiet());
    FencingToken ta = await(s.tryAcquire("m", "a")).token().orElseThrow();
    CompletableFuture<MutexHandle> b = s.acquire("m", "b", Duration.ofSeconds(20));
    eventually("b waits on the watch", Duration.ofSeconds(5), () -> s.watcherReads("m") >= 1);
    Thread.sleep(50);
    long before = s.watcherReads("m");
    for (int i = 0; i < 30; i++) {
      await(s.heartbeat("m", "a", ta));
    }
    Thread.sleep(100);
    assertEquals(before, s.watcherReads("m"), "a heartbeat woke the waiter");
    assertFalse(b.isDone());
    await(s.release("m", "a"));
    assertEquals("b", await(b).owner());
  }

  @Test
  void acquireTimesOutAndLeavesTheQueue() {
    MutexService s = service(quiet());
    await(s.tryAcquire("m", "a"));
    long t0 = System.nanoTime();
    MutexTimeoutException e = failure(MutexTimeoutException.class, s.acquire("m", "b", Duration.ofMillis(200)));
    long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    assertEquals(MutexException.Kind.TIMED_OUT, e.kind());
    assertTrue(ms >= 190, "timed out after " + ms + " ms");
    assertTrue(await(s.state("m")).queue().isEmpty());
    // Zero timeout: try once, never stay queued.
    failure(MutexTimeoutException.class, s.acquire("m", "c", Duration.ZERO));
    assertTrue(await(s.state("m")).queue().isEmpty());
    // The release then finds nobody waiting.
    assertEquals(LockEvent.Type.RELEASED, await(s.release("m", "a")).type());
  }

  @Test
  void givingUpAfterTheGrantRacedKeepsTheGrant() {
    // What a timed-out acquire does when the hand-off committed just before its leave transaction:
    // the grant is returned, never leaked and never left in a queue.
    FdbMutexService s = service(quiet());
    await(s.tryAcquire("m", "a"));
    await(s.tryAcquire("m", "b"));
    await(s.tryAcquire("m", "c"));
    LockEvent handoff = await(s.release("m", "a"));
    MutexOwner kept = await(s.leaveUnlessGranted("m", "b"));
    assertEquals(handoff.token().orElseThrow(), kept.token());
    assertEquals(null, await(s.leaveUnlessGranted("m", "c")));
    MutexState st = await(s.state("m"));
    assertEquals("b", st.owner().orElseThrow().owner());
    assertTrue(st.queue().isEmpty());
  }

  @Test
  void cancellingAnAcquireLeavesTheQueue() throws Exception {
    MutexService s = service(quiet());
    await(s.tryAcquire("m", "a"));
    CompletableFuture<MutexHandle> b = s.acquire("m", "b");
    eventually("b queued", Duration.ofSeconds(5), () -> await(s.state("m")).queue().size() == 1);
    b.cancel(true);
    eventually("b left", Duration.ofSeconds(5), () -> await(s.state("m")).queue().isEmpty());
    assertEquals(LockEvent.Type.RELEASED, await(s.release("m", "a")).type());
  }

  @Test
  void leaveRemovesAWaiter() {
    MutexService s = service(quiet());
    await(s.tryAcquire("m", "a"));
    await(s.tryAcquire("m", "b"));
    assertTrue(await(s.leave("m", "b")));
    assertFalse(await(s.leave("m", "b")));
    assertEquals(LockEvent.Type.RELEASED, await(s.release("m", "a")).type());
  }

  @Test
  void fencingTokensStrictlyIncreaseAcrossGrants() {
    MutexService s = service(quiet());
    FencingToken last = null;
    for (int i = 0; i < 20; i++) {
      MutexHandle h = await(s.acquire("m", "o" + (i % 3), Duration.ofSeconds(5)));
      if (last != null) {
        assertTrue(h.token().isNewerThan(last), h.token() + " after " + last);
      }
      last = h.token();
      await(h.release());
    }
  }

  @Test
  void eventsReportEveryTransitionInOrder() throws Exception {
    FdbMutexService s = service(quiet());
    FdbMutexService other = service(quiet()); // another process: transitions are seen through the log
    List<LockEvent> seen = new CopyOnWriteArrayList<>();
    MutexSubscription sub = await(s.subscribe("m", seen::add));
    FencingToken ta = await(other.tryAcquire("m", "a")).token().orElseThrow();
    await(other.tryAcquire("m", "b"));
    LockEvent handoff = await(other.release("m", "a"));
    await(other.release("m", "b"));
    eventually("4 events", Duration.ofSeconds(5), () -> seen.size() >= 3);
    assertEquals(List.of(LockEvent.Type.ACQUIRED, LockEvent.Type.HANDED_OFF, LockEvent.Type.RELEASED),
        seen.stream().map(LockEvent::type).collect(Collectors.toList()));
    assertEquals(ta, seen.get(0).sequence());
    assertEquals(handoff, seen.get(1));
    assertEquals(Optional.of("b"), seen.get(2).previousOwner());
    sub.close();
    await(other.tryAcquire("m", "c"));
    Thread.sleep(100);
    assertEquals(3, seen.size(), "closed subscription still delivers");
  }

  @Test
  void manyMutexesUnderOneDirectoryAreIndependent() {
    MutexService s = service(quiet());
    assertTrue(await(s.tryAcquire("m1", "a")).isHeld());
    assertTrue(await(s.tryAcquire("m2", "b")).isHeld());
    assertTrue(await(s.tryAcquire("m2/x", "a")).isHeld());
    failure(NotOwnerException.class, s.release("m1", "b"));
    assertEquals(LockEvent.Type.RELEASED, await(s.release("m2", "b")).type());
    assertEquals("a", await(s.state("m1")).owner().orElseThrow().owner());
  }

  @Test
  void heldMutexesArePagedInKeyOrder() {
    MutexService s = service(quiet());
    for (String n : List.of("c", "a", "d", "b")) {
      await(s.tryAcquire(n, "o"));
    }
    await(s.release("d", "o"));
    assertEquals(List.of("a", "b"), await(s.heldMutexes(null, 2)));
    assertEquals(List.of("c"), await(s.heldMutexes("b", 2)));
    assertEquals(List.of(), await(s.heldMutexes("c", 2)));
    assertThrows(IllegalArgumentException.class, () -> s.heldMutexes(null, 0));
  }

  @Test
  void badInputIsRefusedClearly() {
    MutexService s = service(quiet());
    assertThrows(IllegalArgumentException.class, () -> s.tryAcquire("", "a"));
    assertThrows(IllegalArgumentException.class, () -> s.tryAcquire("m", null));
    assertThrows(IllegalArgumentException.class, () -> s.acquire("m", "a", Duration.ofMillis(-1)));
    assertThrows(IllegalArgumentException.class, () -> s.release("m", "x".repeat(5000)));
    assertThrows(IllegalArgumentException.class, () -> s.subscribe("m", null));
    assertThrows(IllegalArgumentException.class,
        () -> MutexOptions.builder().lease(Duration.ofSeconds(1)).heartbeatInterval(Duration.ofSeconds(2)).build());
    assertThrows(IllegalArgumentException.class, () -> MutexOptions.builder().lease(Duration.ZERO));
    assertThrows(IllegalArgumentException.class, () -> MutexOptions.builder().directory(List.of()));
  }

  @Test
  void hugeTimeoutMeansNoPracticalLimit() {
    MutexService s = service(quiet());
    MutexHandle h = await(s.acquire("m", "a", Duration.ofSeconds(Long.MAX_VALUE)));
    assertTrue(h.isHeld());
    await(h.release());
    assertFalse(h.isHeld());
  }

  @Test
  void closingTheServiceFailsWaitersAndRefusesNewWork() throws Exception {
    FdbMutexService s = service(quiet());
    await(s.tryAcquire("m", "a"));
    CompletableFuture<MutexHandle> b = s.acquire("m", "b");
    eventually("b waits", Duration.ofSeconds(5), () -> s.watcherReads("m") >= 1);
    s.close();
    assertEquals(MutexException.Kind.CLOSED, failure(MutexException.class, b).kind());
    assertEquals(MutexException.Kind.CLOSED, assertThrows(MutexException.class, () -> s.acquire("m", "c")).kind());
  }

  @Test
  void openCreatesTheConfiguredDirectory() {
    MutexService s = await(MutexService.open(db, quiet().directory(path).build()));
    try {
      assertTrue(await(s.tryAcquire("m", "a")).isHeld());
      MutexService same = service(quiet());
      assertEquals("a", await(same.state("m")).owner().orElseThrow().owner());
    } finally {
      s.close();
    }
  }
}
