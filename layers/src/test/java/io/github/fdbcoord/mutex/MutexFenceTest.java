package io.github.fdbcoord.mutex;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.apple.foundationdb.FDBException;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.tuple.Tuple;
import io.github.fdbcoord.api.FencingToken;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * {@link MutexService#fence}: the caller's own transaction commits only while the grant it names is current, so a
 * holder replaced while paused cannot write its own data, whether or not it knows it lost the grant.
 */
class MutexFenceTest extends MutexTestSupport {
  private static final int NOT_COMMITTED = 1020;

  private byte[] dataKey(String what) {
    return root.pack(Tuple.from("app-data", what));
  }

  private byte[] read(byte[] key) {
    return await(db.readAsync(tr -> tr.get(key)));
  }

  /** A fenced write of {@code value} under {@code handle}'s grant, in a retry loop. */
  private CompletableFuture<Void> fencedWrite(MutexHandle handle, byte[] key, byte[] value) {
    return db.runAsync(tr -> handle.fence(tr).thenRun(() -> tr.set(key, value)));
  }

  private static Throwable unwrap(Throwable e) {
    return e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
  }

  @Test
  void theHoldersFencedTransactionCommitsItsWrites() {
    MutexService s = service(quiet());
    MutexHandle a = await(s.acquire("m", "a"));
    await(fencedWrite(a, dataKey("x"), new byte[] {1}));
    assertArrayEquals(new byte[] {1}, read(dataKey("x")));
    assertTrue(a.isHeld());
    await(a.release());
  }

  @Test
  void aFenceAfterTheGrantEndedIsRefusedAndNothingIsWritten() {
    MutexService s = service(quiet());
    MutexHandle a = await(s.acquire("m", "a"));
    FencingToken stale = a.token();
    await(a.release());
    MutexNotHeldException free = failure(MutexNotHeldException.class,
        db.runAsync(tr -> s.fence(tr, "m", "a", stale).thenRun(() -> tr.set(dataKey("x"), new byte[] {1}))));
    assertTrue(free.getMessage().contains("'m'"), free.getMessage());

    MutexHandle b = await(s.acquire("m", "b"));
    NotOwnerException taken = failure(NotOwnerException.class,
        db.runAsync(tr -> s.fence(tr, "m", "a", stale).thenRun(() -> tr.set(dataKey("x"), new byte[] {1}))));
    assertEquals("b", taken.current().owner());
    assertEquals(b.token(), taken.current().token());
    assertNull(read(dataKey("x")), "no refused transaction wrote");
    await(b.release());
  }

  @Test
  void aTokenOfAnotherOwnerOrAnOwnerWithoutItsTokenIsRefused() {
    MutexService s = service(quiet());
    MutexHandle a = await(s.acquire("m", "a"));
    failure(NotOwnerException.class, db.runAsync(tr -> s.fence(tr, "m", "b", a.token())));
    MutexHandle n = await(s.acquire("n", "a"));
    failure(NotOwnerException.class, db.runAsync(tr -> s.fence(tr, "m", "a", n.token())));
    try (Transaction tr = db.createTransaction()) {
      assertThrows(IllegalArgumentException.class, () -> s.fence(tr, "m", "a", null));
      assertThrows(IllegalArgumentException.class, () -> s.fence(tr, "", "a", a.token()));
    }
    await(a.release());
    await(n.release());
  }

  @Test
  void aHandOffCommittedAfterTheFencedReadFailsTheCommitAndTheRetryIsRefused() {
    MutexService s = service(quiet());
    MutexHandle a = await(s.acquire("m", "a"));
    AcquireResult queued = await(s.tryAcquire("m", "b"));
    assertTrue(!queued.isHeld());
    try (Transaction tr = db.createTransaction()) {
      await(a.fence(tr));
      tr.set(dataKey("x"), new byte[] {1});
      // The holder's grant ends between its fenced read and its commit (a release elsewhere, or the reaper).
      await(s.release("m", "a", a.token()));
      Throwable e = unwrap(assertThrows(CompletionException.class, () -> tr.commit().join()));
      assertTrue(e instanceof FDBException f && f.getCode() == NOT_COMMITTED, "the commit conflicts: " + e);
      // What a retry loop does next: onError, then the function again, which the fence refuses.
      Transaction retry = await(tr.onError(e));
      NotOwnerException refused = failure(NotOwnerException.class, s.fence(retry, "m", "a", a.token()));
      assertEquals("b", refused.current().owner());
    }
    assertNull(read(dataKey("x")));
  }

  @Test
  void theHoldersOwnHeartbeatsDoNotConflictWithItsFencedTransaction() {
    MutexService s = service(quiet());
    MutexHandle a = await(s.acquire("m", "a"));
    try (Transaction tr = db.createTransaction()) {
      await(a.fence(tr));
      tr.set(dataKey("x"), new byte[] {2});
      await(a.heartbeat());
      await(s.heartbeat("m", "a", a.token()));
      await(tr.commit());
    }
    assertArrayEquals(new byte[] {2}, read(dataKey("x")));
    await(a.release());
  }

  @Test
  void aHolderEvictedWithoutKnowingItLearnsItFromItsFenceAndCannotWrite() {
    MutexService s = service(quiet());
    MutexHandle a = await(s.acquire("m", "dead/a"));
    // Its node is declared dead (as the cluster manager does), while the holder itself goes on.
    assertEquals(Integer.valueOf(1), await(db.<Integer>runAsync(tr -> s.removeOwnersIn(tr, "dead/"))));
    assertTrue(a.isHeld(), "the handle has not heartbeated since: it still believes it holds the grant");
    MutexNotHeldException refused = failure(MutexNotHeldException.class, fencedWrite(a, dataKey("x"), new byte[] {3}));
    assertNull(read(dataKey("x")));
    assertSame(refused, await(a.lost()), "the fence's refusal is how the handle learns it lost the grant");
    // Futures of the layer fail with the refusal itself, not wrapped.
    try (Transaction tr = db.createTransaction()) {
      CompletableFuture<Void> again = a.fence(tr);
      assertTrue(again.handle((v, e) -> e instanceof MutexNotHeldException).join(), "failed with the refusal itself");
    }
    assertTrue(!a.isHeld());
  }

  /**
   * Holders that stop heartbeating (paused) lose their grant to the reaper and then try to write; live holders write
   * under their fence. Every write that committed was made under the grant current at its commit: the writes'
   * tokens never go down, and every paused holder's late write was refused. (A live holder that a loaded machine
   * stalls past the lease loses its grant too, and its write is refused: that is counted, not failed.)
   */
  @Test
  void manyHoldersSomePausedPastTheirLeaseNeverWriteOutOfTurn() throws Exception {
    int contenders = 8;
    int rounds = 4;
    List<MutexService> services = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      services.add(service(MutexOptions.builder().lease(Duration.ofSeconds(2)).heartbeatInterval(Duration.ofMillis(100))
          .reaperInterval(Duration.ofMillis(20))));
    }
    byte[] counter = dataKey("counter");
    AtomicInteger refusedLate = new AtomicInteger();
    AtomicInteger committed = new AtomicInteger();
    AtomicInteger refusedLive = new AtomicInteger();
    AtomicInteger pauses = new AtomicInteger();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> threads = new ArrayList<>();
    for (int c = 0; c < contenders; c++) {
      MutexService svc = services.get(c % services.size());
      String owner = "owner-" + c;
      boolean pauser = c % 3 == 0;
      threads.add(new Thread(() -> {
        try {
          start.await();
          for (int r = 0; r < rounds; r++) {
            MutexHandle h = await(svc.acquire("m", owner, Duration.ofSeconds(60)));
            if (pauser && r % 2 == 0) {
              // A pause past the lease: no heartbeats until the reaper has ended the grant (waited for, not slept).
              ((HeartbeatingHandle) h).stopHeartbeats();
              pauses.incrementAndGet();
              FencingToken mine = h.token();
              eventually("the paused grant of " + owner + " ends", Duration.ofSeconds(30), () -> {
                var state = await(svc.state("m"));
                return state.owner().map(o -> !o.token().equals(mine)).orElse(true);
              });
              try {
                await(db.runAsync(tr -> svc.fence(tr, "m", owner, mine).thenRun(() -> tr.set(counter, new byte[] {-1}))));
                fail("the late write of " + owner + " under " + mine + " committed");
              } catch (MutexException expected) {
                refusedLate.incrementAndGet();
              }
              continue;
            }
            try {
              await(db.runAsync(tr -> h.fence(tr).thenCompose(v -> tr.get(counter)).thenAccept(bytes -> {
                long n = bytes == null ? 0 : Tuple.fromBytes(bytes).getLong(0);
                tr.set(counter, Tuple.from(n + 1).pack());
                tr.set(dataKey("log/" + String.format("%06d", n)), h.token().bytes());
              })));
              committed.incrementAndGet();
              await(h.release());
            } catch (MutexException lostMeanwhile) {
              assertTrue(h.lost().isDone(), "a refused fence is a lost grant: " + lostMeanwhile);
              refusedLive.incrementAndGet();
            }
          }
        } catch (Throwable t) {
          failure.compareAndSet(null, t);
        }
      }, "contender-" + c));
    }
    threads.forEach(Thread::start);
    start.countDown();
    for (Thread t : threads) {
      t.join(120_000);
      assertTrue(!t.isAlive(), t.getName() + " did not finish in 120 s");
    }
    if (failure.get() != null) {
      throw new AssertionError("a contender failed", failure.get());
    }
    int pausedRounds = pauses.get();
    assertEquals(pausedRounds, refusedLate.get(), "every paused holder's late write was refused");
    assertTrue(pausedRounds > 0);
    long writes = Tuple.fromBytes(read(counter)).getLong(0);
    assertEquals(committed.get(), writes, "every committed write counted once");
    assertEquals(contenders * rounds - pausedRounds, committed.get() + refusedLive.get());
    FencingToken previous = null;
    for (long i = 0; i < writes; i++) {
      FencingToken t = FencingToken.of(read(dataKey("log/" + String.format("%06d", i))));
      if (previous != null) {
        assertTrue(t.isNewerThan(previous), "write " + i + " under " + t + " after one under " + previous);
      }
      previous = t;
    }
  }
}
