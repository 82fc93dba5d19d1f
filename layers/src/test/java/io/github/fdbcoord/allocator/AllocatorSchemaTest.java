package io.github.fdbcoord.allocator;

import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.ByteArrayUtil;
import com.apple.foundationdb.tuple.Tuple;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AllocatorSchemaTest {
  private final Subspace subspace = new Subspace(Tuple.from("schema-test"));
  private final AllocatorSchema schema = new AllocatorSchema(subspace);

  @Test
  void counterKeyRoundTrips() {
    for (long start : new long[] {0, 64, 255, 1024, 65535, 1L << 40}) {
      byte[] key = schema.packCounterKey(start);
      assertTrue(ByteArrayUtil.startsWith(key, subspace.getKey()));
      assertEquals(start, schema.unpackCounterKey(key));
    }
  }

  @Test
  void counterValueRoundTripsAsLittleEndian() {
    for (long count : new long[] {0, 1, 31, 1L << 33, Long.MAX_VALUE}) {
      assertEquals(count, AllocatorSchema.unpackCounterValue(AllocatorSchema.packCounterValue(count)));
    }
    assertArrayEquals(new byte[] {1, 0, 0, 0, 0, 0, 0, 0}, AllocatorSchema.packCounterValue(1));
    assertEquals(0, AllocatorSchema.unpackCounterValue(null));
    assertThrows(IllegalStateException.class, () -> AllocatorSchema.unpackCounterValue(new byte[3]));
  }

  @Test
  void reservationKeyAndValueRoundTrip() {
    for (long candidate : new long[] {0, 63, 64, 8191, 1L << 50}) {
      byte[] key = schema.packReservationKey(candidate);
      assertEquals(candidate, schema.unpackReservationKey(key));
      assertNotEquals(0, ByteArrayUtil.compareUnsigned(key, schema.packCounterKey(candidate)));
    }
    assertTrue(AllocatorSchema.unpackReservationValue(AllocatorSchema.packReservationValue()));
    assertFalse(AllocatorSchema.unpackReservationValue(null));
  }

  @Test
  void countersSortBeforeReservationsAndNaiveCounterIsApart() {
    byte[] lastCounter = schema.packCounterKey(Long.MAX_VALUE);
    byte[] firstReservation = schema.packReservationKey(0);
    assertTrue(ByteArrayUtil.compareUnsigned(lastCounter, firstReservation) < 0);
    byte[] naive = schema.naiveCounterKey();
    assertTrue(ByteArrayUtil.startsWith(naive, subspace.getKey()));
    assertEquals(Tuple.from("counter"), subspace.unpack(naive));
  }

  @Test
  void compactPrefixMatchesSeedEncoding() {
    assertArrayEquals(new byte[] {1, 0}, AllocatorSchema.packPrefix(0));
    assertArrayEquals(new byte[] {1, 5}, AllocatorSchema.packPrefix(5));
    assertArrayEquals(new byte[] {1, (byte) 0xff}, AllocatorSchema.packPrefix(255));
    assertArrayEquals(new byte[] {2, 1, 0}, AllocatorSchema.packPrefix(256));
    assertArrayEquals(new byte[] {2, 1, 0x2c}, AllocatorSchema.packPrefix(300));
    assertEquals(9, AllocatorSchema.packPrefix(Long.MAX_VALUE).length);
  }

  @Test
  void compactPrefixRoundTripsAndIsPrefixFree() {
    List<byte[]> encoded = new ArrayList<>();
    long[] values = {0, 1, 5, 255, 256, 300, 65535, 65536, 1L << 24, 1L << 40, Long.MAX_VALUE};
    for (long v : values) {
      byte[] p = AllocatorSchema.packPrefix(v);
      assertEquals(v, AllocatorSchema.unpackPrefix(p));
      encoded.add(p);
    }
    for (int i = 0; i < encoded.size(); i++) {
      for (int j = 0; j < encoded.size(); j++) {
        if (i != j) {
          assertFalse(ByteArrayUtil.startsWith(encoded.get(j), encoded.get(i)),
              "prefix of " + values[i] + " starts the prefix of " + values[j]);
        }
      }
    }
  }

  @Test
  void compactPrefixRejectsBadInput() {
    assertThrows(IllegalArgumentException.class, () -> AllocatorSchema.packPrefix(-1));
    assertThrows(IllegalArgumentException.class, () -> AllocatorSchema.unpackPrefix(new byte[] {1}));
    assertThrows(IllegalArgumentException.class, () -> AllocatorSchema.unpackPrefix(new byte[] {2, 1}));
    assertThrows(IllegalArgumentException.class, () -> AllocatorSchema.unpackPrefix(new byte[] {9, 1, 1, 1, 1, 1, 1, 1, 1, 1}));
  }

  @Test
  void windowSizesFollowSeed() {
    assertEquals(64, AllocatorSchema.windowSize(0));
    assertEquals(64, AllocatorSchema.windowSize(254));
    assertEquals(1024, AllocatorSchema.windowSize(255));
    assertEquals(1024, AllocatorSchema.windowSize(65534));
    assertEquals(8192, AllocatorSchema.windowSize(65535));
    assertEquals(8192, AllocatorSchema.windowSize(1L << 40));
  }
}
