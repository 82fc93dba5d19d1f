package io.github.fdbcoord.embedded.bytes;

import java.util.Arrays;
import java.util.Comparator;

/** Byte-string helpers in FoundationDB's key order (unsigned lexicographic). */
public final class Bytes {
  public static final byte[] EMPTY = new byte[0];
  /** First key of the system key space; the end of the normal key space. */
  public static final byte[] SYSTEM_BEGIN = {(byte) 0xff};
  /** End of the whole key space (system keys included). */
  public static final byte[] ALL_END = {(byte) 0xff, (byte) 0xff};
  public static final Comparator<byte[]> ORDER = Arrays::compareUnsigned;

  private Bytes() {}

  public static int compare(byte[] a, byte[] b) {
    return Arrays.compareUnsigned(a, b);
  }

  public static byte[] min(byte[] a, byte[] b) {
    return compare(a, b) <= 0 ? a : b;
  }

  public static byte[] max(byte[] a, byte[] b) {
    return compare(a, b) >= 0 ? a : b;
  }

  /** The first key after {@code key}: {@code key + \x00}. */
  public static byte[] keyAfter(byte[] key) {
    return Arrays.copyOf(key, key.length + 1);
  }

  /** Whether {@code b} is {@code keyAfter(a)}. */
  public static boolean isKeyAfter(byte[] a, byte[] b) {
    return b.length == a.length + 1 && b[a.length] == 0 && Arrays.equals(a, 0, a.length, b, 0, a.length);
  }
}
