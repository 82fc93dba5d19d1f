package io.github.fdbcoord.mutex;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Edges of the mutex's contract that mutation testing (PIT) found unchecked: each test here fails when
 * the line it names is changed.
 */
@Timeout(60)
class MutexContractTest extends MutexTestSupport {

  /** free() must change the generation key, or subscribers (who wait on it) never hear of the release. */
  @Test
  void aSubscriberHearsOfAReleaseThatFreesTheMutexWithoutAnyLaterTransition() throws Exception {
    FdbMutexService s = service(quiet());
    FdbMutexService other = service(quiet());
    List<LockEvent> seen = new CopyOnWriteArrayList<>();
    await(s.subscribe("m", seen::add));
    FencingToken t = await(other.tryAcquire("m", "a")).token().orElseThrow();
    eventually("ACQUIRED delivered", Duration.ofSeconds(5), () -> seen.size() == 1);
    await(other.release("m", "a", t));
    eventually("RELEASED delivered with nothing after it", Duration.ofSeconds(5), () -> seen.size() == 2);
    assertEquals(LockEvent.Type.RELEASED, seen.get(1).type());
  }

  @Test
  void eventsOlderThanTheRetentionAreTrimmedByTheNextTransition() throws Exception {
    FdbMutexService s = service(quiet().eventRetention(Duration.ofMillis(50)));
    FencingToken t = await(s.tryAcquire("m", "a")).token().orElseThrow();
    await(s.release("m", "a", t));
    Thread.sleep(200);
    await(s.tryAcquire("m", "b"));
    List<LockEvent> events = await(s.db.readAsync(tr -> s.schema.readEventsAfter(tr, "m", null, 100),
        s.executor));
    assertEquals(List.of(LockEvent.Type.ACQUIRED), events.stream().map(LockEvent::type).toList(),
        "the two events older than 50 ms are gone");
    assertEquals("b", events.get(0).owner().orElseThrow());
  }

  @Test
  void namesUpTo1024Utf8BytesAreAccepted() {
    FdbMutexService s = service(quiet());
    String longest = "n".repeat(MutexSchema.MAX_NAME_BYTES);
    assertTrue(await(s.tryAcquire(longest, "a")).isHeld());
    assertTrue(await(s.state(longest)).isHeld());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> s.tryAcquire(longest + "n", "a"));
    assertTrue(e.getMessage().contains("1025") && e.getMessage().contains("1024"), e.getMessage());
    // Bytes, not characters: 512 two-byte characters fit, 513 do not.
    assertTrue(await(s.tryAcquire("é".repeat(512), "a")).isHeld());
    assertThrows(IllegalArgumentException.class, () -> s.tryAcquire("é".repeat(513), "a"));
  }

  @Test
  void heldMutexesTakesLimitsFrom1To10000() {
    FdbMutexService s = service(quiet());
    await(s.tryAcquire("m1", "a"));
    await(s.tryAcquire("m2", "a"));
    assertEquals(List.of("m1"), await(s.heldMutexes(null, 1)));
    assertEquals(List.of("m1", "m2"), await(s.heldMutexes(null, 10_000)));
    assertThrows(IllegalArgumentException.class, () -> s.heldMutexes(null, 0));
    assertThrows(IllegalArgumentException.class, () -> s.heldMutexes(null, 10_001));
  }

  @Test
  void subscribingToAClosedServiceIsRefused() {
    FdbMutexService s = service(quiet());
    s.close();
    MutexException e = assertThrows(MutexException.class, () -> s.subscribe("m", event -> { }));
    assertEquals(MutexException.Kind.CLOSED, e.kind());
  }

  @Test
  void theDefaultDirectoryIsTheOneTheServiceAndTheClusterManagerUse() {
    // ["fdbcoord", "mutex"]: what CoordinationVerticle (rootDirectory + "mutex") and
    // FdbClusterManagerOptions.DEFAULT_LOCK_DIRECTORY open, so default services see each other's locks.
    assertEquals(List.of("fdbcoord", "mutex"), MutexOptions.defaults().directory());
  }

  @Test
  void aHeartbeatIntervalAsLongAsTheLeaseIsRefused() {
    assertThrows(IllegalArgumentException.class,
        () -> MutexOptions.builder().lease(Duration.ofSeconds(2)).heartbeatInterval(Duration.ofSeconds(2)).build());
    MutexOptions justShorter = MutexOptions.builder().lease(Duration.ofSeconds(2))
        .heartbeatInterval(Duration.ofMillis(1999)).build();
    assertEquals(Duration.ofMillis(1999), justShorter.heartbeatInterval());
  }

  @Test
  void anEndedGrantAndAnotherOwnersCallerAreToldApart() {
    FdbMutexService s = service(quiet());
    FencingToken first = await(s.tryAcquire("m", "a")).token().orElseThrow();
    // Ended by expiry, not by its own release (a release of it again would be answered idempotently).
    byte[] record = await(s.db.readAsync(tr -> s.schema.readOwnerBytes(tr, "m"), s.executor));
    assertTrue(await(new MutexReaper(s, Duration.ofMillis(1), Duration.ofSeconds(1)).expire("m", record)));
    FencingToken second = await(s.tryAcquire("m", "a")).token().orElseThrow();
    NotOwnerException ended = failure(NotOwnerException.class, s.release("m", "a", first));
    assertTrue(ended.getMessage().contains("the grant " + first) && ended.getMessage().contains("has ended"),
        ended.getMessage());
    assertEquals(second, ended.current().token());
    NotOwnerException other = failure(NotOwnerException.class, s.heartbeat("m", "b"));
    assertTrue(other.getMessage().contains("'b' does not own"), other.getMessage());
    assertEquals("b", other.caller());
    assertEquals("a", other.current().owner());
  }

  @Test
  void aReleasedHandleStopsHeartbeatingAtOnce() {
    FdbMutexService s = service(quiet());
    MutexHandle h = await(s.acquire("m", "a", Duration.ofSeconds(5)));
    assertEquals(1, s.heartbeatingHandles());
    await(h.release());
    assertEquals(0, s.heartbeatingHandles(), "the handle still heartbeats after its release");
  }
}
