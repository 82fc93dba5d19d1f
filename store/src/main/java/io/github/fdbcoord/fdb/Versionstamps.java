package io.github.fdbcoord.fdb;

import com.apple.foundationdb.tuple.Tuple;
import com.apple.foundationdb.tuple.Versionstamp;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * Packs tuples holding an incomplete {@link Versionstamp} into the operands of
 * {@code SET_VERSIONSTAMPED_KEY} / {@code SET_VERSIONSTAMPED_VALUE}: the packed bytes followed by
 * the 4-byte little-endian offset of the 10-byte placeholder (API version 520 and later).
 *
 * <p>fdb-java's own versionstamp packing in {@code Tuple} does the same but asks the native library for
 * the API version first (design.md, "Pitfall"), so this class computes the offset itself.
 */
public final class Versionstamps {
  private static final int TYPE_CODE_LENGTH = 1;

  private Versionstamps() {}

  /** Operand for SET_VERSIONSTAMPED_KEY: {@code prefix + tuple.pack()} plus the placeholder's offset. */
  public static byte[] packKey(byte[] prefix, Tuple tuple) {
    return pack(prefix, tuple);
  }

  /** Operand for SET_VERSIONSTAMPED_VALUE: {@code tuple.pack()} plus the placeholder's offset. */
  public static byte[] packValue(Tuple tuple) {
    return pack(new byte[0], tuple);
  }

  /**
   * Operand for SET_VERSIONSTAMPED_VALUE whose value is just the 10-byte versionstamp followed by
   * {@code suffix}: the raw form, not a tuple.
   */
  public static byte[] rawValue(byte[] suffix) {
    ByteBuffer b = ByteBuffer.allocate(10 + suffix.length + 4).order(ByteOrder.LITTLE_ENDIAN);
    b.put(new byte[10]).put(suffix).putInt(0);
    return b.array();
  }

  private static byte[] pack(byte[] prefix, Tuple tuple) {
    List<Object> items = tuple.getItems();
    int index = -1;
    for (int i = 0; i < items.size(); i++) {
      Object item = items.get(i);
      if (item instanceof Versionstamp && !((Versionstamp) item).isComplete()) {
        if (index >= 0) {
          throw new IllegalArgumentException("tuple holds more than one incomplete versionstamp: " + tuple);
        }
        index = i;
      } else if (item instanceof Tuple && ((Tuple) item).hasIncompleteVersionstamp()) {
        throw new IllegalArgumentException("an incomplete versionstamp must be a top-level element: " + tuple);
      } else if (item instanceof List && Tuple.fromList((List<?>) item).hasIncompleteVersionstamp()) {
        throw new IllegalArgumentException("an incomplete versionstamp must be a top-level element: " + tuple);
      }
    }
    if (index < 0) {
      throw new IllegalArgumentException("tuple holds no incomplete versionstamp: " + tuple);
    }
    int offset = prefix.length + Tuple.fromList(items.subList(0, index)).pack().length + TYPE_CODE_LENGTH;
    List<Object> placeholder = new ArrayList<>(items);
    Versionstamp incomplete = (Versionstamp) items.get(index);
    placeholder.set(index, Versionstamp.complete(new byte[10], incomplete.getUserVersion()));
    byte[] packed = Tuple.fromList(placeholder).pack();
    ByteBuffer b = ByteBuffer.allocate(prefix.length + packed.length + 4).order(ByteOrder.LITTLE_ENDIAN);
    b.put(prefix).put(packed).putInt(offset);
    return b.array();
  }
}
