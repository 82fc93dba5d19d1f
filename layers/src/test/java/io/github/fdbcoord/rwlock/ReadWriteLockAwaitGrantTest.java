package io.github.fdbcoord.rwlock;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link ReadWriteLockService#awaitGrant}: the wait of a holder that heartbeats itself (the service's remote
 * clients). It waits as acquire does, but nothing keeps the grant alive once handed over, and a cancelled wait
 * leaves the queue.
 */
class ReadWriteLockAwaitGrantTest extends ReadWriteLockTestSupport {
  @Test
  void theWaitIsKeptAliveButTheGrantIsNot() {
    FdbReadWriteLockService s = service(expiring());
    ReadWriteGrant writer = await(s.awaitGrant("l", "w", LockMode.WRITE, Duration.ZERO));
    CompletableFuture<ReadWriteGrant> reader = s.awaitGrant("l", "r", LockMode.READ, Duration.ofSeconds(30));
    eventually("r queues", Duration.ofSeconds(30), () -> queue(s, "l").equals(List.of("r")));
    // Nobody heartbeats the writer: the reaper ends it after its 2 s lease and grants the waiting reader, whose
    // queue entry the wait kept alive all along.
    ReadWriteGrant read = await(reader);
    assertEquals(LockMode.READ, read.mode());
    assertTrue(read.token().compareTo(writer.token()) > 0);
    assertEquals(0, s.heartbeatingHandles(), "an awaited grant has no handle heartbeating it");
    eventually("the unrenewed reader expires too", Duration.ofSeconds(30), () -> holders(s, "l").isEmpty());
  }

  @Test
  void aCancelledWaitLeavesTheQueue() {
    ReadWriteLockService s = service(quiet());
    ReadWriteGrant writer = await(s.awaitGrant("l", "w", LockMode.WRITE, null));
    CompletableFuture<ReadWriteGrant> reader = s.awaitGrant("l", "r", LockMode.READ, null);
    eventually("r queues", Duration.ofSeconds(30), () -> queue(s, "l").equals(List.of("r")));
    reader.cancel(false);
    eventually("r leaves", Duration.ofSeconds(30), () -> queue(s, "l").isEmpty());
    await(s.release(writer));
    assertEquals(List.of(), holders(s, "l"));
  }

  /** withdraw answers once the owner is out of the queue, so a release right after it cannot let the owner in. */
  @Test
  void aWithdrawnWaitHasLeftTheQueueWhenWithdrawAnswers() {
    ReadWriteLockService s = service(quiet());
    for (int i = 0; i < 10; i++) {
      ReadWriteGrant writer = await(s.awaitGrant("l", "w" + i, LockMode.WRITE, null));
      CompletableFuture<ReadWriteGrant> next = s.awaitGrant("l", "n" + i, LockMode.WRITE, null);
      String waiter = "n" + i;
      eventually(waiter + " queues", Duration.ofSeconds(30), () -> queue(s, "l").equals(List.of(waiter)));
      assertTrue(await(s.withdraw(next)));
      assertEquals(List.of(), queue(s, "l"), "withdraw answered before the owner left the queue");
      await(s.release(writer));
      assertEquals(List.of(), holders(s, "l"), "the withdrawn owner was let in");
      assertFalse(await(s.withdraw(next)), "a wait ends once");
    }
    ReadWriteGrant held = await(s.awaitGrant("l", "h", LockMode.READ, null));
    assertFalse(await(s.withdraw(CompletableFuture.completedFuture(held))), "not a wait of this service");
    await(s.release(held));
  }
}
