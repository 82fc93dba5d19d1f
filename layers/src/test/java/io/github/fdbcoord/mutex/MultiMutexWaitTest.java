package io.github.fdbcoord.mutex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.api.MutexOwner;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import org.junit.jupiter.api.Test;

/**
 * {@link MutexService#awaitAllGrants}: the wait of a remote holder for several mutexes, all or none, whose grants are
 * handed over without heartbeats once all are held, and heartbeated by the wait until then.
 */
class MultiMutexWaitTest extends MutexTestSupport {

  @Test
  void handsOverEveryGrantUnheartbeatedOnceAllAreHeld() {
    FdbMutexService s = service(quiet());
    MutexHandle b = await(s.acquire("b", "holder"));
    MultiMutexWait w = s.awaitAllGrants(List.of("b", "a", "b"), "x", null);
    assertEquals(List.of("a", "b"), w.names());
    eventually("x queued on b", Duration.ofSeconds(30), () -> await(s.state("b")).queue().size() == 1);
    assertEquals("x", await(s.state("a")).owner().orElseThrow().owner(), "the free mutex was taken at once");
    assertEquals(2, s.heartbeatingHandles(), "b's holder and x's early grant of a heartbeat");
    assertFalse(w.granted().isDone());

    await(b.release());
    Map<String, FencingToken> tokens = await(w.granted());
    assertEquals(List.of("a", "b"), List.copyOf(tokens.keySet()));
    for (String name : List.of("a", "b")) {
      assertEquals(tokens.get(name), await(s.state(name)).owner().orElseThrow().token());
    }
    eventually("the wait's heartbeats stopped", Duration.ofSeconds(30), () -> s.heartbeatingHandles() == 0);
    // The holder heartbeats and releases each grant itself.
    MutexOwner beat = await(s.heartbeat("b", "x", tokens.get("b")));
    assertEquals(tokens.get("b"), beat.token());
    for (String name : List.of("a", "b")) {
      await(s.release(name, "x", tokens.get(name)));
      assertTrue(await(s.state(name)).owner().isEmpty());
    }
  }

  @Test
  void anEarlyGrantIsKeptAliveWhileTheOthersAreAwaited() {
    FdbMutexService s = service(fast());
    MutexHandle b = await(s.acquire("b", "holder"));
    MultiMutexWait w = s.awaitAllGrants(List.of("a", "b"), "x", null);
    eventually("x holds a", Duration.ofSeconds(30),
        () -> await(s.state("a")).owner().map(o -> o.owner().equals("x")).orElse(false));
    FencingToken early = await(s.state("a")).owner().orElseThrow().token();
    // Heartbeats enough for several leases of 600 ms: a grant nobody heartbeated would have been reaped.
    eventually("a heartbeated through several leases", Duration.ofSeconds(60),
        () -> await(s.state("a")).owner().orElseThrow().heartbeats() >= 20);
    assertEquals(early, await(s.state("a")).owner().orElseThrow().token(), "still the first grant");
    await(b.release());
    assertEquals(early, await(w.granted()).get("a"));
    await(s.release("a", "x", early));
    await(s.release("b", "x", await(w.granted()).get("b")));
  }

  @Test
  void cancellingLeavesEveryQueueAndReleasesTheEarlyGrants() {
    FdbMutexService s = service(quiet());
    MutexHandle c = await(s.acquire("c", "holder"));
    MultiMutexWait w = s.awaitAllGrants(List.of("a", "b", "c"), "x", null);
    eventually("x queued on c", Duration.ofSeconds(30), () -> await(s.state("c")).queue().size() == 1);
    assertTrue(await(w.cancel()), "this call ended the wait");
    // Done once cancel completes: no waiting for conditions here.
    assertTrue(await(s.state("a")).owner().isEmpty());
    assertTrue(await(s.state("b")).owner().isEmpty());
    assertTrue(await(s.state("c")).queue().isEmpty());
    assertEquals(1, s.heartbeatingHandles(), "only c's holder heartbeats");
    failure(CancellationException.class, w.granted());
    assertFalse(await(w.cancel()), "ended already");
    await(c.release());
  }

  @Test
  void aTimeoutLeavesNothingQueuedOrHeld() {
    FdbMutexService s = service(quiet());
    MutexHandle b = await(s.acquire("b", "holder"));
    MutexTimeoutException e = failure(MutexTimeoutException.class,
        s.awaitAllGrants(List.of("a", "b"), "x", Duration.ofMillis(300)).granted());
    assertTrue(e.getMessage().contains("'b'"), e.getMessage());
    eventually("a given back", Duration.ofSeconds(30), () -> await(s.state("a")).owner().isEmpty());
    assertTrue(await(s.state("b")).queue().isEmpty(), "x left b's queue");
    await(b.release());
  }

  @Test
  void anEarlyGrantLostMeanwhileFailsTheSet() {
    FdbMutexService s = service(quiet());
    MutexHandle b = await(s.acquire("b", "holder"));
    MultiMutexWait w = s.awaitAllGrants(List.of("a", "b"), "x", null);
    eventually("x queued on b", Duration.ofSeconds(30), () -> await(s.state("b")).queue().size() == 1);
    // Someone else ends x's grant of a: the wait's next heartbeat of it is refused.
    await(s.release("a", "x"));
    MutexException lost = failure(MutexException.class, w.granted());
    assertEquals(MutexException.Kind.NOT_HELD, lost.kind());
    eventually("x left b's queue", Duration.ofSeconds(30), () -> await(s.state("b")).queue().isEmpty());
    assertEquals("holder", await(s.state("b")).owner().orElseThrow().owner());
    await(b.release());
  }

  @Test
  void releaseAllReleasesTheHandedOverGrantsInOneTransactionOrNone() {
    FdbMutexService s = service(quiet());
    Map<String, FencingToken> tokens = await(s.awaitAllGrants(List.of("a", "b", "c"), "x", null).granted());
    // One token is not the grant's (an older grant's, say): the release of the set refuses and releases nothing.
    Map<String, FencingToken> stale = new java.util.LinkedHashMap<>(tokens);
    stale.put("b", FencingToken.parse("00000000000000010000"));
    MutexException refused = failure(MutexException.class, s.releaseAll(stale, "x"));
    assertEquals(MutexException.Kind.NOT_OWNER, refused.kind(), refused.getMessage());
    for (String name : List.of("a", "b", "c")) {
      assertEquals(tokens.get(name), await(s.state(name)).owner().orElseThrow().token(), name + " still held");
    }
    List<LockEvent> released = await(s.releaseAll(tokens, "x"));
    assertEquals(3, released.size());
    assertEquals(1, released.stream().map(LockEvent::sequence).distinct().count(), "one commit: " + released);
    for (String name : List.of("a", "b", "c")) {
      assertTrue(await(s.state(name)).owner().isEmpty(), name);
    }
    assertThrows(IllegalArgumentException.class, () -> s.releaseAll(Map.of(), "x"));
  }

  @Test
  void badInputIsRefusedAtTheCall() {
    MutexService s = service(quiet());
    assertThrows(IllegalArgumentException.class, () -> s.awaitAllGrants(List.of(), "x", null));
    assertThrows(IllegalArgumentException.class, () -> s.awaitAllGrants(List.of("a", ""), "x", null));
    assertThrows(IllegalArgumentException.class, () -> s.awaitAllGrants(List.of("a"), "", null));
    assertThrows(IllegalArgumentException.class, () -> s.awaitAllGrants(List.of("a"), "x", Duration.ofMillis(-1)));
  }
}
