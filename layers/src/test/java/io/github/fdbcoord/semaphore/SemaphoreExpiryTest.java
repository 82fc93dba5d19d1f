package io.github.fdbcoord.semaphore;

import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.tuple.Tuple;
import io.github.fdbcoord.fdb.FdbErrors;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Leases: a holder that stops heartbeating loses its permit to the next waiter, its fenced transactions are refused,
 * and a waiter that stops heartbeating leaves the queue. Leases of 2 s where expiry is the subject; the tests wait
 * for the outcome, never for a time.
 */
class SemaphoreExpiryTest extends SemaphoreTestSupport {
  private static final Duration LONG = Duration.ofSeconds(25);

  private byte[] dataKey(String what) {
    return root.pack(Tuple.from("app-data", what));
  }

  @Test
  void aCrashedHoldersPermitGoesToTheWaiterAfterItsLease() {
    FdbSemaphoreService crashing = service(expiring().reaperEnabled(false));
    SemaphoreService live = service(expiring());
    SemaphoreHandle stale = await(crashing.acquire("sem", 1, "crashing", LONG));
    CompletableFuture<SemaphoreHandle> waiter = live.acquire("sem", 1, "waiter", LONG);
    crashing.close(); // its heartbeats stop; the permit is not released
    SemaphoreHandle next = await(waiter);
    assertTrue(next.token().isNewerThan(stale.token()));
    assertEquals(List.of("waiter"), await(live.state("sem")).holders().stream().map(SemaphoreService.Holder::owner).toList());
    await(next.release());
  }

  @Test
  void aLiveHolderKeepsItsPermitPastManyLeases() throws Exception {
    SemaphoreService s = service(expiring());
    SemaphoreHandle a = await(s.acquire("sem", 1, "a", LONG));
    CompletableFuture<SemaphoreHandle> b = s.acquire("sem", 1, "b", Duration.ofSeconds(5));
    // b times out after 5 s (2.5 leases) while a heartbeats: a was never taken over.
    assertEquals(SemaphoreException.Kind.TIMED_OUT, failure(SemaphoreException.class, b).kind());
    assertTrue(a.isHeld());
    await(s.heartbeat("sem", "a", a.token()));
    await(a.release());
  }

  @Test
  void aStaleHoldersFencedTransactionIsRefused() {
    FdbSemaphoreService crashing = service(expiring().reaperEnabled(false));
    SemaphoreService live = service(expiring());
    SemaphoreHandle stale = await(crashing.acquire("sem", 1, "stale", LONG));
    await(db.runAsync(tr -> stale.fence(tr).thenRun(() -> tr.set(dataKey("x"), new byte[] {1}))));
    CompletableFuture<SemaphoreHandle> waiter = live.acquire("sem", 1, "waiter", LONG);
    crashing.close(); // paused: stops heartbeating, still thinks it holds
    SemaphoreHandle next = await(waiter);
    SemaphoreException refused = failure(SemaphoreException.class,
        db.runAsync(tr -> stale.fence(tr).thenRun(() -> tr.set(dataKey("x"), new byte[] {2}))));
    assertEquals(SemaphoreException.Kind.NOT_HELD, refused.kind());
    assertEquals(1, await(db.readAsync(tr -> tr.get(dataKey("x"))))[0]);
    await(db.runAsync(tr -> next.fence(tr).thenRun(() -> tr.set(dataKey("x"), new byte[] {3}))));
    await(next.release());
  }

  @Test
  void aFencedTransactionConflictsWithTheEndOfItsGrant() {
    SemaphoreService s = service(quiet());
    SemaphoreHandle a = await(s.acquire("sem", 1, "a", LONG));
    CompletableFuture<SemaphoreHandle> b = s.acquire("sem", 1, "b", LONG);
    try (Transaction tr = db.createTransaction()) {
      await(a.fence(tr));
      await(s.heartbeat("sem", "a", a.token())); // its own heartbeats never conflict ...
      await(s.release("sem", "a", a.token())); // ... the end of the grant (here a release by another process) does
      SemaphoreHandle bh = await(b);
      tr.set(dataKey("y"), new byte[] {1});
      try {
        tr.commit().join();
        fail("a fenced transaction committed after its grant ended");
      } catch (RuntimeException e) {
        assertEquals(FdbErrors.NOT_COMMITTED, FdbErrors.codeOf(e));
      }
      assertNull(await(db.readAsync(t -> t.get(dataKey("y")))));
      await(bh.release());
    }
  }

  @Test
  void aFencedTransactionCommitsDespiteHeartbeats() {
    SemaphoreService s = service(quiet());
    SemaphoreHandle a = await(s.acquire("sem", 1, "a", LONG));
    try (Transaction tr = db.createTransaction()) {
      await(a.fence(tr));
      await(s.heartbeat("sem", "a", a.token()));
      tr.set(dataKey("z"), new byte[] {1});
      await(tr.commit());
    }
    await(a.release());
  }

  @Test
  void aWaiterThatStopsHeartbeatingLeavesTheQueue() throws Exception {
    FdbSemaphoreService s = service(expiring());
    SemaphoreHandle holder = await(s.acquire("sem", 1, "holder", LONG));
    // A waiter whose requester disappeared: a queue entry that nobody keeps alive.
    await(db.runAsync(tr -> {
      s.schema.enqueue(tr, "sem", "ghost");
      s.schema.markInUse(tr, "sem", 1, false);
      return CompletableFuture.completedFuture(null);
    }));
    CompletableFuture<SemaphoreHandle> live = s.acquire("sem", 1, "live", LONG);
    eventually("both wait", LONG, () -> await(s.state("sem")).waiters().equals(List.of("ghost", "live")));
    eventually("the ghost left the queue", LONG, () -> await(s.state("sem")).waiters().equals(List.of("live")));
    assertFalse(live.isDone());
    assertTrue(holder.isHeld());
    await(holder.release());
    SemaphoreHandle l = await(live);
    assertEquals("live", l.owner());
    await(l.release());
  }
}
