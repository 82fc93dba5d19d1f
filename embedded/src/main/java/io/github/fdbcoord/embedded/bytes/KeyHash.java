package io.github.fdbcoord.embedded.bytes;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/** The hash of keys in the hash indexes (the store's chain table and row cache, the resolver's tables). */
public final class KeyHash {
  private KeyHash() {}

  private static final VarHandle LONGS =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  /**
   * A well-mixed hash: keys often differ only in a few trailing bytes (tuple-encoded integers),
   * which {@code Arrays.hashCode} maps onto few buckets.
   */
  public static int hash(byte[] b) {
    long h = 0x9E3779B97F4A7C15L ^ b.length;
    int i = 0;
    for (; i + 8 <= b.length; i += 8) {
      // A multiply and a fold per word; the final mix spreads what is left.
      h = (h ^ (long) LONGS.get(b, i)) * 0x9E3779B97F4A7C15L;
      h ^= h >>> 29;
    }
    long tail = 0;
    for (int shift = 0; i < b.length; i++, shift += 8) {
      tail |= (b[i] & 0xffL) << shift;
    }
    h = mix(h ^ tail);
    return (int) (h ^ (h >>> 32));
  }

  private static long mix(long z) {
    z = (z ^ (z >>> 33)) * 0xff51afd7ed558ccdL;
    z = (z ^ (z >>> 33)) * 0xc4ceb9fe1a85ec53L;
    return z ^ (z >>> 33);
  }
}
