package io.github.fdbcoord.api;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FencingTokenTest {
  private static byte[] bytes(int... values) {
    byte[] b = new byte[FencingToken.LENGTH];
    for (int i = 0; i < values.length; i++) {
      b[i] = (byte) values[i];
    }
    return b;
  }

  @Test
  void parsesWhatItPrints() {
    FencingToken t = FencingToken.of(bytes(0, 0, 0, 0, 0, 0, 0x01, 0x02, 0xff, 0x10));
    assertEquals("000000000000010200ff".length(), t.toString().length());
    assertEquals("0000000000000102ff10", t.toString());
    assertEquals(t, FencingToken.parse(t.toString()));
    assertEquals(t, FencingToken.parse("0000000000000102FF10"));
    assertEquals(t.hashCode(), FencingToken.parse(t.toString()).hashCode());
  }

  @Test
  void commitVersionIsTheFirstEightBytesBigEndian() {
    assertEquals(0x0102L, FencingToken.of(bytes(0, 0, 0, 0, 0, 0, 1, 2, 9, 9)).commitVersion());
    assertEquals(-1L, FencingToken.of(bytes(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0)).commitVersion());
  }

  @Test
  void ordersAsUnsignedBytesLikeItsHexForm() {
    FencingToken low = FencingToken.of(bytes(0x7f));
    FencingToken high = FencingToken.of(bytes(0x80));
    FencingToken batch = FencingToken.of(bytes(0x7f, 0, 0, 0, 0, 0, 0, 0, 0, 1));
    assertTrue(high.isNewerThan(low));
    assertTrue(batch.isNewerThan(low));
    assertFalse(low.isNewerThan(low));
    List<FencingToken> tokens = new ArrayList<>(List.of(high, batch, low));
    Collections.sort(tokens);
    assertEquals(List.of(low, batch, high), tokens);
    List<String> hex = new ArrayList<>(List.of(high.toString(), batch.toString(), low.toString()));
    Collections.sort(hex);
    assertEquals(tokens.stream().map(FencingToken::toString).toList(), hex);
  }

  @Test
  void isImmutable() {
    byte[] source = bytes(1);
    FencingToken t = FencingToken.of(source);
    source[0] = 2;
    t.bytes()[0] = 3;
    assertEquals(FencingToken.of(bytes(1)), t);
  }

  @Test
  void refusesMalformedInput() {
    assertThrows(IllegalArgumentException.class, () -> FencingToken.of(null));
    assertThrows(IllegalArgumentException.class, () -> FencingToken.of(new byte[9]));
    assertThrows(IllegalArgumentException.class, () -> FencingToken.parse(null));
    assertThrows(IllegalArgumentException.class, () -> FencingToken.parse("00"));
    assertThrows(IllegalArgumentException.class, () -> FencingToken.parse("zz000000000000000000"));
    assertNotEquals(FencingToken.of(bytes(1)), "0100000000000000000");
  }
}
