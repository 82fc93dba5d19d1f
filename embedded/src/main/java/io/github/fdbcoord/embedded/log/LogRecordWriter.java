package io.github.fdbcoord.embedded.log;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;

/**
 * The payload of one commit in the commit log: its resolved mutations, in the order they were
 * applied. Each is a type byte then length-prefixed byte strings: SET key value, CLEAR key,
 * CLEAR_RANGE begin end. Atomic operations and versionstamps are already resolved to values.
 */
public final class LogRecordWriter {
  private static final byte SET = 1;
  private static final byte CLEAR = 2;
  private static final byte CLEAR_RANGE = 3;

  public interface Visitor {
    public void set(byte[] key, byte[] value);

    public void clear(byte[] key);

    public void clearRange(byte[] begin, byte[] end);
  }

  private final ByteArrayOutputStream out = new ByteArrayOutputStream(64);

  public void set(byte[] key, byte[] value) {
    out.write(SET);
    bytes(key);
    bytes(value);
  }

  public void clear(byte[] key) {
    out.write(CLEAR);
    bytes(key);
  }

  public void clearRange(byte[] begin, byte[] end) {
    out.write(CLEAR_RANGE);
    bytes(begin);
    bytes(end);
  }

  public byte[] toByteArray() {
    return out.toByteArray();
  }

  private void bytes(byte[] b) {
    int n = b.length;
    out.write(n >>> 24);
    out.write(n >>> 16);
    out.write(n >>> 8);
    out.write(n);
    out.write(b, 0, n);
  }

  public static void replay(byte[] payload, Visitor visitor) {
    ByteBuffer in = ByteBuffer.wrap(payload);
    while (in.hasRemaining()) {
      byte type = in.get();
      switch (type) {
        case SET:
          visitor.set(read(in), read(in));
          break;
        case CLEAR:
          visitor.clear(read(in));
          break;
        case CLEAR_RANGE:
          visitor.clearRange(read(in), read(in));
          break;
        default:
          throw new IllegalStateException("corrupt commit record: unknown mutation type " + type);
      }
    }
  }

  private static byte[] read(ByteBuffer in) {
    byte[] b = new byte[in.getInt()];
    in.get(b);
    return b;
  }
}
