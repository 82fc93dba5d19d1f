package io.github.fdbcoord.semaphore;

import com.apple.foundationdb.Range;
import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.Tuple;
import com.apple.foundationdb.tuple.Versionstamp;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.semaphore.SemaphoreSchema.Waiter;
import org.junit.jupiter.api.Test;

import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every pack function of {@link SemaphoreSchema} against its unpack function. */
class SemaphoreSchemaTest {
  private final SemaphoreSchema schema = new SemaphoreSchema(new Subspace(Tuple.from("root")));
  private final FencingToken token = FencingToken.of(new byte[] {0, 0, 0, 0, 0, 0, 1, 2, 0, 3});
  private final Versionstamp ticket = Versionstamp.complete(new byte[] {0, 0, 0, 0, 0, 0, 4, 5, 0, 6}, 0);

  @Test
  void activeKey() {
    assertEquals("s\u00e9m", schema.unpackActiveKey(schema.packActiveKey("s\u00e9m")));
  }

  @Test
  void permitsValue() {
    assertEquals(7, schema.unpackPermitsValue(schema.packPermitsValue(7)));
  }

  @Test
  void generationValue() {
    assertEquals(token, schema.unpackGenerationValue(schema.packGenerationValue(token)));
  }

  @Test
  void holderKeyAndValue() {
    assertEquals("owner-1", schema.unpackHolderKey("sem", schema.packHolderKey("sem", "owner-1")));
    assertEquals(token, schema.unpackHolderValue(schema.packHolderValue(token)));
    assertTrue(inRange(schema.holderRange("sem"), schema.packHolderKey("sem", "owner-1")));
  }

  @Test
  void beatValue() {
    assertEquals(42L, schema.unpackBeatValue(schema.packBeatValue(42)));
  }

  @Test
  void queueKeyAndValue() {
    byte[] key = schema.packQueueKey("sem", ticket);
    assertEquals(ticket, schema.unpackQueueKey("sem", key));
    assertEquals(new Waiter(ticket, "w", 3), schema.unpackQueueEntry("sem", key, schema.packQueueValue("w", 3)));
    assertTrue(inRange(schema.queueRange("sem"), key));
  }

  @Test
  void queuedValue() {
    assertEquals(ticket, schema.unpackQueuedValue(schema.packQueuedValue(ticket)));
  }

  @Test
  void versionstampedOperandsPlaceTheStampWhereTheUnpackReadsIt() {
    // Fill the placeholder as the commit would (offset = last 4 bytes, little-endian) and unpack.
    byte[] stamp = {0, 0, 0, 0, 0, 0, 9, 9, 0, 1};
    assertEquals(FencingToken.of(stamp), schema.unpackHolderValue(fill(schema.packHolderValueForGrant(), stamp)));
    assertEquals(FencingToken.of(stamp), schema.unpackGenerationValue(fill(schema.packGenerationValueForChange(), stamp)));
    assertEquals(Versionstamp.complete(stamp, 0), schema.unpackQueuedValue(fill(schema.packQueuedValueForEnqueue(), stamp)));
    assertEquals(Versionstamp.complete(stamp, 0), schema.unpackQueueKey("sem", fill(schema.packQueueKeyForEnqueue("sem"), stamp)));
  }

  @Test
  void namesAreChecked() {
    assertEquals("semaphore name must not be null",
        assertThrows(IllegalArgumentException.class, () -> SemaphoreSchema.checkName(null, "semaphore name")).getMessage());
    assertEquals("owner must not be empty",
        assertThrows(IllegalArgumentException.class, () -> SemaphoreSchema.checkName("", "owner")).getMessage());
    assertEquals("owner is 1025 UTF-8 bytes long, at most 1024 allowed",
        assertThrows(IllegalArgumentException.class, () -> SemaphoreSchema.checkName("x".repeat(1025), "owner")).getMessage());
  }

  private static boolean inRange(Range r, byte[] key) {
    return Arrays.compareUnsigned(r.begin, key) <= 0 && Arrays.compareUnsigned(key, r.end) < 0;
  }

  private static byte[] fill(byte[] operand, byte[] stamp) {
    int n = operand.length;
    int offset = (operand[n - 4] & 0xff) | (operand[n - 3] & 0xff) << 8 | (operand[n - 2] & 0xff) << 16
        | (operand[n - 1] & 0xff) << 24;
    byte[] out = Arrays.copyOf(operand, n - 4);
    System.arraycopy(stamp, 0, out, offset, stamp.length);
    return out;
  }
}
