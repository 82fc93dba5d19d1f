package io.github.fdbcoord.embedded.engine;

import io.github.fdbcoord.embedded.bytes.Bytes;

import com.apple.foundationdb.MutationType;

import java.util.Arrays;

/**
 * The value semantics of FoundationDB's atomic operations (fdbclient/include/fdbclient/Atomic.h),
 * for API versions 510 and later (so AND and MIN are the "V2" forms that treat a missing value as
 * absent rather than as empty). A null existing value means the key is absent; a null result
 * means the key is cleared.
 */
final class Mutations {
  static final int VALUE_SIZE_LIMIT = 100_000;

  private Mutations() {}

  static byte[] apply(MutationType type, byte[] existing, byte[] operand) {
    switch (type) {
      case ADD:
        return add(existing, operand);
      case AND:
      case BIT_AND:
        return existing == null ? operand : and(existing, operand);
      case OR:
      case BIT_OR:
        return or(existing, operand);
      case XOR:
      case BIT_XOR:
        return xor(existing, operand);
      case APPEND_IF_FITS:
        return appendIfFits(existing, operand);
      case MAX:
        return max(existing, operand);
      case MIN:
        return existing == null ? operand : min(existing, operand);
      case BYTE_MIN:
        return existing == null ? operand : Bytes.min(existing, operand);
      case BYTE_MAX:
        return existing == null ? operand : Bytes.max(existing, operand);
      case COMPARE_AND_CLEAR:
        return existing != null && Arrays.equals(existing, operand) ? null : existing;
      default:
        throw new IllegalArgumentException("not a value-combining mutation: " + type);
    }
  }

  private static byte[] add(byte[] existing, byte[] operand) {
    if (existing == null || existing.length == 0 || operand.length == 0) {
      return operand;
    }
    byte[] out = new byte[operand.length];
    int carry = 0;
    for (int i = 0; i < operand.length; i++) {
      int a = i < existing.length ? existing[i] & 0xff : 0;
      int sum = a + (operand[i] & 0xff) + carry;
      out[i] = (byte) sum;
      carry = sum >>> 8;
    }
    return out;
  }

  private static byte[] and(byte[] existing, byte[] operand) {
    byte[] out = new byte[operand.length];
    for (int i = 0; i < operand.length && i < existing.length; i++) {
      out[i] = (byte) (existing[i] & operand[i]);
    }
    return out;
  }

  private static byte[] or(byte[] existing, byte[] operand) {
    if (existing == null || existing.length == 0 || operand.length == 0) {
      return operand;
    }
    byte[] out = new byte[operand.length];
    for (int i = 0; i < operand.length; i++) {
      out[i] = (byte) ((i < existing.length ? existing[i] : 0) | operand[i]);
    }
    return out;
  }

  private static byte[] xor(byte[] existing, byte[] operand) {
    if (existing == null || existing.length == 0 || operand.length == 0) {
      return operand;
    }
    byte[] out = new byte[operand.length];
    for (int i = 0; i < operand.length; i++) {
      out[i] = (byte) ((i < existing.length ? existing[i] : 0) ^ operand[i]);
    }
    return out;
  }

  private static byte[] appendIfFits(byte[] existing, byte[] operand) {
    if (existing == null || existing.length == 0) {
      return operand;
    }
    if (operand.length == 0) {
      return existing;
    }
    if (existing.length + operand.length > VALUE_SIZE_LIMIT) {
      return existing;
    }
    byte[] out = Arrays.copyOf(existing, existing.length + operand.length);
    System.arraycopy(operand, 0, out, existing.length, operand.length);
    return out;
  }

  private static byte[] max(byte[] existing, byte[] operand) {
    if (existing == null || existing.length == 0 || operand.length == 0) {
      return operand;
    }
    return compareLittleEndian(existing, operand) > 0 ? resize(existing, operand.length) : operand;
  }

  private static byte[] min(byte[] existing, byte[] operand) {
    if (operand.length == 0) {
      return operand;
    }
    return compareLittleEndian(existing, operand) < 0 ? resize(existing, operand.length) : operand;
  }

  /** Compares as unsigned little-endian integers of the operand's width (existing truncated or zero-extended). */
  private static int compareLittleEndian(byte[] existing, byte[] operand) {
    for (int i = operand.length - 1; i >= 0; i--) {
      int a = i < existing.length ? existing[i] & 0xff : 0;
      int b = operand[i] & 0xff;
      if (a != b) {
        return a < b ? -1 : 1;
      }
    }
    return 0;
  }

  private static byte[] resize(byte[] value, int length) {
    return Arrays.copyOf(value, length);
  }
}
