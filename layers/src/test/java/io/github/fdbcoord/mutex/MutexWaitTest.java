package io.github.fdbcoord.mutex;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.api.MutexState;
import io.github.fdbcoord.api.QueueEntry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link MutexService#awaitGrant}: the layer's one wait, handed to a holder that heartbeats its grant
 * itself (the event-bus verticle's requesters). Kept queued while it waits, granted in FIFO order,
 * out of the queue at once on cancel or timeout, and never leaking a grant that raced a cancel.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MutexWaitTest extends MutexTestSupport {

  private static List<String> queue(MutexService s, String name) {
    List<String> owners = new ArrayList<>();
    for (QueueEntry q : await(s.state(name)).queue()) {
      owners.add(q.owner());
    }
    return owners;
  }

  private static String ownerOf(MutexService s, String name) {
    return await(s.state(name)).owner().map(o -> o.owner()).orElse(null);
  }

  @Test
  void aFreeMutexIsGrantedAtOnceAndTheGrantIsNotHeartbeatedByTheLayer() throws Exception {
    FdbMutexService s = service(fast());
    MutexWait w = s.awaitGrant("m", "remote", Duration.ofSeconds(5));
    FencingToken token = await(w.granted());
    assertEquals(token, await(s.state("m")).owner().orElseThrow().token());
    // Nobody heartbeats the grant: the holder was meant to, so the reaper ends it after the lease.
    eventually("the unheartbeated grant expires", Duration.ofSeconds(20), () -> ownerOf(s, "m") == null);
    assertEquals(0, s.heartbeatingHandles());
    assertFalse(await(w.cancel()), "a wait that ended with a grant is not ended again by cancel");
  }

  @Test
  void aQueuedWaitIsKeptAliveAndGrantedOnRelease() throws Exception {
    FdbMutexService s = service(fast());
    MutexHandle holder = await(s.acquire("m", "holder"));
    MutexWait w = s.awaitGrant("m", "remote", null);
    eventually("the wait is queued", Duration.ofSeconds(5), () -> queue(s, "m").contains("remote"));
    // A silent entry queued behind it is reaped after its lease; the wait's entry is heartbeated and stays.
    assertFalse(await(s.tryAcquire("m", "silent")).isHeld());
    eventually("the silent waiter is reaped", Duration.ofSeconds(20), () -> !queue(s, "m").contains("silent"));
    assertEquals(List.of("remote"), queue(s, "m"));
    assertFalse(w.granted().isDone());

    LockEvent handOff = await(holder.release());
    assertEquals(LockEvent.Type.HANDED_OFF, handOff.type());
    assertEquals(handOff.sequence(), await(w.granted()), "the wait completes with the hand-off's token");
    assertEquals("remote", ownerOf(s, "m"));
    await(s.release("m", "remote", handOff.sequence()));
  }

  @Test
  void cancelLeavesTheQueueBeforeItCompletes() {
    FdbMutexService s = service(quiet());
    MutexHandle holder = await(s.acquire("m", "holder"));
    MutexWait w = s.awaitGrant("m", "remote", Duration.ofSeconds(30));
    CompletableFuture<FencingToken> granted = w.granted();
    assertTrue(await(w.cancel()), "the cancel ended the wait");
    assertEquals(List.of(), queue(s, "m"), "out of the queue once cancel completed");
    CancellationException e = failure(CancellationException.class, granted);
    assertTrue(e.getMessage().contains("'remote'"), e.getMessage());
    assertFalse(await(w.cancel()), "a second cancel finds the wait ended");
    assertEquals("holder", ownerOf(s, "m"));
    await(holder.release());
  }

  @Test
  void aTimeoutLeavesTheQueueAndSaysHowLongItWaited() {
    FdbMutexService s = service(quiet());
    MutexHandle holder = await(s.acquire("m", "holder"));
    MutexTimeoutException e = failure(MutexTimeoutException.class, s.awaitGrant("m", "remote", Duration.ofMillis(50)).granted());
    assertEquals("'remote' did not acquire mutex 'm' within 50 ms and left its queue", e.getMessage());
    assertEquals(List.of(), queue(s, "m"));

    failure(MutexTimeoutException.class, s.awaitGrant("m", "once", Duration.ZERO).granted());
    assertEquals(List.of(), queue(s, "m"), "a zero timeout tries once and does not stay queued");
    await(holder.release());
  }

  @Test
  void closingTheServiceFailsTheWaitAsClosed() {
    FdbMutexService holderSide = service(quiet());
    FdbMutexService s = service(quiet());
    MutexHandle holder = await(holderSide.acquire("m", "holder"));
    MutexWait w = s.awaitGrant("m", "remote", null);
    s.close();
    MutexException e = failure(MutexException.class, w.granted());
    assertEquals(MutexException.Kind.CLOSED, e.kind());
    await(holder.release());
  }

  /**
   * Many waits on one mutex, some cancelled at random moments (while queued, while being granted,
   * after the grant): never two holders, every grant that completed was held by its waiter in turn,
   * and a cancel that ended its wait leaves the waiter neither holding nor queued.
   */
  @Test
  void manyWaitsWithRandomCancelsNeverShareTheMutexOrLeakAGrant() throws Exception {
    FdbMutexService s = service(quiet());
    int waits = 48;
    AtomicInteger holders = new AtomicInteger();
    AtomicInteger maxHolders = new AtomicInteger();
    Set<String> grantedOwners = ConcurrentHashMap.newKeySet();
    List<CompletableFuture<?>> done = new ArrayList<>();
    List<MutexWait> cancelled = new ArrayList<>();
    MutexHandle first = await(s.acquire("m", "first"));
    for (int i = 0; i < waits; i++) {
      String owner = "w" + i;
      MutexWait w = s.awaitGrant("m", owner, null);
      done.add(w.granted().thenCompose(token -> {
        maxHolders.accumulateAndGet(holders.incrementAndGet(), Math::max);
        grantedOwners.add(owner);
        holders.decrementAndGet();
        return s.release("m", owner, token);
      }).exceptionally(e -> null));
      if (ThreadLocalRandom.current().nextInt(3) == 0) {
        cancelled.add(w);
      }
    }
    await(first.release());
    for (MutexWait w : cancelled) {
      boolean ended = await(w.cancel());
      if (ended) {
        MutexState state = await(s.state("m"));
        assertFalse(state.owner().map(o -> o.owner().equals(w.owner())).orElse(false), w.owner() + " holds after its cancel");
        assertFalse(queue(s, "m").contains(w.owner()), w.owner() + " is queued after its cancel");
        assertFalse(grantedOwners.contains(w.owner()), w.owner() + " was handed a grant after its cancel ended the wait");
      }
    }
    await(CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)));
    assertEquals(1, maxHolders.get(), "never two holders");
    assertTrue(grantedOwners.size() >= waits - cancelled.size(), "every wait not cancelled was granted: " + grantedOwners.size());
    assertEquals(null, ownerOf(s, "m"));
    assertEquals(List.of(), queue(s, "m"));
  }
}
