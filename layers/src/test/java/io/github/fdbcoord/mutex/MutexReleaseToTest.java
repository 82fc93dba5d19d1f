package io.github.fdbcoord.mutex;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.api.MutexState;
import io.github.fdbcoord.api.QueueEntry;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link MutexService#releaseTo}: a release that hands the grant to a named waiter, on the embedded engine. */
class MutexReleaseToTest extends MutexTestSupport {

  private static List<String> queue(MutexState state) {
    return state.queue().stream().map(QueueEntry::owner).toList();
  }

  @Test
  void theNamedWaiterIsGrantedAndTheWaitersBeforeItKeepTheirPlaces() {
    List<LockEvent> hinted = new CopyOnWriteArrayList<>();
    FdbMutexService s = service(quiet().handOffNotifier((name, owner, token) ->
        hinted.add(new LockEvent(LockEvent.Type.HANDED_OFF, name, token, Optional.empty(), Optional.empty(),
            Optional.of(owner)))));
    FencingToken ta = await(s.tryAcquire("m", "a")).token().orElseThrow();
    for (String w : List.of("b", "c", "d")) {
      await(s.tryAcquire("m", w));
    }
    LockEvent e = await(s.releaseTo("m", "a", ta, "c"));
    assertEquals(LockEvent.Type.HANDED_OFF, e.type());
    assertEquals(Optional.of("a"), e.previousOwner());
    assertEquals(Optional.of(ta), e.previousToken());
    assertEquals(Optional.of("c"), e.owner());
    assertTrue(e.sequence().isNewerThan(ta));
    MutexState st = await(s.state("m"));
    assertEquals("c", st.owner().orElseThrow().owner());
    assertEquals(e.sequence(), st.owner().orElseThrow().token(), "the new grant's token is the hand-over's commit");
    assertEquals(List.of("b", "d"), queue(st), "b, queued before c, keeps its place at the head");
    assertEquals(Optional.of(e), await(s.latestEvent("m")), "the hand-over is logged");
    eventually("the hand-off notifier is told", Duration.ofSeconds(20), () -> !hinted.isEmpty());
    assertEquals("c", hinted.get(0).owner().orElseThrow());
    assertEquals(e.sequence(), hinted.get(0).sequence());
    // FIFO again among the rest.
    assertEquals(Optional.of("b"), await(s.release("m", "c")).owner());
    assertEquals(Optional.of("d"), await(s.release("m", "b")).owner());
  }

  @Test
  void aSuccessorThatDoesNotWaitIsRefusedAndNothingChanges() {
    MutexService s = service(quiet());
    FencingToken ta = await(s.tryAcquire("m", "a")).token().orElseThrow();
    await(s.tryAcquire("m", "b"));
    await(s.heartbeat("m", "a", ta));
    MutexState before = await(s.state("m"));
    LockEvent latest = await(s.latestEvent("m")).orElseThrow();
    NotQueuedException refused = failure(NotQueuedException.class, s.releaseTo("m", "a", ta, "nobody"));
    assertEquals(MutexException.Kind.NOT_QUEUED, refused.kind());
    assertEquals("nobody", refused.successor());
    assertEquals("a", refused.holder());
    assertTrue(refused.getMessage().contains("'nobody'") && refused.getMessage().contains("'a' keeps it"),
        refused.getMessage());
    assertEquals(before, await(s.state("m")), "owner record (heartbeats included) and queue unchanged");
    assertEquals(Optional.of(latest), await(s.latestEvent("m")), "nothing logged");
    // A waiter that left is no longer queued either.
    assertTrue(await(s.leave("m", "b")));
    failure(NotQueuedException.class, s.releaseTo("m", "a", ta, "b"));
    assertEquals("a", await(s.state("m")).owner().orElseThrow().owner());
    IllegalArgumentException self = assertThrows(IllegalArgumentException.class, () -> s.releaseTo("m", "a", ta, "a"));
    assertTrue(self.getMessage().contains("'a'"), self.getMessage());
    assertThrows(IllegalArgumentException.class, () -> s.releaseTo("m", "a", null, "b"));
    assertThrows(IllegalArgumentException.class, () -> s.releaseTo("m", "a", ta, ""));
  }

  @Test
  void anEndedGrantIsRefusedAsARelease() {
    MutexService s = service(quiet());
    FencingToken ta = await(s.tryAcquire("m", "a")).token().orElseThrow();
    await(s.tryAcquire("m", "b"));
    await(s.tryAcquire("m", "c"));
    await(s.release("m", "a", ta));
    NotOwnerException stale = failure(NotOwnerException.class, s.releaseTo("m", "a", ta, "c"));
    assertEquals("b", stale.current().owner());
    assertEquals(List.of("c"), queue(await(s.state("m"))), "c still waits, behind b's grant");
    FencingToken tb = await(s.state("m")).owner().orElseThrow().token();
    failure(NotOwnerException.class, s.releaseTo("m", "b", ta, "c"));
    failure(NotOwnerException.class, s.releaseTo("m", "c", tb, "b"));
    await(s.release("m", "b", tb));
    await(s.release("m", "c"));
    failure(MutexNotHeldException.class, s.releaseTo("m", "c", tb, "b"));
  }

  @Test
  void aHandOverRetriedAfterCommitUnknownResultSucceedsOnce() {
    FdbMutexService s = service(quiet());
    FencingToken ta = await(s.tryAcquire("m", "a")).token().orElseThrow();
    for (String w : List.of("b", "c", "d")) {
      await(s.tryAcquire("m", w));
    }
    LockEvent e = await(committedThenUnknown(s, tr -> s.releaseToIn(tr, "m", "a", ta, "c")));
    assertEquals(Optional.of("c"), e.owner());
    MutexState st = await(s.state("m"));
    assertEquals("c", st.owner().orElseThrow().owner());
    assertEquals(e.sequence(), st.owner().orElseThrow().token());
    assertEquals(List.of("b", "d"), queue(st), "not handed on a second time");
    assertEquals(List.of(e), await(s.events("m", e.sequence(), 10)), "one hand-over logged");
    // A caller repeating the hand-over (its answer lost) gets the same one; a hand-over to another is refused.
    assertEquals(e, await(s.releaseTo("m", "a", ta, "c")));
    failure(NotOwnerException.class, s.releaseTo("m", "a", ta, "b"));
  }

  @Test
  void aWaitingAcquireOfTheSuccessorCompletesAndTheHandleStopsHeartbeating() {
    MutexService s = service(quiet());
    MutexHandle a = await(s.acquire("m", "a"));
    CompletableFuture<MutexHandle> b = s.acquire("m", "b");
    CompletableFuture<MutexHandle> c = s.acquire("m", "c");
    eventually("b and c queued", Duration.ofSeconds(20), () -> queue(await(s.state("m"))).equals(List.of("b", "c")));
    NotQueuedException refused = failure(NotQueuedException.class, a.releaseTo("x"));
    assertEquals("x", refused.successor());
    assertTrue(a.isHeld(), "a refused hand-over keeps the grant");
    await(a.heartbeat());
    assertFalse(a.lost().isDone());
    LockEvent e = await(a.releaseTo("c"));
    MutexHandle held = await(c);
    assertEquals(e.sequence(), held.token());
    assertFalse(a.isHeld());
    assertFalse(b.isDone(), "b still waits");
    assertEquals(List.of("b"), queue(await(s.state("m"))));
    assertFalse(a.lost().isDone(), "a hand-over is no loss");
    await(held.release());
    assertEquals("b", await(b).owner());
  }

  /**
   * Hand-overs back and forth between two handles that heartbeat every millisecond: a heartbeat that commits beside
   * a hand-over is refused once the hand-over committed, and must not make the handle that handed over believe it
   * lost its grant.
   */
  @Test
  void aHeartbeatRefusedBesideAHandOverIsNoLoss() {
    MutexService s = service(MutexOptions.builder().reaperEnabled(false).lease(Duration.ofSeconds(30))
        .heartbeatInterval(Duration.ofMillis(1)));
    List<MutexHandle> handedOver = new java.util.ArrayList<>();
    MutexHandle holder = await(s.acquire("m", "a"));
    for (int i = 0; i < 100; i++) {
      String next = holder.owner().equals("a") ? "b" : "a";
      CompletableFuture<MutexHandle> waiting = s.acquire("m", next);
      eventually(next + " queued", Duration.ofSeconds(20), () -> queue(await(s.state("m"))).equals(List.of(next)));
      await(holder.heartbeat());
      LockEvent e = await(holder.releaseTo(next));
      handedOver.add(holder);
      holder = await(waiting);
      assertEquals(e.sequence(), holder.token());
    }
    for (MutexHandle h : handedOver) {
      assertFalse(h.isHeld(), h.toString());
      assertFalse(h.lost().isDone(), h + " handed over, yet told it lost: " + h.lost().getNow(null));
    }
    await(holder.heartbeat());
    await(holder.release());
  }
}
