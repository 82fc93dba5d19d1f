package io.github.fdbcoord.mutex;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.api.MutexOwner;
import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.Tuple;
import com.apple.foundationdb.tuple.Versionstamp;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Round trips of every pack/unpack pair of {@link MutexSchema}, including the versionstamped operands. */
class MutexSchemaTest {
  private final MutexSchema schema = new MutexSchema(new Subspace(Tuple.from("schema-test")));
  private static final byte[] STAMP = {0, 0, 0, 0, 0x12, 0x34, 0x56, 0x78, 0, 3};

  /** What the commit does to a versionstamped operand: drop the offset, write the stamp there. */
  private static byte[] commit(byte[] operand, byte[] stamp) {
    int offset = ByteBuffer.wrap(operand, operand.length - 4, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
    byte[] out = Arrays.copyOf(operand, operand.length - 4);
    System.arraycopy(stamp, 0, out, offset, 10);
    return out;
  }

  @Test
  void ownerValueRoundTrips() {
    MutexOwner o = new MutexOwner("owner-ü", FencingToken.of(STAMP), 42);
    MutexSchema.Incarnation via = new MutexSchema.Incarnation("host-a", "start-1");
    byte[] packed = schema.packOwnerValue(o, via);
    assertEquals(o, schema.unpackOwnerValue(packed));
    assertEquals(via, schema.unpackOwnerIncarnation(packed));
    byte[] without = schema.packOwnerValue(o, null);
    assertEquals(o, schema.unpackOwnerValue(without));
    assertNull(schema.unpackOwnerIncarnation(without));
    // Records written before incarnations existed: (owner, token, heartbeats).
    byte[] old = Tuple.from("owner-ü", Versionstamp.complete(STAMP, 0), 42L).pack();
    assertEquals(o, schema.unpackOwnerValue(old));
    assertNull(schema.unpackOwnerIncarnation(old));
  }

  @Test
  void ownerGrantOperandBecomesRecordWithCommitToken() {
    MutexSchema.Incarnation via = new MutexSchema.Incarnation(null, "start-2");
    byte[] committed = commit(schema.packOwnerValueForGrant("alice", via), STAMP);
    assertEquals(new MutexOwner("alice", FencingToken.of(STAMP), 0), schema.unpackOwnerValue(committed));
    assertEquals(via, schema.unpackOwnerIncarnation(committed));
  }

  @Test
  void incarnationIsEarlierOnlyForTheSameHostAndAnotherStart() {
    MutexSchema.Incarnation now = new MutexSchema.Incarnation("h", "2");
    assertTrue(new MutexSchema.Incarnation("h", "1").isEarlierOf(now));
    assertFalse(new MutexSchema.Incarnation("h", "2").isEarlierOf(now));
    assertFalse(new MutexSchema.Incarnation("other", "1").isEarlierOf(now));
    assertFalse(new MutexSchema.Incarnation(null, "1").isEarlierOf(new MutexSchema.Incarnation(null, "2")));
  }

  @Test
  void ownerKeyIsInsideTheMutexSubspace() {
    assertTrue(schema.mutex("m1").contains(schema.packOwnerKey("m1")));
    assertTrue(!schema.mutex("m2").contains(schema.packOwnerKey("m1")));
  }

  @Test
  void generationValueRoundTrips() {
    FencingToken g = FencingToken.of(STAMP);
    assertEquals(g, schema.unpackGenerationValue(schema.packGenerationValue(g)));
    assertEquals(g, schema.unpackGenerationValue(commit(schema.packGenerationValueForTransition(), STAMP)));
    assertTrue(schema.mutex("m").contains(schema.packGenerationKey("m")));
  }

  @Test
  void queueKeyAndValueRoundTrip() {
    Versionstamp ticket = Versionstamp.complete(STAMP, 0);
    assertEquals(ticket, schema.unpackQueueKey("m", schema.packQueueKey("m", ticket)));
    MutexSchema.Incarnation via = new MutexSchema.Incarnation("host-b", "start-3");
    byte[] key = schema.packQueueKey("m", ticket);
    byte[] value = schema.packQueueValue("bob", via, 7);
    assertEquals("bob", schema.unpackQueueValue(value));
    assertEquals(new MutexSchema.Waiter(ticket, "bob", via, 7), schema.unpackWaiter("m", key, value));
    assertEquals(new MutexSchema.Waiter(ticket, "bob", null, 0), schema.unpackWaiter("m", key, schema.packQueueValue("bob", null, 0)));
    // Entries written before incarnations and beats existed: (owner).
    assertEquals(new MutexSchema.Waiter(ticket, "bob", null, 0), schema.unpackWaiter("m", key, Tuple.from("bob").pack()));
    byte[] committed = commit(schema.packQueueKeyForEnqueue("m"), STAMP);
    assertArrayEquals(schema.packQueueKey("m", ticket), committed);
    assertTrue(schema.queueRange("m").begin.length > 0);
    assertTrue(Arrays.compareUnsigned(schema.queueRange("m").begin, committed) < 0);
    assertTrue(Arrays.compareUnsigned(committed, schema.queueRange("m").end) < 0);
  }

  @Test
  void queuedIndexRoundTrips() {
    Versionstamp ticket = Versionstamp.complete(STAMP, 0);
    assertEquals("carol", schema.unpackQueuedKey("m", schema.packQueuedKey("m", "carol")));
    assertEquals(ticket, schema.unpackQueuedValue(schema.packQueuedValue(ticket)));
    // The index value written at enqueue completes to the same ticket as the queue key.
    assertEquals(ticket, schema.unpackQueuedValue(commit(schema.packQueuedValueForEnqueue(), STAMP)));
  }

  @Test
  void eventKeyAndValueRoundTrip() {
    FencingToken seq = FencingToken.of(STAMP);
    assertEquals(seq, schema.unpackEventKey("m", schema.packEventKey("m", seq)));
    assertArrayEquals(schema.packEventKey("m", seq), commit(schema.packEventKeyForTransition("m"), STAMP));
    FencingToken prev = FencingToken.of(new byte[] {0, 0, 0, 0, 0, 0, 0, 1, 0, 0});
    for (MutexSchema.EventRecord e : new MutexSchema.EventRecord[] {
        new MutexSchema.EventRecord(LockEvent.Type.ACQUIRED, null, null, "a"),
        new MutexSchema.EventRecord(LockEvent.Type.RELEASED, "a", prev, null),
        new MutexSchema.EventRecord(LockEvent.Type.HANDED_OFF, "a", prev, "b"),
        new MutexSchema.EventRecord(LockEvent.Type.EXPIRED, "a", prev, null)}) {
      assertEquals(e, schema.unpackEventValue(schema.packEventValue(e)));
    }
  }

  @Test
  void eventRecordBecomesLockEvent() {
    FencingToken prev = FencingToken.of(new byte[] {0, 0, 0, 0, 0, 0, 0, 1, 0, 0});
    LockEvent e = new MutexSchema.EventRecord(LockEvent.Type.HANDED_OFF, "a", prev, "b")
        .toEvent("m", FencingToken.of(STAMP));
    assertEquals("b", e.owner().orElseThrow());
    assertEquals(FencingToken.of(STAMP), e.token().orElseThrow());
    assertEquals(prev, e.previousToken().orElseThrow());
  }

  @Test
  void heldIndexRoundTrips() {
    assertEquals("mutex/x", schema.unpackHeldKey(schema.packHeldKey("mutex/x")));
    assertEquals(0, schema.packHeldValue().length);
    assertTrue(!schema.mutex("x").contains(schema.packHeldKey("x")));
  }

  @Test
  void fencingTokenFormsRoundTripAndOrder() {
    FencingToken a = FencingToken.of(STAMP);
    assertEquals(a, FencingToken.parse(a.toString()));
    assertEquals(a, FencingToken.of(a.bytes()));
    assertEquals(a, MutexSchema.token(MutexSchema.versionstamp(a)));
    assertEquals(0x12345678L, a.commitVersion());
    FencingToken b = FencingToken.of(new byte[] {0, 0, 0, 0, (byte) 0x92, 0, 0, 0, 0, 0});
    assertTrue(b.isNewerThan(a));
    assertTrue(b.toString().compareTo(a.toString()) > 0);
    assertThrows(IllegalArgumentException.class, () -> FencingToken.parse("xyz"));
    assertThrows(IllegalArgumentException.class, () -> FencingToken.parse("zz345678901234567890"));
    assertThrows(IllegalArgumentException.class, () -> FencingToken.of(new byte[3]));
  }

  @Test
  void namesAreChecked() {
    assertThrows(IllegalArgumentException.class, () -> MutexSchema.checkName("", "mutex name"));
    assertThrows(IllegalArgumentException.class, () -> MutexSchema.checkName(null, "owner"));
    assertThrows(IllegalArgumentException.class, () -> MutexSchema.checkName("x".repeat(1025), "owner"));
    assertEquals("ok", MutexSchema.checkName("ok", "owner"));
  }

  @Test
  void nullFieldsOfAnEventAreKeptAsNull() {
    MutexSchema.EventRecord e = schema.unpackEventValue(
        schema.packEventValue(new MutexSchema.EventRecord(LockEvent.Type.ACQUIRED, null, null, "a")));
    assertNull(e.previousOwner());
    assertNull(e.previousToken());
  }
}
