package io.github.fdbcoord.rwlock;

import io.github.fdbcoord.api.FailureKind;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Behaviour of one lock with the reaper off: sharing, exclusion, queue order, downgrade, timeouts, input, close. */
class ReadWriteLockServiceTest extends ReadWriteLockTestSupport {

  @Test
  void readersShareTheLock() {
    ReadWriteLockService s = service(quiet());
    ReadWriteLockHandle a = await(s.acquireRead("l", "a", null));
    ReadWriteLockHandle b = await(s.acquireRead("l", "b", Duration.ZERO));
    assertEquals(List.of("a", "b"), holders(s, "l"));
    assertTrue(b.token().compareTo(a.token()) > 0, "tokens increase");
    await(a.release());
    await(b.release());
    assertEquals(List.of(), holders(s, "l"));
  }

  @Test
  void aWriterExcludesReadersAndWriters() {
    ReadWriteLockService s = service(quiet());
    ReadWriteLockHandle w = await(s.acquireWrite("l", "w", null));
    assertEquals(Optional.empty(), await(s.tryAcquire("l", "r", LockMode.READ)));
    assertEquals(Optional.empty(), await(s.tryAcquire("l", "w2", LockMode.WRITE)));
    assertEquals(List.of("w"), holders(s, "l"));
    assertEquals(List.of("r", "w2"), queue(s, "l"));
    await(w.release());
    // The release handed the lock to the reader at the head, not to the writer behind it.
    assertEquals(List.of("r"), holders(s, "l"));
    assertEquals(List.of("w2"), queue(s, "l"));
  }

  @Test
  void aReaderIsRefusedWhileAWriterHolds() {
    ReadWriteLockService s = service(quiet());
    ReadWriteLockHandle w = await(s.acquireWrite("l", "w", null));
    ReadWriteLockException e = failure(ReadWriteLockException.class, s.acquireRead("l", "r", Duration.ZERO));
    assertEquals(ReadWriteLockException.Kind.TIMED_OUT, e.kind());
    assertEquals(FailureKind.TIMED_OUT, e.failureKind());
    assertEquals(List.of(), queue(s, "l"), "a timed-out request leaves the queue");
    await(w.release());
  }

  @Test
  void aWaitingWriterIsNotStarvedByLaterReaders() {
    ReadWriteLockService s = service(quiet());
    ReadWriteLockHandle r1 = await(s.acquireRead("l", "r1", null));
    CompletableFuture<ReadWriteLockHandle> w = s.acquireWrite("l", "w", null);
    eventually("the writer queues", Duration.ofSeconds(30), () -> queue(s, "l").equals(List.of("w")));
    CompletableFuture<ReadWriteLockHandle> r2 = s.acquireRead("l", "r2", null);
    eventually("the later reader queues behind the writer", Duration.ofSeconds(30), () -> queue(s, "l").equals(List.of("w", "r2")));
    assertFalse(r2.isDone(), "a reader arriving while a writer waits is not let in");
    await(r1.release());
    ReadWriteLockHandle writer = await(w);
    assertEquals(List.of("w"), holders(s, "l"));
    assertFalse(r2.isDone());
    await(writer.release());
    ReadWriteLockHandle reader = await(r2);
    assertTrue(reader.token().compareTo(writer.token()) > 0);
    await(reader.release());
  }

  @Test
  void theQueueIsGrantedInOrderAndAWritersReleaseLetsTheRunOfReadersIn() {
    ReadWriteLockService s = service(quiet());
    ReadWriteLockHandle w0 = await(s.acquireWrite("l", "w0", null));
    CompletableFuture<ReadWriteLockHandle> r1 = s.acquireRead("l", "r1", null);
    eventually("r1 queues", Duration.ofSeconds(30), () -> queue(s, "l").size() == 1);
    CompletableFuture<ReadWriteLockHandle> r2 = s.acquireRead("l", "r2", null);
    eventually("r2 queues", Duration.ofSeconds(30), () -> queue(s, "l").size() == 2);
    CompletableFuture<ReadWriteLockHandle> w3 = s.acquireWrite("l", "w3", null);
    eventually("w3 queues", Duration.ofSeconds(30), () -> queue(s, "l").size() == 3);
    CompletableFuture<ReadWriteLockHandle> r4 = s.acquireRead("l", "r4", null);
    eventually("r4 queues", Duration.ofSeconds(30), () -> queue(s, "l").size() == 4);
    assertEquals(List.of("r1", "r2", "w3", "r4"), queue(s, "l"));

    await(w0.release());
    ReadWriteLockHandle a = await(r1);
    ReadWriteLockHandle b = await(r2);
    assertEquals(List.of("r1", "r2"), holders(s, "l"));
    assertEquals(List.of("w3", "r4"), queue(s, "l"));
    assertTrue(a.token().compareTo(w0.token()) > 0);
    assertTrue(b.token().compareTo(a.token()) > 0, "one commit's grants get distinct, increasing tokens");

    await(a.release());
    assertFalse(w3.isDone(), "the writer waits for every reader");
    await(b.release());
    ReadWriteLockHandle c = await(w3);
    assertEquals(List.of("r4"), queue(s, "l"));
    await(c.release());
    await(await(r4).release());
    assertEquals(List.of(), holders(s, "l"));
  }

  @Test
  void downgradeTurnsTheWriterIntoAReaderAndLetsQueuedReadersInButNoWriter() {
    ReadWriteLockService s = service(quiet());
    ReadWriteLockHandle w = await(s.acquireWrite("l", "w", null));
    CompletableFuture<ReadWriteLockHandle> r1 = s.acquireRead("l", "r1", null);
    eventually("r1 queues", Duration.ofSeconds(30), () -> queue(s, "l").size() == 1);
    CompletableFuture<ReadWriteLockHandle> w2 = s.acquireWrite("l", "w2", null);
    eventually("w2 queues", Duration.ofSeconds(30), () -> queue(s, "l").size() == 2);
    ReadWriteGrant before = w.grant();

    await(w.downgrade());
    assertEquals(LockMode.READ, w.mode());
    assertTrue(w.token().compareTo(before.token()) > 0, "the downgrade is a new grant with a new token");
    ReadWriteLockHandle reader = await(r1);
    assertTrue(reader.token().compareTo(w.token()) > 0);
    assertEquals(List.of("r1", "w"), holders(s, "l"));
    assertEquals(List.of("w2"), queue(s, "l"));
    assertFalse(w2.isDone());

    assertEquals(ReadWriteLockException.Kind.NOT_HELD, failure(ReadWriteLockException.class, s.release(before)).kind(),
        "the write grant ended with the downgrade");
    assertThrows(IllegalArgumentException.class, () -> s.downgrade(w.grant()));

    await(w.release());
    await(reader.release());
    await(await(w2).release());
  }

  @Test
  void acquireIsIdempotentPerOwner() {
    ReadWriteLockService s = service(quiet());
    ReadWriteGrant g = await(s.tryAcquire("l", "a", LockMode.WRITE)).orElseThrow();
    assertEquals(Optional.of(g), await(s.tryAcquire("l", "a", LockMode.WRITE)));
    assertEquals(Optional.empty(), await(s.tryAcquire("l", "b", LockMode.READ)));
    assertEquals(Optional.empty(), await(s.tryAcquire("l", "b", LockMode.READ)));
    assertEquals(List.of("b"), queue(s, "l"), "a second request keeps the owner's place, never enqueues twice");
    await(s.release(g));
    assertEquals(List.of("b"), holders(s, "l"));
    assertEquals(LockMode.READ, await(s.heartbeatWaiter("l", "b")).orElseThrow().mode(), "the waiter learns of its grant");
  }

  @Test
  void aTimedOutWriterLeavesTheQueueAndTheReadersBehindItGoIn() {
    ReadWriteLockService s = service(quiet());
    ReadWriteLockHandle r = await(s.acquireRead("l", "r", null));
    CompletableFuture<ReadWriteLockHandle> w = s.acquireWrite("l", "w", Duration.ofMillis(4000));
    eventually("w queues", Duration.ofSeconds(30), () -> queue(s, "l").equals(List.of("w")));
    CompletableFuture<ReadWriteLockHandle> r2 = s.acquireRead("l", "r2", null);
    ReadWriteLockException e = failure(ReadWriteLockException.class, w);
    assertEquals(ReadWriteLockException.Kind.TIMED_OUT, e.kind());
    assertTrue(e.getMessage().contains("'w' was not granted lock 'l' in WRITE mode within 4000 ms"), e.getMessage());
    ReadWriteLockHandle second = await(r2);
    assertEquals(List.of("r", "r2"), holders(s, "l"));
    await(r.release());
    await(second.release());
  }

  @Test
  void cancellingAWaitLeavesTheQueue() {
    ReadWriteLockService s = service(quiet());
    ReadWriteLockHandle w = await(s.acquireWrite("l", "w", null));
    CompletableFuture<ReadWriteLockHandle> r = s.acquireRead("l", "r", null);
    eventually("r queues", Duration.ofSeconds(30), () -> queue(s, "l").equals(List.of("r")));
    r.cancel(false);
    eventually("r leaves", Duration.ofSeconds(30), () -> queue(s, "l").isEmpty());
    await(w.release());
    assertEquals(List.of(), holders(s, "l"));
  }

  @Test
  void theQueueIsBounded() {
    ReadWriteLockService s = service(quiet().maxQueueLength(1));
    ReadWriteGrant w = await(s.tryAcquire("l", "w", LockMode.WRITE)).orElseThrow();
    await(s.tryAcquire("l", "a", LockMode.READ));
    ReadWriteLockException e = failure(ReadWriteLockException.class, s.tryAcquire("l", "b", LockMode.READ));
    assertEquals(ReadWriteLockException.Kind.QUEUE_FULL, e.kind());
    assertEquals(FailureKind.QUEUE_FULL, e.failureKind());
    await(s.release(w));
  }

  @Test
  void releaseOrHeartbeatOfAnEndedGrantIsRefused() {
    ReadWriteLockService s = service(quiet());
    ReadWriteLockHandle h = await(s.acquireWrite("l", "a", null));
    await(h.release());
    // Releasing again what its owner released is no error (as the mutex's release: a retry finds its own commit)...
    await(s.release(h.grant()));
    // ...but a grant its owner did not end is refused: here one that never existed.
    ReadWriteGrant never = new ReadWriteGrant("l", "a", LockMode.WRITE, com.apple.foundationdb.tuple.Versionstamp.complete(
        new byte[] {0, 0, 0, 0, 0, 0, 0, 1, 0, 0}, 0));
    ReadWriteLockException e = failure(ReadWriteLockException.class, s.release(never));
    assertEquals(ReadWriteLockException.Kind.NOT_HELD, e.kind());
    assertEquals(FailureKind.NOT_HELD, e.failureKind());
    assertTrue(e.getMessage().contains("'a' no longer holds lock 'l'"), e.getMessage());
    assertEquals(ReadWriteLockException.Kind.NOT_HELD, failure(ReadWriteLockException.class, s.heartbeat(h.grant())).kind());
    assertEquals(ReadWriteLockException.Kind.NOT_HELD, failure(ReadWriteLockException.class, s.heartbeatWaiter("l", "a")).kind());
    assertFalse(await(s.leave("l", "a")));
  }

  @Test
  void badInputIsRefusedWithAClearMessage() {
    ReadWriteLockService s = service(quiet());
    assertEquals("lock name must not be null",
        assertThrows(IllegalArgumentException.class, () -> s.acquireRead(null, "o", null)).getMessage());
    assertEquals("owner must not be empty",
        assertThrows(IllegalArgumentException.class, () -> s.acquireWrite("l", "", null)).getMessage());
    assertEquals("mode must be READ or WRITE, got null",
        assertThrows(IllegalArgumentException.class, () -> s.acquire("l", "o", null, null)).getMessage());
    assertEquals("timeout must not be negative, got PT-1S",
        assertThrows(IllegalArgumentException.class, () -> s.acquireRead("l", "o", Duration.ofSeconds(-1))).getMessage());
    assertTrue(assertThrows(IllegalArgumentException.class, () -> s.tryAcquire("x".repeat(1025), "o", LockMode.READ))
        .getMessage().startsWith("lock name is 1025 UTF-8 bytes long"));
    assertEquals("grant must not be null", assertThrows(IllegalArgumentException.class, () -> s.release(null)).getMessage());
    assertEquals("a fence needs the caller's transaction, got null",
        assertThrows(IllegalArgumentException.class, () -> s.fence(null, null)).getMessage());
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> ReadWriteLockOptions.builder().lease(Duration.ofSeconds(1)).heartbeatInterval(Duration.ofSeconds(2)).build())
        .getMessage().contains("must be shorter than lease"));
    assertThrows(IllegalArgumentException.class, () -> ReadWriteLockOptions.builder().maxQueueLength(0));
    assertThrows(IllegalArgumentException.class, () -> ReadWriteLockOptions.builder().lease(Duration.ZERO));
  }

  @Test
  void closeFailsWaitingAcquiresAndStopsHeartbeats() {
    ReadWriteLockService holder = service(quiet());
    FdbReadWriteLockService s = service(quiet());
    ReadWriteLockHandle w = await(holder.acquireWrite("l", "w", null));
    ReadWriteLockHandle mine = await(s.acquireWrite("m", "x", null));
    CompletableFuture<ReadWriteLockHandle> r = s.acquireRead("l", "r", null);
    eventually("r queues", Duration.ofSeconds(30), () -> queue(holder, "l").equals(List.of("r")));
    assertEquals(1, s.heartbeatingHandles());
    s.close();
    ReadWriteLockException e = failure(ReadWriteLockException.class, r);
    assertEquals(ReadWriteLockException.Kind.CLOSED, e.kind());
    assertEquals(0, s.heartbeatingHandles());
    assertFalse(mine.isHeld());
    assertEquals(ReadWriteLockException.Kind.CLOSED,
        assertThrows(ReadWriteLockException.class, () -> s.acquireRead("l", "z", null)).kind());
    assertEquals(List.of("x"), holders(holder, "m"), "close releases nothing: the lease expires");
    await(w.release());
  }

  @Test
  void openUsesTheConfiguredDirectory() {
    List<String> dir = List.of("test", "rwlock-open-" + java.util.UUID.randomUUID());
    ReadWriteLockService s = await(ReadWriteLockService.open(db, quiet().directory(dir).build()));
    try {
      ReadWriteLockHandle h = await(s.acquireRead("l", "a", null));
      assertEquals(List.of("a"), holders(s, "l"));
      await(h.release());
    } finally {
      s.close();
      com.apple.foundationdb.directory.DirectoryLayer.getDefault().removeIfExists(db, dir).join();
    }
  }
}
