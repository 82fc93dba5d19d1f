package io.github.fdbcoord.api;

import java.util.Arrays;
import java.util.HexFormat;

/**
 * The token of one grant of a mutex: the 10-byte versionstamp of the commit that made the owner
 * owner. Each new owner of a mutex gets a strictly greater token, so a guarded resource can refuse
 * writes carrying a token lower than the highest it has seen (a stale owner's writes).
 *
 * <p>Tokens compare as unsigned bytes, which is the order of the commits that granted them; their
 * hexadecimal form (20 lower-case digits) sorts the same way as a string.
 */
public final class FencingToken implements Comparable<FencingToken> {
  public static final int LENGTH = 10;
  private static final HexFormat HEX = HexFormat.of();

  private final byte[] bytes;

  private FencingToken(byte[] bytes) {
    this.bytes = bytes;
  }

  /** The token whose 10 bytes are {@code bytes}. */
  public static FencingToken of(byte[] bytes) {
    if (bytes == null || bytes.length != LENGTH) {
      throw new IllegalArgumentException("a fencing token is " + LENGTH + " bytes, got "
          + (bytes == null ? "null" : bytes.length));
    }
    return new FencingToken(bytes.clone());
  }

  /** Parses the form {@link #toString()} prints: 20 hexadecimal digits. */
  public static FencingToken parse(String hex) {
    if (hex == null || hex.length() != 2 * LENGTH) {
      throw new IllegalArgumentException("a fencing token is " + (2 * LENGTH) + " hex digits, got " + hex);
    }
    try {
      return new FencingToken(HEX.parseHex(hex));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("a fencing token is " + (2 * LENGTH) + " hex digits, got " + hex, e);
    }
  }

  /** The 10 bytes: 8-byte big-endian commit version, 2-byte batch order. */
  public byte[] bytes() {
    return bytes.clone();
  }

  /** The commit version of the granting commit. */
  public long commitVersion() {
    long v = 0;
    for (int i = 0; i < 8; i++) {
      v = (v << 8) | (bytes[i] & 0xff);
    }
    return v;
  }

  @Override
  public int compareTo(FencingToken o) {
    return Arrays.compareUnsigned(bytes, o.bytes);
  }

  /** Whether this grant came after {@code other}'s. */
  public boolean isNewerThan(FencingToken other) {
    return compareTo(other) > 0;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof FencingToken && Arrays.equals(bytes, ((FencingToken) o).bytes);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(bytes);
  }

  @Override
  public String toString() {
    return HEX.formatHex(bytes);
  }
}
