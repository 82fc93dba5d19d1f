package io.github.fdbcoord.mutex;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.api.MutexOwner;
import io.github.fdbcoord.api.MutexState;
import io.github.fdbcoord.api.QueueEntry;
import com.apple.foundationdb.Transaction;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The races the mutex's correctness argument relies on (docs/mutex.md, "Why two owners are
 * impossible"), each forced deterministically: one operation is held between its reads and its commit
 * (through {@link FdbMutexService#beforeCommit}), the other runs to completion meanwhile, then the held one
 * commits. The held one must conflict (its transaction is attempted exactly twice) and its retry must
 * see the other's outcome; the mutex's final state is checked in full.
 */
@Timeout(60)
class MutexRaceTest extends MutexTestSupport {
  private static final String NAME = "raced";

  /** Two services on the same directory, as two processes would be; the first one's commits can be held. */
  private FdbMutexService held;
  private FdbMutexService other;

  @BeforeEach
  void services() {
    held = service(quiet());
    other = service(quiet());
  }

  /** Holds the first transaction attempt that reaches its commit until {@link #open()}; counts attempts. */
  private static final class CommitGate implements Function<Transaction, CompletableFuture<Void>> {
    final CompletableFuture<Void> reached = new CompletableFuture<>();
    private final CompletableFuture<Void> gate = new CompletableFuture<>();
    private final AtomicBoolean holding = new AtomicBoolean();
    final AtomicInteger attempts = new AtomicInteger();

    @Override
    public CompletableFuture<Void> apply(Transaction tr) {
      attempts.incrementAndGet();
      if (holding.compareAndSet(false, true)) {
        reached.complete(null);
        return gate;
      }
      return CompletableFuture.completedFuture(null);
    }

    void open() {
      gate.complete(null);
    }
  }

  /**
   * Starts {@code first} on the held service and holds it at its commit, runs {@code second} to completion,
   * then lets the first commit; returns the first's result future. {@code commits}: how many of the
   * first's attempts must reach their commit: 2 when its retry writes, 1 when its retry refuses (the
   * refusal shows the retry: the held attempt had passed the same checks).
   */
  private <T> CompletableFuture<T> interleave(int commits, Supplier<CompletableFuture<T>> first, Runnable second) {
    CommitGate gate = new CommitGate();
    held.beforeCommit = gate;
    try {
      CompletableFuture<T> result = first.get();
      await(gate.reached);
      second.run();
      gate.open();
      try {
        result.get(30, java.util.concurrent.TimeUnit.SECONDS);
      } catch (Exception ignored) {
        // the caller checks the outcome
      }
      assertEquals(commits, gate.attempts.get(), "attempts of the held transaction that reached their commit");
      return result;
    } finally {
      held.beforeCommit = null;
    }
  }

  private MutexReaper reaper(FdbMutexService service) {
    return new MutexReaper(service, Duration.ofMillis(1), Duration.ofSeconds(1));
  }

  private byte[] ownerRecord() {
    return await(other.db.readAsync(tr -> other.schema.readOwnerBytes(tr, NAME), other.executor));
  }

  private MutexState state() {
    return await(other.state(NAME));
  }

  private static List<String> queue(MutexState s) {
    return s.queue().stream().map(QueueEntry::owner).toList();
  }

  private FencingToken take(String owner) {
    return await(other.tryAcquire(NAME, owner)).token().orElseThrow();
  }

  private void enqueue(String owner) {
    assertFalse(await(other.tryAcquire(NAME, owner)).isHeld());
  }

  @Test
  void releaseRacingAnEnqueueHandsTheMutexToTheNewWaiter() {
    FencingToken x = take("x");
    CompletableFuture<LockEvent> release = interleave(2, () -> held.release(NAME, "x", x), () -> enqueue("y"));
    LockEvent event = await(release);
    assertEquals(LockEvent.Type.HANDED_OFF, event.type(), "the release must see the waiter that enqueued meanwhile");
    assertEquals("y", event.owner().orElseThrow());
    MutexState s = state();
    assertEquals("y", s.owner().orElseThrow().owner(), "a waiter stranded behind a free mutex");
    assertEquals(List.of(), queue(s));
  }

  @Test
  void enqueueRacingAReleaseTakesTheFreedMutex() {
    FencingToken x = take("x");
    CompletableFuture<AcquireResult> acquire = interleave(2, () -> held.tryAcquire(NAME, "y"),
        () -> assertEquals(LockEvent.Type.RELEASED, await(other.release(NAME, "x", x)).type()));
    AcquireResult r = await(acquire);
    assertTrue(r.isHeld(), "the enqueue must see the release and take the free mutex: " + r);
    MutexState s = state();
    assertEquals("y", s.owner().orElseThrow().owner());
    assertEquals(List.of(), queue(s), "nobody may wait behind a free mutex");
  }

  @Test
  void twoTakersOfAFreeMutexGrantItOnce() {
    CompletableFuture<AcquireResult> first = interleave(2, () -> held.tryAcquire(NAME, "x"),
        () -> assertTrue(await(other.tryAcquire(NAME, "y")).isHeld()));
    AcquireResult r = await(first);
    assertFalse(r.isHeld(), "two owners");
    assertEquals(1, r.position());
    MutexState s = state();
    assertEquals("y", s.owner().orElseThrow().owner());
    assertEquals(List.of("x"), queue(s));
  }

  @Test
  void heartbeatRacingAHandOffIsRefused() {
    FencingToken x = take("x");
    enqueue("y");
    byte[] observed = ownerRecord();
    CompletableFuture<MutexOwner> beat = interleave(1, () -> held.heartbeat(NAME, "x", x),
        () -> assertTrue(await(reaper(other).expire(NAME, observed))));
    failure(NotOwnerException.class, beat);
    MutexOwner owner = state().owner().orElseThrow();
    assertEquals("y", owner.owner(), "a late heartbeat recreated the evicted owner");
    assertEquals(0, owner.heartbeats());
  }

  @Test
  void handOffRacingAHeartbeatDoesNothing() {
    FencingToken x = take("x");
    enqueue("y");
    byte[] observed = ownerRecord();
    CompletableFuture<Boolean> expiry = interleave(2, () -> reaper(held).expire(NAME, observed),
        () -> assertEquals(1, await(other.heartbeat(NAME, "x", x)).heartbeats()));
    assertFalse(await(expiry), "the reaper evicted an owner whose record changed");
    MutexState s = state();
    assertEquals(new MutexOwner("x", x, 1), s.owner().orElseThrow());
    assertEquals(List.of("y"), queue(s));
  }

  @Test
  void handOffRacingAHeartbeatOfALoneOwnerDoesNothing() {
    FencingToken x = take("x");
    byte[] observed = ownerRecord();
    CompletableFuture<Boolean> expiry = interleave(2, () -> reaper(held).expire(NAME, observed),
        () -> await(other.heartbeat(NAME, "x", x)));
    assertFalse(await(expiry));
    assertEquals(new MutexOwner("x", x, 1), state().owner().orElseThrow());
  }

  @Test
  void releaseRacingAHandOffIsRefusedAndLeavesTheNewOwner() {
    FencingToken x = take("x");
    enqueue("y");
    enqueue("z");
    byte[] observed = ownerRecord();
    CompletableFuture<LockEvent> release = interleave(1, () -> held.release(NAME, "x", x),
        () -> assertTrue(await(reaper(other).expire(NAME, observed))));
    failure(NotOwnerException.class, release);
    MutexState s = state();
    assertEquals("y", s.owner().orElseThrow().owner());
    assertEquals(List.of("z"), queue(s), "the evicted owner's release handed the mutex on a second time");
  }

  @Test
  void handOffRacingAReleaseLeavesTheNewOwner() {
    FencingToken x = take("x");
    enqueue("y");
    enqueue("z");
    byte[] observed = ownerRecord();
    CompletableFuture<Boolean> expiry = interleave(2, () -> reaper(held).expire(NAME, observed),
        () -> assertEquals(LockEvent.Type.HANDED_OFF, await(other.release(NAME, "x", x)).type()));
    assertFalse(await(expiry));
    MutexState s = state();
    assertEquals("y", s.owner().orElseThrow().owner());
    assertEquals(0, s.owner().orElseThrow().heartbeats());
    assertEquals(List.of("z"), queue(s));
  }

  @Test
  void givingUpRacingAHandOffKeepsTheGrant() {
    FencingToken x = take("x");
    enqueue("y");
    CompletableFuture<MutexOwner> leave = interleave(2, () -> held.leaveUnlessGranted(NAME, "y"),
        () -> assertEquals(LockEvent.Type.HANDED_OFF, await(other.release(NAME, "x", x)).type()));
    MutexOwner granted = await(leave);
    assertNotNull(granted, "a grant made while the waiter gave up was leaked");
    assertEquals("y", granted.owner());
    assertEquals("y", state().owner().orElseThrow().owner());
  }

  @Test
  void handOffRacingALeaveFreesTheMutex() {
    FencingToken x = take("x");
    enqueue("y");
    CompletableFuture<LockEvent> release = interleave(2, () -> held.release(NAME, "x", x),
        () -> assertTrue(await(other.leave(NAME, "y"))));
    assertEquals(LockEvent.Type.RELEASED, await(release).type(), "the mutex was handed to a waiter that had left");
    MutexState s = state();
    assertTrue(s.owner().isEmpty());
    assertEquals(List.of(), queue(s));
  }
}
