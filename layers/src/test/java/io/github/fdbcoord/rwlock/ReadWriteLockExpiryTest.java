package io.github.fdbcoord.rwlock;

import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.tuple.Tuple;
import io.github.fdbcoord.fdb.FdbErrors;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/** Leases: a silent holder is replaced after its lease, a silent waiter leaves the queue, and fence refuses a replaced holder. */
class ReadWriteLockExpiryTest extends ReadWriteLockTestSupport {
  private static final int NOT_COMMITTED = 1020;

  @Test
  void aCrashedWriterIsReplacedAfterItsLease() {
    FdbReadWriteLockService crashing = service(expiring());
    ReadWriteLockService other = service(expiring());
    ReadWriteLockHandle w = await(crashing.acquireWrite("l", "w", null));
    CompletableFuture<ReadWriteLockHandle> r = other.acquireRead("l", "r", null);
    eventually("r queues", Duration.ofSeconds(30), () -> queue(other, "l").equals(List.of("r")));
    crashing.close(); // stops its heartbeats and its reaper; the grant stays until its lease ends
    ReadWriteLockHandle reader = await(r);
    assertTrue(reader.token().compareTo(w.token()) > 0);
    assertEquals(List.of("r"), holders(other, "l"));
    await(reader.release());
  }

  /**
   * Readers go in by the writer key, not the holders: the end of a writer's grant by its lease, its downgrade and its
   * release must each clear it, or a reader with nobody before it would wait for a grant nobody makes.
   */
  @Test
  void aReaderGoesStraightInOnceAWritersGrantEndedByLeaseDowngradeOrRelease() {
    FdbReadWriteLockService crashing = service(expiring());
    ReadWriteLockService s = service(expiring());
    await(crashing.acquireWrite("l", "w", null));
    assertEquals(Optional.empty(), await(s.tryAcquire("l", "early", LockMode.READ)), "a writer holds");
    assertTrue(await(s.leave("l", "early")));
    crashing.close();
    eventually("the silent writer's lease ends", Duration.ofSeconds(30), () -> holders(s, "l").isEmpty());
    ReadWriteGrant afterLease = await(s.tryAcquire("l", "r1", LockMode.READ)).orElseThrow();
    await(s.release(afterLease));

    ReadWriteLockHandle writer = await(s.acquireWrite("l", "w2", Duration.ZERO));
    ReadWriteGrant downgraded = await(s.downgrade(writer.grant()));
    ReadWriteGrant beside = await(s.tryAcquire("l", "r2", LockMode.READ)).orElseThrow(
        () -> new AssertionError("a reader waits beside a downgraded writer"));
    await(s.release(beside));
    await(s.release(downgraded));

    ReadWriteLockHandle w3 = await(s.acquireWrite("l", "w3", Duration.ZERO));
    await(w3.release());
    assertTrue(await(s.tryAcquire("l", "r3", LockMode.READ)).isPresent(), "a reader goes in after a writer's release");
  }

  @Test
  void aHeartbeatingHolderOutlivesItsLease() {
    ReadWriteLockService s = service(expiring());
    long start = System.currentTimeMillis();
    ReadWriteLockHandle h = await(s.acquireWrite("l", "w", null));
    eventually("two leases pass", Duration.ofSeconds(30), () -> System.currentTimeMillis() > start + 4_000);
    assertEquals(List.of("w"), holders(s, "l"));
    assertTrue(h.isHeld());
    assertFalse(h.lost().isDone());
    await(h.release());
  }

  @Test
  void aHandleLearnsThatItsGrantEnded() {
    ReadWriteLockService s = service(expiring());
    ReadWriteLockHandle h = await(s.acquireRead("l", "a", null));
    await(s.release(h.grant()));
    await(h.lost());
    assertFalse(h.isHeld());
  }

  @Test
  void aWaiterThatStopsHeartbeatingLeavesTheQueue() {
    // No reaper until the queue is as the test wants it, so that "gone" cannot expire before "r2" queues.
    ReadWriteLockService s = service(expiring().reaperEnabled(false));
    ReadWriteLockHandle r1 = await(s.acquireRead("l", "r1", null));
    // "gone" queues for writing and never heartbeats its entry; "r2" queues behind it.
    assertEquals(Optional.empty(), await(s.tryAcquire("l", "gone", LockMode.WRITE)));
    CompletableFuture<ReadWriteLockHandle> r2 = s.acquireRead("l", "r2", null);
    eventually("r2 queues behind the writer", Duration.ofSeconds(30), () -> queue(s, "l").equals(List.of("gone", "r2")));
    service(expiring()); // its reaper removes "gone" once its lease ends; r1 and r2 keep theirs alive
    ReadWriteLockHandle second = await(r2);
    assertEquals(List.of("r1", "r2"), holders(s, "l"));
    assertEquals(List.of(), queue(s, "l"));
    assertEquals(ReadWriteLockException.Kind.NOT_HELD,
        failure(ReadWriteLockException.class, s.heartbeatWaiter("l", "gone")).kind());
    await(r1.release());
    await(second.release());
  }

  @Test
  void fenceRefusesTheTransactionOfAHolderReplacedMeanwhile() {
    FdbReadWriteLockService paused = service(expiring().reaperEnabled(false));
    ReadWriteLockService other = service(expiring());
    byte[] data = root.pack(Tuple.from("app", "data"));
    ReadWriteLockHandle w = await(paused.acquireWrite("l", "w", null));

    // The holder's own heartbeats do not disturb its fenced transaction.
    Transaction tr = db.createTransaction();
    try {
      await(w.fence(tr));
      await(paused.heartbeat(w.grant()));
      tr.set(data, new byte[] {1});
      await(tr.commit());
    } finally {
      tr.close();
    }

    // The holder pauses past its lease in the middle of a fenced transaction; another writer takes over.
    Transaction stale = db.createTransaction();
    try {
      await(w.fence(stale));
      w.stopHeartbeats();
      ReadWriteLockHandle next = await(other.acquireWrite("l", "next", null));
      stale.set(data, new byte[] {2});
      try {
        stale.commit().join();
        fail("the replaced holder's fenced transaction committed");
      } catch (CompletionException e) {
        assertEquals(NOT_COMMITTED, FdbErrors.codeOf(e));
      }
      // A retry is refused by the fence itself, and nothing was written.
      ReadWriteLockException refused = failure(ReadWriteLockException.class,
          db.runAsync(t -> w.fence(t).thenRun(() -> t.set(data, new byte[] {3}))));
      assertEquals(ReadWriteLockException.Kind.NOT_HELD, refused.kind());
      assertEquals(1, await(db.readAsync(t -> t.get(data)))[0]);
      await(next.release());
    } finally {
      stale.close();
    }
  }

  @Test
  void aFenceOfAReleasedGrantIsRefused() {
    ReadWriteLockService s = service(quiet());
    ReadWriteLockHandle h = await(s.acquireRead("l", "a", null));
    await(h.release());
    assertEquals(ReadWriteLockException.Kind.NOT_HELD,
        failure(ReadWriteLockException.class, db.runAsync(t -> h.fence(t))).kind());
  }
}
