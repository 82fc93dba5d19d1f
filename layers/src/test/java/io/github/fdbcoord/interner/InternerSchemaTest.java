package io.github.fdbcoord.interner;

import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.Tuple;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Round trips of every pack/unpack pair of {@link InternerSchema}; no store needed. */
class InternerSchemaTest {
  private static final Subspace NS = new Subspace(new byte[] {0x15, 0x2a});
  private static final List<String> STRINGS = List.of("", "a", "hello world", "nul\u0000inside", "\u0000",
      "é", "日本語", "emoji \uD83D\uDE00 pair", "\u07ff\u0800\uffff", "x".repeat(5000));
  private static final long[] IDS = {1, 0x10000, Long.MAX_VALUE, Long.MIN_VALUE, -1L, 0x8000_0000_0000_0001L, 0};

  @Test
  void metaRoundTrip() {
    for (int bits = 1; bits <= 63; bits++) {
      assertEquals(bits, InternerSchema.unpackMeta(InternerSchema.packMeta(bits)));
    }
    byte[] future = Tuple.from(2L, 16L).pack();
    assertThrows(IllegalStateException.class, () -> InternerSchema.unpackMeta(future));
  }

  @Test
  void metaKeyIsOutsideTheDataSubspaces() {
    InternerSchema schema = new InternerSchema(NS, 16);
    byte[] meta = InternerSchema.metaKey(NS);
    assertTrue(NS.contains(meta));
    assertFalse(NS.get(1L).contains(meta) || NS.get(2L).contains(meta) || NS.get(3L).contains(meta));
    assertFalse(java.util.Arrays.equals(meta, schema.packForwardKey("")));
  }

  @Test
  void idValueRoundTrip() {
    for (long id : IDS) {
      byte[] packed = InternerSchema.packIdValue(id);
      assertEquals(8, packed.length);
      assertEquals(id, InternerSchema.unpackIdValue(packed));
    }
    assertThrows(IllegalStateException.class, () -> InternerSchema.unpackIdValue(new byte[7]));
  }

  @Test
  void stringValueRoundTrip() {
    for (String s : STRINGS) {
      assertEquals(s, InternerSchema.unpackStringValue(InternerSchema.packStringValue(s)));
    }
  }

  @Test
  void counterRoundTrip() {
    for (long next : new long[] {0, 1, 255, 256, 1L << 48, Long.MIN_VALUE, -1L}) {
      byte[] packed = InternerSchema.packCounter(next);
      assertEquals(8, packed.length);
      assertEquals(next, InternerSchema.unpackCounter(packed));
    }
    assertEquals(1, InternerSchema.packCounter(1)[0], "little-endian, as FoundationDB's ADD");
    assertEquals(0, InternerSchema.unpackCounter(null), "a sequence never used starts at 0");
  }

  @Test
  void forwardKeyRoundTripAndLength() {
    InternerSchema schema = new InternerSchema(NS, 16);
    for (String s : STRINGS) {
      byte[] key = schema.packForwardKey(s);
      assertEquals(s, schema.unpackForwardKey(key));
      assertEquals(key.length, schema.forwardKeyLength(s), "computed length of " + s.length() + "-char string");
      assertTrue(NS.get(1L).contains(key));
    }
  }

  /** The forward key is written without the tuple layer; it must be the tuple layer's key byte for byte. */
  @Test
  void forwardKeyIsTheTupleEncoding() {
    InternerSchema schema = new InternerSchema(NS, 16);
    List<String> more = new java.util.ArrayList<>(STRINGS);
    more.addAll(List.of("\u007f\u0080", "\u0000\u0000", "end\u0000", "\uD800\uDC00", "\uDBFF\uDFFF",
        "at://did:plc:client7/app.bsky.feed.post/123"));
    java.util.Random random = new java.util.Random(36);
    for (int i = 0; i < 2000; i++) {
      StringBuilder b = new StringBuilder();
      for (int n = random.nextInt(12); n > 0; n--) {
        int cp = switch (random.nextInt(4)) {
          case 0 -> random.nextInt(0x80);
          case 1 -> 0x80 + random.nextInt(0x800 - 0x80);
          case 2 -> 0xe000 + random.nextInt(0x10000 - 0xe000);
          default -> 0x10000 + random.nextInt(0x110000 - 0x10000);
        };
        b.appendCodePoint(cp);
      }
      more.add(b.toString());
    }
    for (String s : more) {
      assertArrayEquals(NS.get(1L).pack(Tuple.from(s)), schema.packForwardKey(s), "key of " + s);
    }
  }

  @Test
  void malformedUtf16HasNoKeyLength() {
    InternerSchema schema = new InternerSchema(NS, 16);
    assertEquals(-1, schema.forwardKeyLength("lone high \uD83D"));
    assertEquals(-1, schema.forwardKeyLength("\uDE00 lone low"));
    assertEquals(-1, schema.forwardKeyLength("\uD83D\uD83D"));
  }

  @Test
  void maxStringBytesFillsTheKeyExactly() {
    InternerSchema schema = new InternerSchema(NS, 16);
    String longest = "y".repeat(schema.maxStringBytes());
    assertEquals(InternerSchema.KEY_SIZE_LIMIT, schema.packForwardKey(longest).length);
    assertEquals(InternerSchema.KEY_SIZE_LIMIT + 1, schema.forwardKeyLength(longest + "y"));
  }

  @Test
  void reverseKeyRoundTripSortsUnsigned() {
    InternerSchema schema = new InternerSchema(NS, 16);
    for (long id : IDS) {
      byte[] key = schema.packReverseKey(id);
      assertEquals(id, schema.unpackReverseKey(key));
      assertTrue(NS.get(2L).contains(key));
    }
    byte[] small = schema.packReverseKey(1);
    byte[] large = schema.packReverseKey(-1L); // 2^64 - 1 unsigned
    assertTrue(java.util.Arrays.compareUnsigned(small, large) < 0);
    assertThrows(IllegalArgumentException.class, () -> schema.unpackReverseKey(schema.packSequenceKey(1)));
    // The reverse range covers raw ids starting with 0xff, which a tuple subspace range would miss.
    assertTrue(java.util.Arrays.compareUnsigned(schema.reverseRange().begin, schema.packReverseKey(1)) <= 0);
    assertTrue(java.util.Arrays.compareUnsigned(large, schema.reverseRange().end) < 0);
    assertTrue(java.util.Arrays.compareUnsigned(schema.packSequenceKey(1), schema.reverseRange().end) >= 0);
  }

  @Test
  void sequenceKeyRoundTrip() {
    InternerSchema schema = new InternerSchema(NS, 63);
    for (long seq : new long[] {1, 2, 65535, Long.MAX_VALUE}) {
      byte[] key = schema.packSequenceKey(seq);
      assertEquals(seq, schema.unpackSequenceKey(key));
      assertTrue(NS.get(3L).contains(key));
    }
  }

  @Test
  void subspacesAreDisjoint() {
    InternerSchema schema = new InternerSchema(NS, 16);
    Subspace forward = NS.get(1L);
    Subspace reverse = NS.get(2L);
    Subspace counters = NS.get(3L);
    byte[] f = schema.packForwardKey("1");
    byte[] r = schema.packReverseKey(1);
    byte[] c = schema.packSequenceKey(1);
    assertTrue(forward.contains(f) && !reverse.contains(f) && !counters.contains(f));
    assertTrue(reverse.contains(r) && !forward.contains(r) && !counters.contains(r));
    assertTrue(counters.contains(c) && !forward.contains(c) && !reverse.contains(c));
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 2, 16, 20, 32, 48, 60, 62, 63})
  void idPackingAtTheBoundaries(int sequenceBits) {
    InternerSchema schema = new InternerSchema(NS, sequenceBits);
    int counterBits = 64 - sequenceBits;
    long maxSeq = schema.maxSequenceId();
    long maxCounter = schema.counterCapacity() - 1;
    assertEquals(counterBits == 64 ? 0 : -1L >>> (64 - sequenceBits), maxSeq);
    long[][] cases = {{1, 0}, {1, maxCounter}, {maxSeq, 0}, {maxSeq, maxCounter}, {1, 1}, {maxSeq, maxCounter >>> 1}};
    Set<Long> seen = new HashSet<>();
    for (long[] c : cases) {
      long id = schema.packId(c[0], c[1]);
      assertEquals(c[0], schema.sequenceOf(id), "sequence of " + Long.toHexString(id));
      assertEquals(c[1], schema.counterOf(id), "counter of " + Long.toHexString(id));
      assertTrue(schema.isValidId(id));
      seen.add(id);
    }
    // The largest counter of sequence s and the first of s + 1 are adjacent, never equal.
    if (maxSeq > 1) {
      assertEquals(schema.packId(1, maxCounter) + 1, schema.packId(2, 0));
    }
    assertEquals(-1L, schema.packId(maxSeq, maxCounter), "the largest id is 2^64 - 1");
    assertThrows(IllegalArgumentException.class, () -> schema.packId(1, schema.counterCapacity()));
    assertThrows(IllegalArgumentException.class, () -> schema.packId(0, 0));
    if (sequenceBits < 63) {
      assertThrows(IllegalArgumentException.class, () -> schema.packId(maxSeq + 1, 0));
    }
    assertFalse(schema.isValidId(0));
    assertFalse(schema.isValidId(maxCounter), "ids of reserved sequence 0 are invalid");
  }

  @Test
  void customSplitDoesNotOverlap() {
    InternerSchema schema = new InternerSchema(NS, 20);
    long id = schema.packId(0xABCDE, 0x123_4567_89ABL);
    assertEquals(0xABCDE_1234_5678_9ABL, id);
    assertEquals(44, schema.counterBits());
  }

  @Test
  void rejectsImpossibleSplits() {
    assertThrows(IllegalArgumentException.class, () -> new InternerSchema(NS, 0));
    assertThrows(IllegalArgumentException.class, () -> new InternerSchema(NS, 64));
  }
}
