package io.github.fdbcoord.lease;

import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.ByteArrayUtil;
import com.apple.foundationdb.tuple.Tuple;
import com.apple.foundationdb.tuple.Versionstamp;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Round trips of the ended-grants record's key and value, and the order its trim relies on. */
class EndedGrantsTest {
  private final EndedGrants ended = new EndedGrants(new Subspace(Tuple.from("root", "ended")));

  private static byte[] token(long version, int batch, int userVersion, int length) {
    byte[] t = new byte[length];
    for (int i = 0; i < 8; i++) {
      t[i] = (byte) (version >>> (56 - 8 * i));
    }
    t[8] = (byte) (batch >>> 8);
    t[9] = (byte) batch;
    if (length == 12) {
      t[10] = (byte) (userVersion >>> 8);
      t[11] = (byte) userVersion;
    }
    return t;
  }

  @Test
  void keysRoundTripForTenAndTwelveByteTokens() {
    for (byte[] t : new byte[][] {token(123_456_789L, 3, 0, 10), token(987_654_321L, 1, 7, 12)}) {
      assertArrayEquals(t, ended.unpackKey(ended.packKey(t)));
    }
    assertThrows(IllegalArgumentException.class, () -> ended.packKey(new byte[9]));
    assertThrows(IllegalArgumentException.class, () -> ended.unpackKey(Tuple.from("elsewhere").pack()));
  }

  @Test
  void valuesRoundTrip() {
    EndedGrants.Ended released = new EndedGrants.Ended("lock", "owner", null);
    assertTrue(ended.unpackValue(ended.packValue(released)).released());
    assertEquals(released, ended.unpackValue(ended.packReleasedValue("lock", "owner")));
    EndedGrants.Ended downgraded = new EndedGrants.Ended("lock", "owner", Versionstamp.complete(token(5L, 0, 0, 10), 4));
    assertEquals(downgraded, ended.unpackValue(ended.packValue(downgraded)));
    assertTrue(downgraded.of("lock", "owner"));
    assertFalse(downgraded.of("lock", "another"));
    assertFalse(downgraded.of("another", "owner"));
  }

  @Test
  void theTrimEndSortsAfterEveryRecordOfAnOlderVersionAndBeforeTheRest() {
    byte[] end = ended.packTrimEnd(1_000_000L);
    assertTrue(ByteArrayUtil.compareUnsigned(ended.packKey(token(999_999L, 65_535, 65_535, 12)), end) < 0);
    assertTrue(ByteArrayUtil.compareUnsigned(ended.packKey(token(1_000_000L, 0, 0, 10)), end) >= 0);
    assertTrue(ByteArrayUtil.compareUnsigned(ended.packKey(token(1_000_001L, 0, 0, 12)), end) > 0);
  }
}
