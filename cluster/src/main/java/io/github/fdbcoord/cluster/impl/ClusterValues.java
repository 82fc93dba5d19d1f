package io.github.fdbcoord.cluster.impl;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.ClusterSerializable;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.ObjectStreamClass;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;

/**
 * Bytes of the keys and values Vert.x puts in cluster-wide maps: the types Vert.x's shared data
 * accepts (strings, boxed primitives, byte arrays, {@link Buffer}, JSON, {@link ClusterSerializable},
 * {@link Serializable}). A tag byte names the type, so a value reads back as the type it was written.
 * Equal keys encode to equal bytes, which is what the map's key order and equality rely on.
 */
final class ClusterValues {
  private static final byte STRING = 1;
  private static final byte INTEGER = 2;
  private static final byte LONG = 3;
  private static final byte SHORT = 4;
  private static final byte BYTE = 5;
  private static final byte DOUBLE = 6;
  private static final byte FLOAT = 7;
  private static final byte BOOLEAN = 8;
  private static final byte CHARACTER = 9;
  private static final byte BYTES = 10;
  private static final byte BUFFER = 11;
  private static final byte JSON_OBJECT = 12;
  private static final byte JSON_ARRAY = 13;
  private static final byte CLUSTER_SERIALIZABLE = 14;
  private static final byte SERIALIZABLE = 15;

  private ClusterValues() {}

  static byte[] encode(Object o) {
    if (o == null) {
      throw new IllegalArgumentException("null keys and values are not allowed in a cluster-wide map");
    }
    Buffer b = Buffer.buffer();
    if (o instanceof String) {
      b.appendByte(STRING).appendString((String) o, "UTF-8");
    } else if (o instanceof Integer) {
      b.appendByte(INTEGER).appendInt((Integer) o);
    } else if (o instanceof Long) {
      b.appendByte(LONG).appendLong((Long) o);
    } else if (o instanceof Short) {
      b.appendByte(SHORT).appendShort((Short) o);
    } else if (o instanceof Byte) {
      b.appendByte(BYTE).appendByte((Byte) o);
    } else if (o instanceof Double) {
      b.appendByte(DOUBLE).appendDouble((Double) o);
    } else if (o instanceof Float) {
      b.appendByte(FLOAT).appendFloat((Float) o);
    } else if (o instanceof Boolean) {
      b.appendByte(BOOLEAN).appendByte((byte) ((Boolean) o ? 1 : 0));
    } else if (o instanceof Character) {
      b.appendByte(CHARACTER).appendShort((short) ((Character) o).charValue());
    } else if (o instanceof byte[]) {
      b.appendByte(BYTES).appendBytes((byte[]) o);
    } else if (o instanceof Buffer) {
      b.appendByte(BUFFER).appendBuffer((Buffer) o);
    } else if (o instanceof JsonObject) {
      b.appendByte(JSON_OBJECT).appendString(((JsonObject) o).encode(), "UTF-8");
    } else if (o instanceof JsonArray) {
      b.appendByte(JSON_ARRAY).appendString(((JsonArray) o).encode(), "UTF-8");
    } else if (o instanceof ClusterSerializable) {
      byte[] name = o.getClass().getName().getBytes(StandardCharsets.UTF_8);
      b.appendByte(CLUSTER_SERIALIZABLE).appendInt(name.length).appendBytes(name);
      ((ClusterSerializable) o).writeToBuffer(b);
    } else if (o instanceof Serializable) {
      b.appendByte(SERIALIZABLE).appendBytes(javaSerialize(o));
    } else {
      throw new IllegalArgumentException("cannot store a " + o.getClass().getName()
          + " in a cluster-wide map: use a String, a boxed primitive, byte[], Buffer, JsonObject, JsonArray,"
          + " a ClusterSerializable or a Serializable");
    }
    return b.getBytes();
  }

  @SuppressWarnings("unchecked")
  static <T> T decode(byte[] bytes) {
    if (bytes == null) {
      return null;
    }
    Buffer b = Buffer.buffer(bytes);
    int n = bytes.length;
    switch (bytes[0]) {
      case STRING: return (T) b.getString(1, n, "UTF-8");
      case INTEGER: return (T) Integer.valueOf(b.getInt(1));
      case LONG: return (T) Long.valueOf(b.getLong(1));
      case SHORT: return (T) Short.valueOf(b.getShort(1));
      case BYTE: return (T) Byte.valueOf(b.getByte(1));
      case DOUBLE: return (T) Double.valueOf(b.getDouble(1));
      case FLOAT: return (T) Float.valueOf(b.getFloat(1));
      case BOOLEAN: return (T) Boolean.valueOf(b.getByte(1) != 0);
      case CHARACTER: return (T) Character.valueOf((char) b.getShort(1));
      case BYTES: return (T) b.getBytes(1, n);
      case BUFFER: return (T) b.getBuffer(1, n);
      case JSON_OBJECT: return (T) new JsonObject(b.getString(1, n, "UTF-8"));
      case JSON_ARRAY: return (T) new JsonArray(b.getString(1, n, "UTF-8"));
      case CLUSTER_SERIALIZABLE: {
        int len = b.getInt(1);
        String name = b.getString(5, 5 + len, "UTF-8");
        try {
          ClusterSerializable cs = (ClusterSerializable) loadClass(name).getDeclaredConstructor().newInstance();
          cs.readFromBuffer(5 + len, b);
          return (T) cs;
        } catch (ReflectiveOperationException e) {
          throw new IllegalStateException("cannot read a " + name + " back: a ClusterSerializable needs a public no-arg constructor", e);
        }
      }
      case SERIALIZABLE: return (T) javaDeserialize(b.getBytes(1, n));
      default:
        throw new IllegalStateException("unknown value tag " + bytes[0] + ": not written by this cluster manager");
    }
  }

  private static Class<?> loadClass(String name) throws ClassNotFoundException {
    ClassLoader tccl = Thread.currentThread().getContextClassLoader();
    try {
      return Class.forName(name, false, tccl != null ? tccl : ClusterValues.class.getClassLoader());
    } catch (ClassNotFoundException e) {
      return Class.forName(name, false, ClusterValues.class.getClassLoader());
    }
  }

  private static byte[] javaSerialize(Object o) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (ObjectOutputStream oos = new ObjectOutputStream(out)) {
      oos.writeObject(o);
    } catch (IOException e) {
      throw new IllegalArgumentException("cannot serialize a " + o.getClass().getName() + ": " + e.getMessage(), e);
    }
    return out.toByteArray();
  }

  private static Object javaDeserialize(byte[] bytes) {
    try (ObjectInputStream in = new ClassLoaderObjectInputStream(new ByteArrayInputStream(bytes))) {
      return in.readObject();
    } catch (IOException | ClassNotFoundException e) {
      throw new IllegalStateException("cannot deserialize a stored value: " + e.getMessage(), e);
    }
  }

  private static final class ClassLoaderObjectInputStream extends ObjectInputStream {
    ClassLoaderObjectInputStream(InputStream in) throws IOException {
      super(in);
    }

    @Override
    protected Class<?> resolveClass(ObjectStreamClass desc) throws IOException, ClassNotFoundException {
      try {
        return loadClass(desc.getName());
      } catch (ClassNotFoundException e) {
        return super.resolveClass(desc);
      }
    }
  }
}
