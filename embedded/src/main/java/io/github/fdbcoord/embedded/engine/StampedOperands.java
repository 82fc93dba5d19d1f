package io.github.fdbcoord.embedded.engine;

import java.nio.ByteBuffer;

/**
 * The engine's side of versionstamped operations: the versionstamp a commit version gives, and the
 * placeholder an operand carries, found and filled at commit. (Building operands from tuples is the
 * store's {@code io.github.fdbcoord.fdb.Versionstamps}.)
 */
public final class StampedOperands {
  private StampedOperands() {}

  /** FoundationDB's 10-byte versionstamp: 8-byte big-endian commit version, 2-byte batch order. */
  public static byte[] versionstamp(long version) {
    return ByteBuffer.allocate(10).putLong(version).putShort((short) 0).array();
  }

  /** Replaces the placeholder at the operand's little-endian offset suffix and drops the suffix. */
  public static byte[] fillStamp(byte[] operand, byte[] stamp) {
    int offset = stampOffset(operand);
    byte[] out = new byte[operand.length - 4];
    System.arraycopy(operand, 0, out, 0, out.length);
    System.arraycopy(stamp, 0, out, offset, 10);
    return out;
  }

  /** The placeholder offset of a versionstamped operand, or -1 when it is malformed. */
  public static int stampOffset(byte[] operand) {
    if (operand.length < 4) {
      return -1;
    }
    int n = operand.length;
    int offset = (operand[n - 4] & 0xff) | (operand[n - 3] & 0xff) << 8 | (operand[n - 2] & 0xff) << 16
        | (operand[n - 1] & 0xff) << 24;
    if (offset < 0 || offset + 10 > n - 4) {
      return -1;
    }
    return offset;
  }
}
