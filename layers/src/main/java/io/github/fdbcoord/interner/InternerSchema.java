package io.github.fdbcoord.interner;

import io.github.fdbcoord.api.InternedString;
import com.apple.foundationdb.KeySelector;
import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.Range;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.async.AsyncUtil;
import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.Tuple;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.AbstractMap.SimpleImmutableEntry;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.stream.Collectors;

/**
 * Every key and value of one interner namespace, and one function per query on them.
 *
 * <p>Layout inside the namespace's directory subspace {@code ns}:
 * <pre>
 *   ns + (0)                 -> (formatVersion, sequenceBits)     namespace metadata
 *   ns + (1, string)         -> id, 8 bytes big-endian            forward record
 *   ns + (2) + id            -> string, UTF-8                     reverse record; id raw 8 bytes big-endian
 *   ns + (3, sequenceId)     -> next counter, 8 bytes little-endian  sequence counter
 * </pre>
 * Forward, reverse and counter records live in disjoint sub-subspaces, so a counter can never be
 * mistaken for a reverse record (a defect of the reference implementation). Reverse keys hold the id
 * as fixed-width big-endian bytes so they sort in unsigned id order. Counters are little-endian, the
 * byte order of FoundationDB's atomic ADD, although this layer only reads and writes them.
 *
 * <p>An id is {@code (sequenceId << counterBits) | counter} with {@code counterBits = 64 - sequenceBits}:
 * the counter of a sequence stays below {@code 2^counterBits}, so the two parts never share a bit.
 * Sequence 0 is reserved: no valid id is below {@code 2^counterBits}, and in particular 0 is never an id.
 */
final class InternerSchema {
  /** Directory layer tag of interner namespaces, so another layer's directory is not mistaken for one. */
  static final byte[] LAYER = "fdbcoord.interner".getBytes(StandardCharsets.UTF_8);
  static final long FORMAT_VERSION = 1;
  /** FoundationDB's key size limit in bytes. */
  static final int KEY_SIZE_LIMIT = 10_000;

  private static final long META_TAG = 0;
  private static final long FORWARD_TAG = 1;
  private static final long REVERSE_TAG = 2;
  private static final long SEQUENCE_TAG = 3;

  private static final byte TUPLE_STRING_CODE = 0x02;

  private final Subspace namespace;
  private final Subspace forward;
  private final Subspace reverse;
  private final Subspace sequences;
  private final byte[] forwardPrefix;
  private final byte[] reversePrefix;
  private final byte[] metaKey;
  private final int sequenceBits;
  private final int counterBits;

  InternerSchema(Subspace namespace, int sequenceBits) {
    if (sequenceBits < 1 || sequenceBits > 63) {
      throw new IllegalArgumentException("sequenceBits must be between 1 and 63, got " + sequenceBits);
    }
    this.namespace = namespace;
    this.forward = namespace.get(FORWARD_TAG);
    this.reverse = namespace.get(REVERSE_TAG);
    this.sequences = namespace.get(SEQUENCE_TAG);
    this.forwardPrefix = forward.getKey();
    this.reversePrefix = reverse.getKey();
    this.metaKey = metaKey(namespace);
    this.sequenceBits = sequenceBits;
    this.counterBits = 64 - sequenceBits;
  }

  Subspace namespace() {
    return namespace;
  }

  int sequenceBits() {
    return sequenceBits;
  }

  int counterBits() {
    return counterBits;
  }

  // ---- metadata -------------------------------------------------------------------------------

  static byte[] metaKey(Subspace namespace) {
    return namespace.pack(Tuple.from(META_TAG));
  }

  /** {@link #metaKey(Subspace)} of this namespace, packed once. */
  byte[] metaKey() {
    return metaKey;
  }

  static byte[] packMeta(int sequenceBits) {
    return Tuple.from(FORMAT_VERSION, (long) sequenceBits).pack();
  }

  /** The sequence bits recorded in a metadata value. */
  static int unpackMeta(byte[] value) {
    Tuple t = Tuple.fromBytes(value);
    long version = t.getLong(0);
    if (version != FORMAT_VERSION) {
      throw new IllegalStateException("interner namespace has format version " + version
          + ", this code reads version " + FORMAT_VERSION);
    }
    return (int) t.getLong(1);
  }

  /** The namespace's sequence bits, or null when the namespace has no metadata (it was removed). */
  static CompletableFuture<Integer> readMeta(ReadTransaction tr, Subspace namespace) {
    return tr.get(metaKey(namespace)).thenApply(v -> v == null ? null : unpackMeta(v));
  }

  static void writeMeta(Transaction tr, Subspace namespace, int sequenceBits) {
    tr.set(metaKey(namespace), packMeta(sequenceBits));
  }

  // ---- ids ------------------------------------------------------------------------------------

  /** Number of counters per sequence, 2^counterBits, as an unsigned long (2^63 is Long.MIN_VALUE). */
  long counterCapacity() {
    return 1L << counterBits;
  }

  /** Highest sequence id, 2^sequenceBits - 1. */
  long maxSequenceId() {
    return -1L >>> (64 - sequenceBits);
  }

  long packId(long sequenceId, long counter) {
    if (sequenceId < 1 || Long.compareUnsigned(sequenceId, maxSequenceId()) > 0) {
      throw new IllegalArgumentException("sequence id " + Long.toUnsignedString(sequenceId)
          + " is outside 1.." + Long.toUnsignedString(maxSequenceId()));
    }
    if (Long.compareUnsigned(counter, counterCapacity()) >= 0) {
      throw new IllegalArgumentException("counter " + Long.toUnsignedString(counter) + " does not fit in "
          + counterBits + " bits");
    }
    return (sequenceId << counterBits) | counter;
  }

  long sequenceOf(long id) {
    return id >>> counterBits;
  }

  long counterOf(long id) {
    return id & (counterCapacity() - 1);
  }

  /** Whether {@code id} can have been assigned: its sequence is not the reserved sequence 0. */
  boolean isValidId(long id) {
    return sequenceOf(id) != 0;
  }

  // ---- forward records: string -> id ----------------------------------------------------------

  /**
   * {@code forward.pack(Tuple.from(s))}, written straight into one array: the tuple layer builds a
   * tuple, a list and an encoder per call, a cost paid for every new string.
   */
  byte[] packForwardKey(String s) {
    long encoded = tupleStringLength(s);
    if (encoded < 0 || encoded > Integer.MAX_VALUE - forwardPrefix.length) {
      return forward.pack(Tuple.from(s)); // fails as the tuple layer fails on such strings
    }
    byte[] key = Arrays.copyOf(forwardPrefix, forwardPrefix.length + (int) encoded);
    int p = forwardPrefix.length;
    key[p++] = TUPLE_STRING_CODE;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x80) {
        key[p++] = (byte) c;
        if (c == 0) {
          key[p++] = (byte) 0xff; // the tuple encoding's escape of a NUL inside a string
        }
      } else if (c < 0x800) {
        key[p++] = (byte) (0xc0 | (c >> 6));
        key[p++] = (byte) (0x80 | (c & 0x3f));
      } else if (Character.isHighSurrogate(c)) {
        int cp = Character.toCodePoint(c, s.charAt(++i));
        key[p++] = (byte) (0xf0 | (cp >> 18));
        key[p++] = (byte) (0x80 | ((cp >> 12) & 0x3f));
        key[p++] = (byte) (0x80 | ((cp >> 6) & 0x3f));
        key[p++] = (byte) (0x80 | (cp & 0x3f));
      } else {
        key[p++] = (byte) (0xe0 | (c >> 12));
        key[p++] = (byte) (0x80 | ((c >> 6) & 0x3f));
        key[p++] = (byte) (0x80 | (c & 0x3f));
      }
    }
    // The last byte, the string's terminator, is the 0 the array was created with.
    return key;
  }

  String unpackForwardKey(byte[] key) {
    return forward.unpack(key).getString(0);
  }

  /**
   * Length of {@link #packForwardKey} for {@code s} without building it: the prefix, the tuple string
   * code and terminator, the UTF-8 bytes, and one escape byte per NUL character. -1 when {@code s} is
   * not well-formed UTF-16 (an unpaired surrogate), which UTF-8 cannot encode faithfully.
   */
  int forwardKeyLength(String s) {
    long encoded = tupleStringLength(s);
    return encoded < 0 ? -1 : (int) Math.min(Integer.MAX_VALUE, forwardPrefix.length + encoded);
  }

  /** Most UTF-8 bytes a string without NUL characters may have to fit in a forward key. */
  int maxStringBytes() {
    return KEY_SIZE_LIMIT - forwardPrefix.length - 2;
  }

  static long tupleStringLength(String s) {
    long n = 2; // type code and terminator
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == 0) {
        n += 2;
      } else if (c < 0x80) {
        n += 1;
      } else if (c < 0x800) {
        n += 2;
      } else if (Character.isHighSurrogate(c)) {
        if (i + 1 >= s.length() || !Character.isLowSurrogate(s.charAt(i + 1))) {
          return -1;
        }
        n += 4;
        i++;
      } else if (Character.isLowSurrogate(c)) {
        return -1;
      } else {
        n += 3;
      }
    }
    return n;
  }

  static byte[] packIdValue(long id) {
    return ByteBuffer.allocate(8).order(ByteOrder.BIG_ENDIAN).putLong(id).array();
  }

  static long unpackIdValue(byte[] value) {
    if (value.length != 8) {
      throw new IllegalStateException("id value must be 8 bytes, got " + value.length);
    }
    return ByteBuffer.wrap(value).order(ByteOrder.BIG_ENDIAN).getLong();
  }

  /** The id of {@code s}, or null when it was never interned. */
  CompletableFuture<Long> readForward(ReadTransaction tr, String s) {
    return readForward(tr, packForwardKey(s));
  }

  /** {@link #readForward(ReadTransaction, String)} with the key already packed. */
  CompletableFuture<Long> readForward(ReadTransaction tr, byte[] forwardKey) {
    return tr.get(forwardKey).thenApply(v -> v == null ? null : unpackIdValue(v));
  }

  /** Takes the packed key: callers have it from reading the same record first. */
  void writeForward(Transaction tr, byte[] forwardKey, long id) {
    tr.set(forwardKey, packIdValue(id));
  }

  CompletableFuture<List<Map.Entry<String, Long>>> readAllForward(ReadTransaction tr, Executor executor) {
    return AsyncUtil.collect(tr.getRange(forward.range()), executor)
        .thenApply(kvs -> kvs.stream()
            .map(kv -> entry(unpackForwardKey(kv.getKey()), unpackIdValue(kv.getValue())))
            .collect(Collectors.toList()));
  }

  // ---- reverse records: id -> string ----------------------------------------------------------

  byte[] packReverseKey(long id) {
    byte[] key = Arrays.copyOf(reversePrefix, reversePrefix.length + 8);
    ByteBuffer.wrap(key, reversePrefix.length, 8).order(ByteOrder.BIG_ENDIAN).putLong(id);
    return key;
  }

  long unpackReverseKey(byte[] key) {
    if (key.length != reversePrefix.length + 8 || !reverse.contains(key)) {
      throw new IllegalArgumentException("not a reverse key of this namespace: " + Arrays.toString(key));
    }
    return ByteBuffer.wrap(key, reversePrefix.length, 8).order(ByteOrder.BIG_ENDIAN).getLong();
  }

  /** Every reverse record: all keys starting with the reverse prefix. */
  Range reverseRange() {
    return Range.startsWith(reversePrefix);
  }

  static byte[] packStringValue(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static String unpackStringValue(byte[] value) {
    return new String(value, StandardCharsets.UTF_8);
  }

  /** The string with id {@code id}, or null when no string has it. */
  CompletableFuture<String> readReverse(ReadTransaction tr, long id) {
    return tr.get(packReverseKey(id)).thenApply(v -> v == null ? null : unpackStringValue(v));
  }

  void writeReverse(Transaction tr, long id, String s) {
    tr.set(packReverseKey(id), packStringValue(s));
  }

  /**
   * At most {@code limit} reverse records with ids above {@code afterId} (unsigned; 0 = from the
   * first), in unsigned id order.
   */
  CompletableFuture<List<InternedString>> readReversePage(ReadTransaction tr, long afterId, int limit,
      Executor executor) {
    KeySelector begin = KeySelector.firstGreaterThan(packReverseKey(afterId));
    KeySelector end = KeySelector.firstGreaterOrEqual(reverseRange().end);
    return AsyncUtil.collect(tr.getRange(begin, end, limit), executor)
        .thenApply(kvs -> kvs.stream()
            .map(kv -> new InternedString(unpackReverseKey(kv.getKey()), unpackStringValue(kv.getValue())))
            .collect(Collectors.toList()));
  }

  CompletableFuture<List<Map.Entry<Long, String>>> readAllReverse(ReadTransaction tr, Executor executor) {
    // Not reverse.range(): that ends at prefix + 0xff, which suits tuple-encoded suffixes only; raw ids
    // of the top sequences start with byte 0xff and would be missed.
    return AsyncUtil.collect(tr.getRange(reverseRange()), executor)
        .thenApply(kvs -> kvs.stream()
            .map(kv -> entry(unpackReverseKey(kv.getKey()), unpackStringValue(kv.getValue())))
            .collect(Collectors.toList()));
  }

  // ---- sequence counters ----------------------------------------------------------------------

  byte[] packSequenceKey(long sequenceId) {
    return sequences.pack(Tuple.from(sequenceId));
  }

  long unpackSequenceKey(byte[] key) {
    return sequences.unpack(key).getLong(0);
  }

  /** A counter value: the next unused counter of the sequence, i.e. how many ids it has handed out. */
  static byte[] packCounter(long next) {
    return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(next).array();
  }

  static long unpackCounter(byte[] value) {
    if (value == null) {
      return 0;
    }
    if (value.length != 8) {
      throw new IllegalStateException("counter value must be 8 bytes, got " + value.length);
    }
    return ByteBuffer.wrap(value).order(ByteOrder.LITTLE_ENDIAN).getLong();
  }

  /**
   * The next unused counter of a sequence (0 for a sequence never used). A plain read: it puts the
   * counter in the read-conflict set, so two transactions taking ids from the same sequence conflict.
   */
  CompletableFuture<Long> readCounter(ReadTransaction tr, long sequenceId) {
    return readCounterValue(tr, sequenceId).thenApply(InternerSchema::unpackCounter);
  }

  /** {@link #readCounter}'s raw value (null for a sequence never used), for {@link #unpackCounter}. */
  CompletableFuture<byte[]> readCounterValue(ReadTransaction tr, long sequenceId) {
    return tr.get(packSequenceKey(sequenceId));
  }

  void writeCounter(Transaction tr, long sequenceId, long next) {
    tr.set(packSequenceKey(sequenceId), packCounter(next));
  }

  CompletableFuture<Map<Long, Long>> readAllCounters(ReadTransaction tr, Executor executor) {
    return AsyncUtil.collect(tr.getRange(sequences.range()), executor)
        .thenApply(kvs -> kvs.stream().collect(Collectors.toMap(
            (KeyValue kv) -> unpackSequenceKey(kv.getKey()), kv -> unpackCounter(kv.getValue()))));
  }

  /** Sequences that handed out ids, and how many ids they handed out in all. */
  record Usage(long sequencesInUse, long idsAssigned) {}

  /**
   * How many ids the namespace's sequences assigned, which is how many strings it holds: each
   * counter is the number of ids its sequence handed out, each id went to exactly one string in the
   * same transaction, and strings are never removed one by one. Reads the counters only (at most
   * {@code 2^sequenceBits - 1} keys), never the strings.
   */
  CompletableFuture<Usage> readUsage(ReadTransaction tr, Executor executor) {
    return AsyncUtil.collect(tr.getRange(sequences.range()), executor).thenApply(kvs -> {
      long inUse = 0;
      long assigned = 0;
      for (KeyValue kv : kvs) {
        long next = unpackCounter(kv.getValue());
        if (next != 0) {
          inUse++;
          assigned += next;
        }
      }
      return new Usage(inUse, assigned);
    });
  }

  private static <K, V> Map.Entry<K, V> entry(K k, V v) {
    return new SimpleImmutableEntry<>(k, v);
  }
}
