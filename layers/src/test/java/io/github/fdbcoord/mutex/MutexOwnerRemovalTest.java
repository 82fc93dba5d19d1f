package io.github.fdbcoord.mutex;

import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.api.MutexState;
import io.github.fdbcoord.api.QueueEntry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@link MutexService#removeOwnersIn}: what a group of owners (one cluster node's) holds and waits
 * for goes away in the caller's transaction, each grant to the next waiter that stays, and nothing
 * changes unless that transaction commits.
 */
@Timeout(30)
class MutexOwnerRemovalTest extends MutexTestSupport {

  @Test
  void grantsGoToTheNextWaiterOfAnotherGroupAndTheGroupsQueueEntriesGo() throws Exception {
    FdbMutexService s = service(quiet());
    for (String owner : List.of("dead/1", "dead/2", "live/1", "dead/3", "live/2")) {
      await(s.tryAcquire("m", owner));
    }
    await(s.tryAcquire("other", "live/3"));
    await(s.tryAcquire("other", "dead/4"));

    int removed = await(db.runAsync(tr -> s.removeOwnersIn(tr, "dead/")));

    assertEquals(4, removed, "one grant and three queue entries");
    MutexState m = await(s.state("m"));
    assertEquals("live/1", m.owner().orElseThrow().owner(), "the grant skipped the dead waiter at the head");
    assertEquals(List.of("live/2"), m.queue().stream().map(QueueEntry::owner).toList());
    MutexState other = await(s.state("other"));
    assertEquals("live/3", other.owner().orElseThrow().owner());
    assertEquals(List.of(), other.queue());
    LockEvent last = await(s.latestEvent("m")).orElseThrow();
    assertEquals(LockEvent.Type.EXPIRED, last.type());
  }

  @Test
  void nothingChangesWhenTheCallersTransactionDoesNotCommit() throws Exception {
    FdbMutexService s = service(quiet());
    await(s.tryAcquire("m", "dead/1"));
    await(s.tryAcquire("m", "live/1"));

    try (var tr = db.createTransaction()) {
      assertEquals(1, await(s.removeOwnersIn(tr, "dead/")));
      // dropped without commit
    }

    MutexState m = await(s.state("m"));
    assertEquals("dead/1", m.owner().orElseThrow().owner());
    assertEquals(List.of("live/1"), m.queue().stream().map(QueueEntry::owner).toList());
    CompletableFuture<Integer> none = db.runAsync(tr -> s.removeOwnersIn(tr, "nobody/"));
    assertEquals(0, await(none));
  }
}
