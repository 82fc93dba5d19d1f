package io.github.fdbcoord.api;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The records of the mutex: lock events, owner records, states and queue entries. */
class MutexValuesTest {
  private static final FencingToken T1 = FencingToken.parse("00000000000000010000");
  private static final FencingToken T2 = FencingToken.parse("00000000000000020000");

  @Test
  void anEventGrantsATokenOnlyWhenItNamesAnOwner() {
    LockEvent handOff = new LockEvent(LockEvent.Type.HANDED_OFF, "m", T2, Optional.of("a"), Optional.of(T1), Optional.of("b"));
    assertEquals(Optional.of(T2), handOff.token());
    LockEvent released = new LockEvent(LockEvent.Type.RELEASED, "m", T2, Optional.of("a"), Optional.of(T1), Optional.empty());
    assertEquals(Optional.empty(), released.token());
    assertEquals(handOff, new LockEvent(LockEvent.Type.HANDED_OFF, "m", T2, Optional.of("a"), Optional.of(T1), Optional.of("b")));
  }

  @Test
  void eventsRefuseNulls() {
    Optional<String> none = Optional.empty();
    Optional<FencingToken> noToken = Optional.empty();
    assertThrows(NullPointerException.class, () -> new LockEvent(null, "m", T1, none, noToken, none));
    assertThrows(NullPointerException.class, () -> new LockEvent(LockEvent.Type.ACQUIRED, null, T1, none, noToken, none));
    assertThrows(NullPointerException.class, () -> new LockEvent(LockEvent.Type.ACQUIRED, "m", null, none, noToken, none));
    assertThrows(NullPointerException.class, () -> new LockEvent(LockEvent.Type.ACQUIRED, "m", T1, null, noToken, none));
    assertThrows(NullPointerException.class, () -> new LockEvent(LockEvent.Type.ACQUIRED, "m", T1, none, null, none));
    assertThrows(NullPointerException.class, () -> new LockEvent(LockEvent.Type.ACQUIRED, "m", T1, none, noToken, null));
  }

  @Test
  void ownersAndQueueEntriesRefuseNulls() {
    assertEquals(new MutexOwner("a", T1, 3), new MutexOwner("a", T1, 3));
    assertThrows(NullPointerException.class, () -> new MutexOwner(null, T1, 0));
    assertThrows(NullPointerException.class, () -> new MutexOwner("a", null, 0));
    assertThrows(NullPointerException.class, () -> new QueueEntry(null, T1));
    assertThrows(NullPointerException.class, () -> new QueueEntry("a", null));
  }

  @Test
  void aStateIsHeldWithAnOwnerAndKeepsItsQueue() {
    List<QueueEntry> queue = new ArrayList<>(List.of(new QueueEntry("b", T2)));
    MutexState held = new MutexState("m", Optional.of(new MutexOwner("a", T1, 0)), queue);
    queue.clear();
    assertTrue(held.isHeld());
    assertEquals(List.of(new QueueEntry("b", T2)), held.queue());
    assertThrows(UnsupportedOperationException.class, () -> held.queue().add(new QueueEntry("c", T1)));
    assertFalse(new MutexState("m", Optional.empty(), List.of()).isHeld());
  }

  @Test
  void anInspectionRefusesNullsButNotEmptyDurations() {
    MutexState free = new MutexState("m", Optional.empty(), List.of());
    assertEquals(Optional.empty(), new MutexInspection(free, Optional.empty(), Optional.empty()).heldFor());
    assertThrows(NullPointerException.class, () -> new MutexInspection(null, Optional.empty(), Optional.empty()));
    assertThrows(NullPointerException.class, () -> new MutexInspection(free, null, Optional.empty()));
    assertThrows(NullPointerException.class, () -> new MutexInspection(free, Optional.of(Duration.ZERO), null));
  }
}
