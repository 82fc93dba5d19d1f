package io.github.fdbcoord.semaphore;

import io.github.fdbcoord.api.FailureKind;
import io.github.fdbcoord.api.FencingToken;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Behaviour of {@link SemaphoreService} with nothing expiring: grants, queue order, timeouts, refusals, close. */
class SemaphoreServiceTest extends SemaphoreTestSupport {
  private static final Duration LONG = Duration.ofSeconds(20);

  @Test
  void grantsUpToThePermitsAtOnceThenQueues() throws Exception {
    SemaphoreService s = service(quiet());
    SemaphoreHandle a = await(s.acquire("sem", 2, "a", LONG));
    SemaphoreHandle b = await(s.acquire("sem", 2, "b", LONG));
    assertTrue(b.token().isNewerThan(a.token()), "tokens increase with each grant");
    CompletableFuture<SemaphoreHandle> c = s.acquire("sem", 2, "c", LONG);
    eventually("c waits", LONG, () -> await(s.state("sem")).waiters().equals(List.of("c")));
    assertFalse(c.isDone());
    assertEquals(2, await(s.state("sem")).permits());
    await(a.release());
    SemaphoreHandle ch = await(c);
    assertTrue(ch.token().isNewerThan(b.token()));
    assertEquals(List.of("b", "c"), await(s.state("sem")).holders().stream().map(SemaphoreService.Holder::owner).toList());
    await(b.release());
    await(ch.release());
    SemaphoreService.SemaphoreState empty = await(s.state("sem"));
    assertEquals(0, empty.permits(), "an unused semaphore is forgotten");
    assertTrue(empty.holders().isEmpty() && empty.waiters().isEmpty());
  }

  @Test
  void openCreatesTheDirectoryAndServesFromIt() {
    List<String> dir = List.of("test", "semaphore-open-" + java.util.UUID.randomUUID());
    try (SemaphoreService s = await(SemaphoreService.open(db, quiet().directory(dir).build()))) {
      assertEquals(dir, s.options().directory());
      await(await(s.acquire("sem", 1, "a", LONG)).release());
    } finally {
      com.apple.foundationdb.directory.DirectoryLayer.getDefault().removeIfExists(db, dir).join();
    }
  }

  @Test
  void anOwnerThatHoldsGetsItsGrantBack() {
    SemaphoreService s = service(quiet());
    SemaphoreHandle a = await(s.acquire("sem", 1, "a", LONG));
    assertEquals(a.token(), await(s.acquire("sem", 1, "a", Duration.ZERO)).token());
    assertEquals(1, await(s.state("sem")).holders().size());
  }

  @Test
  void waitersAreGrantedInFifoOrder() throws Exception {
    SemaphoreService s = service(quiet());
    SemaphoreHandle holder = await(s.acquire("sem", 1, "holder", LONG));
    CompletableFuture<SemaphoreHandle> first = s.acquire("sem", 1, "first", LONG);
    eventually("first waits", LONG, () -> await(s.state("sem")).waiters().equals(List.of("first")));
    CompletableFuture<SemaphoreHandle> second = s.acquire("sem", 1, "second", LONG);
    eventually("second waits", LONG, () -> await(s.state("sem")).waiters().equals(List.of("first", "second")));
    CompletableFuture<SemaphoreHandle> third = s.acquire("sem", 1, "third", LONG);
    eventually("third waits", LONG,
        () -> await(s.state("sem")).waiters().equals(List.of("first", "second", "third")));
    await(holder.release());
    SemaphoreHandle f = await(first);
    assertFalse(second.isDone() || third.isDone());
    await(f.release());
    SemaphoreHandle sec = await(second);
    assertFalse(third.isDone());
    await(sec.release());
    SemaphoreHandle t = await(third);
    assertTrue(t.token().isNewerThan(sec.token()) && sec.token().isNewerThan(f.token()));
    await(t.release());
  }

  @Test
  void aTimedOutAcquireFailsAndLeavesTheQueue() throws Exception {
    SemaphoreService s = service(quiet());
    SemaphoreHandle holder = await(s.acquire("sem", 1, "holder", LONG));
    SemaphoreException zero = failure(SemaphoreException.class, s.acquire("sem", 1, "w", Duration.ZERO));
    assertEquals(SemaphoreException.Kind.TIMED_OUT, zero.kind());
    // As every layer's public future: failed with the refusal itself, not a CompletionException around it.
    Throwable seen = s.acquire("sem", 1, "w", Duration.ZERO).handle((h, e) -> e).get(60, java.util.concurrent.TimeUnit.SECONDS);
    assertTrue(seen instanceof SemaphoreException, String.valueOf(seen));
    assertEquals(FailureKind.TIMED_OUT, zero.failureKind());
    SemaphoreException timedOut = failure(SemaphoreException.class, s.acquire("sem", 1, "w", Duration.ofMillis(300)));
    assertEquals(SemaphoreException.Kind.TIMED_OUT, timedOut.kind());
    assertTrue(timedOut.getMessage().contains("'w' got no permit of semaphore 'sem'"), timedOut.getMessage());
    assertTrue(await(s.state("sem")).waiters().isEmpty());
    await(holder.release());
    assertEquals(0, await(s.state("sem")).permits());
  }

  @Test
  void aCancelledAcquireLeavesTheQueue() throws Exception {
    SemaphoreService s = service(quiet());
    SemaphoreHandle holder = await(s.acquire("sem", 1, "holder", LONG));
    CompletableFuture<SemaphoreHandle> w = s.acquire("sem", 1, "w", null);
    eventually("w waits", LONG, () -> await(s.state("sem")).waiters().equals(List.of("w")));
    w.cancel(false);
    eventually("w left the queue", LONG, () -> await(s.state("sem")).waiters().isEmpty());
    await(holder.release());
  }

  @Test
  void releaseHeartbeatAndFenceOfAnEndedGrantAreRefused() {
    SemaphoreService s = service(quiet());
    SemaphoreHandle a = await(s.acquire("sem", 1, "a", LONG));
    FencingToken token = a.token();
    await(a.release());
    assertFalse(a.isHeld());
    // Releasing again what its owner released is no error (a retry after commit_unknown_result finds its own commit);
    // a grant its owner did not end is refused.
    await(s.release("sem", "a", token));
    FencingToken never = FencingToken.of(new byte[] {0, 0, 0, 0, 0, 0, 0, 1, 0, 0});
    assertEquals(SemaphoreException.Kind.NOT_HELD, failure(SemaphoreException.class, s.release("sem", "a", never)).kind());
    SemaphoreException beat = failure(SemaphoreException.class, s.heartbeat("sem", "a", token));
    assertEquals(FailureKind.NOT_HELD, beat.failureKind());
    assertEquals("'a' does not hold that grant of semaphore 'sem' (released, or taken over after its lease)",
        beat.getMessage());
    a.close(); // closing a released handle is no error
  }

  @Test
  void aSemaphoreInUseRefusesAnotherPermitCount() {
    SemaphoreService s = service(quiet());
    SemaphoreHandle a = await(s.acquire("sem", 2, "a", LONG));
    SemaphoreException e = failure(SemaphoreException.class, s.acquire("sem", 3, "b", LONG));
    assertEquals(SemaphoreException.Kind.PERMITS_MISMATCH, e.kind());
    assertEquals(FailureKind.CONFLICT, e.failureKind());
    assertTrue(e.getMessage().contains("in use with 2 permits, asked for with 3"), e.getMessage());
    await(a.release());
    await(await(s.acquire("sem", 3, "b", LONG)).release());
  }

  @Test
  void aFullQueueRefusesTheNextWaiter() throws Exception {
    SemaphoreService s = service(quiet().maxQueueLength(1));
    SemaphoreHandle a = await(s.acquire("sem", 1, "a", LONG));
    CompletableFuture<SemaphoreHandle> b = s.acquire("sem", 1, "b", LONG);
    eventually("b waits", LONG, () -> await(s.state("sem")).waiters().equals(List.of("b")));
    assertEquals(SemaphoreException.Kind.QUEUE_FULL, failure(SemaphoreException.class, s.acquire("sem", 1, "c", LONG)).kind());
    await(a.release());
    await(await(b).release());
  }

  @Test
  void badInputIsRefusedWithAClearMessage() {
    SemaphoreService s = service(quiet());
    assertEquals("permits must be between 1 and 10000, got 0",
        assertThrows(IllegalArgumentException.class, () -> s.acquire("sem", 0, "a", LONG)).getMessage());
    assertEquals("semaphore name must not be empty",
        assertThrows(IllegalArgumentException.class, () -> s.acquire("", 1, "a", LONG)).getMessage());
    assertEquals("owner must not be null",
        assertThrows(IllegalArgumentException.class, () -> s.acquire("sem", 1, null, LONG)).getMessage());
    assertEquals("timeout must not be negative, got PT-1S",
        assertThrows(IllegalArgumentException.class, () -> s.acquire("sem", 1, "a", Duration.ofSeconds(-1))).getMessage());
    assertEquals("the grant's fencing token must not be null",
        assertThrows(IllegalArgumentException.class, () -> s.release("sem", "a", null)).getMessage());
    assertTrue(assertThrows(IllegalArgumentException.class, () -> SemaphoreOptions.builder()
        .lease(Duration.ofSeconds(1)).heartbeatInterval(Duration.ofSeconds(1)).build()).getMessage()
        .contains("must be shorter than lease"));
  }

  @Test
  void closeFailsWaitingAcquiresAndTheyLeaveTheQueue() throws Exception {
    SemaphoreService holderSide = service(quiet());
    SemaphoreService s = service(quiet());
    SemaphoreHandle holder = await(holderSide.acquire("sem", 1, "holder", LONG));
    CompletableFuture<SemaphoreHandle> w = s.acquire("sem", 1, "w", null);
    eventually("w waits", LONG, () -> await(holderSide.state("sem")).waiters().equals(List.of("w")));
    s.close();
    assertEquals(SemaphoreException.Kind.CLOSED, failure(SemaphoreException.class, w).kind());
    assertEquals(SemaphoreException.Kind.CLOSED, failure(SemaphoreException.class, s.acquire("sem", 1, "x", LONG)).kind());
    eventually("w left the queue", LONG, () -> await(holderSide.state("sem")).waiters().isEmpty());
    await(holder.release());
  }
}
