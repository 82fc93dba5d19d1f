package io.github.fdbcoord.mutex;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Reading a mutex's event log since a position taken before anyone knew the mutex's name (the
 * dashboard's "every event since the page opened"): exactly the events after it, and an honest
 * "incomplete" when the log may have lost some.
 */
@Timeout(60)
class EventsSinceTest extends MutexTestSupport {

  @Test
  void everyEventAfterThePositionAndNoneBefore() {
    FdbMutexService s = service(quiet());
    await(s.tryAcquire("m", "before"));
    await(s.release("m", "before"));
    FencingToken opened = await(s.currentPosition());

    await(s.tryAcquire("m", "a"));
    await(s.release("m", "a"));
    await(s.tryAcquire("m", "b"));
    await(s.tryAcquire("m", "c"));
    await(s.release("m", "b"));
    await(s.release("m", "c"));

    EventLogRead read = await(s.eventsSince("m", opened, 100));
    assertTrue(read.complete());
    assertEquals(List.of("ACQUIRED a", "RELEASED null", "ACQUIRED b", "HANDED_OFF c", "RELEASED null"),
        read.events().stream().map(e -> e.type() + " " + e.owner().orElse(null)).collect(Collectors.toList()));
    for (LockEvent e : read.events()) {
      assertTrue(e.sequence().isNewerThan(opened), "only events after the position: " + e);
    }

    // An event's own sequence is a position too: what follows it, without it.
    EventLogRead afterFirst = await(s.eventsSince("m", read.events().get(0).sequence(), 2));
    assertEquals(List.of(read.events().get(1), read.events().get(2)), afterFirst.events(), "at most the limit");
    assertTrue(await(s.eventsSince("m", await(s.currentPosition()), 10)).events().isEmpty());
  }

  @Test
  void aPositionOlderThanTheRetentionOrFromTheFutureIsNotComplete() throws Exception {
    FdbMutexService s = service(quiet().eventRetention(Duration.ofMillis(200)));
    FencingToken old = await(s.currentPosition());
    Thread.sleep(500);
    await(s.tryAcquire("m", "a"));
    EventLogRead read = await(s.eventsSince("m", old, 10));
    assertFalse(read.complete(), "events between the position and the retention may have been trimmed");
    assertEquals(1, read.events().size(), "what the log holds still comes back");

    long now = await(s.currentPosition()).commitVersion();
    FencingToken future = FencingToken.of(java.nio.ByteBuffer.allocate(10).putLong(now + 60_000_000L).putShort((short) 0)
        .array());
    assertFalse(await(s.eventsSince("m", future, 10)).complete(), "a position this store never reached");
    assertTrue(await(s.eventsSince("m", await(s.currentPosition()), 10)).complete());
  }

  @Test
  void badArgumentsAreRefused() {
    FdbMutexService s = service(quiet());
    FencingToken p = await(s.currentPosition());
    assertThrows(IllegalArgumentException.class, () -> s.eventsSince("m", null, 10));
    assertThrows(IllegalArgumentException.class, () -> s.eventsSince("m", p, 0));
    assertThrows(IllegalArgumentException.class, () -> s.eventsSince("", p, 10));
  }
}
