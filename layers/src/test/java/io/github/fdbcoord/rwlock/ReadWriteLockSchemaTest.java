package io.github.fdbcoord.rwlock;

import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.Tuple;
import com.apple.foundationdb.tuple.Versionstamp;
import io.github.fdbcoord.rwlock.ReadWriteLockSchema.Holder;
import io.github.fdbcoord.rwlock.ReadWriteLockSchema.Waiter;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every pack function against its unpack function, and the versionstamped operands' layout. */
class ReadWriteLockSchemaTest {
  private final ReadWriteLockSchema schema = new ReadWriteLockSchema(new Subspace(Tuple.from("rw-test")));
  private static final Versionstamp STAMP = Versionstamp.complete(new byte[] {0, 0, 0, 0, 0, 0, 1, 2, 0, 3}, 4);

  @Test
  void grantKeyAndValueRoundTrip() {
    assertEquals("ów ner", schema.unpackGrantKey("lock", schema.packGrantKey("lock", "ów ner")));
    for (LockMode mode : LockMode.values()) {
      assertEquals(new Holder("o", mode, STAMP), schema.unpackGrantValue("o", schema.packGrantValue(mode, STAMP)));
    }
  }

  @Test
  void grantValueForGrantCarriesTheUserVersionAndThePlaceholderOffset() {
    byte[] operand = schema.packGrantValueForGrant(LockMode.READ, 7);
    byte[] value = Arrays.copyOf(operand, operand.length - 4);
    int offset = ByteBuffer.wrap(operand, operand.length - 4, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
    byte[] stamp = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
    System.arraycopy(stamp, 0, value, offset, 10);
    Holder h = schema.unpackGrantValue("o", value);
    assertEquals(LockMode.READ, h.mode());
    assertEquals(Versionstamp.complete(stamp, 7), h.token());
  }

  @Test
  void leaseKeyAndValueRoundTrip() {
    assertEquals("o", schema.unpackLeaseKey("lock", schema.packLeaseKey("lock", "o")));
    assertEquals(1_700_000_000_123L, schema.unpackLeaseValue(schema.packLeaseValue(1_700_000_000_123L)));
  }

  @Test
  void queueKeyAndValueRoundTrip() {
    assertEquals(STAMP, schema.unpackQueueKey("lock", schema.packQueueKey("lock", STAMP)));
    Waiter w = new Waiter(STAMP, "o", LockMode.WRITE, 42L);
    assertEquals(w, schema.unpackQueueValue(STAMP, schema.packQueueValue("o", LockMode.WRITE, 42L)));
    assertTrue(inRange(schema.queueRange("lock"), schema.packQueueKey("lock", STAMP)));
  }

  @Test
  void queueKeyForEnqueuePlacesTheStampWhereUnpackFindsIt() {
    byte[] operand = schema.packQueueKeyForEnqueue("lock");
    byte[] key = Arrays.copyOf(operand, operand.length - 4);
    int offset = ByteBuffer.wrap(operand, operand.length - 4, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
    System.arraycopy(STAMP.getTransactionVersion(), 0, key, offset, 10);
    assertEquals(Versionstamp.complete(STAMP.getTransactionVersion(), 0), schema.unpackQueueKey("lock", key));
  }

  @Test
  void queuedKeyAndValueRoundTrip() {
    assertEquals("o", schema.unpackQueuedKey("lock", schema.packQueuedKey("lock", "o")));
    assertEquals(STAMP, schema.unpackQueuedValue(schema.packQueuedValue(STAMP)));
  }

  @Test
  void generationAndActiveRoundTrip() {
    byte[] stamp = STAMP.getTransactionVersion();
    assertArrayEquals(stamp, schema.unpackGenerationValue(schema.packGenerationValue(stamp)));
    assertEquals(14, schema.packGenerationValueForChange().length);
    assertEquals("a lock", schema.unpackActiveKey(schema.packActiveKey("a lock")));
    assertTrue(inRange(schema.activeRange(), schema.packActiveKey("a lock")));
    assertEquals(0, schema.packActiveValue().length);
  }

  @Test
  void writerRoundTrip() {
    assertEquals("w1", schema.unpackWriterValue(schema.packWriterValue("w1")));
    assertTrue(inRange(schema.lock("a lock").range(), schema.packWriterKey("a lock")), "inside the lock's keys");
    assertFalse(inRange(schema.grantRange("a lock"), schema.packWriterKey("a lock")), "not among its holders");
  }

  private static boolean inRange(com.apple.foundationdb.Range r, byte[] key) {
    return java.util.Arrays.compareUnsigned(r.begin, key) <= 0 && java.util.Arrays.compareUnsigned(key, r.end) < 0;
  }

  @Test
  void namesAreChecked() {
    assertEquals("lock name must not be empty",
        assertThrows(IllegalArgumentException.class, () -> ReadWriteLockSchema.checkName("", "lock name")).getMessage());
    assertThrows(IllegalArgumentException.class, () -> ReadWriteLockSchema.checkName("x".repeat(1025), "owner"));
  }
}
