package io.github.fdbcoord.allocator;

import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.MutationType;
import com.apple.foundationdb.Range;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.Tuple;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * Every key and value the allocators store, and every query they make, in one place.
 *
 * <p>Layout under one allocator's subspace {@code S} (the windowed part is the layout of
 * fdb-java's DirectoryLayer allocator, so its data stays readable by either):
 * <pre>
 *   S[0][start]      window counter: 8-byte little-endian count of candidates claimed in the
 *                    window that begins at {@code start} (only the newest window survives)
 *   S[1][candidate]  reservation of {@code candidate} (empty value)
 *   S["counter"]     naive allocator: 8-byte little-endian last value handed out
 * </pre>
 */
final class AllocatorSchema {
  private static final long COUNTERS = 0;
  private static final long RESERVATIONS = 1;
  private static final String NAIVE_COUNTER = "counter";
  private static final byte[] EMPTY = new byte[0];
  private static final byte[] ONE = packCounterValue(1);

  private final Subspace counters;
  private final Subspace reservations;
  private final byte[] naiveCounterKey;

  AllocatorSchema(Subspace subspace) {
    Objects.requireNonNull(subspace, "subspace");
    this.counters = subspace.get(COUNTERS);
    this.reservations = subspace.get(RESERVATIONS);
    this.naiveCounterKey = subspace.pack(Tuple.from(NAIVE_COUNTER));
  }

  // ---- keys and values -------------------------------------------------------------------

  byte[] packCounterKey(long windowStart) {
    return counters.pack(windowStart);
  }

  long unpackCounterKey(byte[] key) {
    return counters.unpack(key).getLong(0);
  }

  static byte[] packCounterValue(long count) {
    return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(count).array();
  }

  /** The count stored in a counter value; an absent value counts as 0. */
  static long unpackCounterValue(byte[] value) {
    if (value == null) {
      return 0;
    }
    if (value.length != 8) {
      throw new IllegalStateException("allocator counter must be 8 bytes, found " + value.length);
    }
    return ByteBuffer.wrap(value).order(ByteOrder.LITTLE_ENDIAN).getLong();
  }

  byte[] packReservationKey(long candidate) {
    return reservations.pack(candidate);
  }

  long unpackReservationKey(byte[] key) {
    return reservations.unpack(key).getLong(0);
  }

  static byte[] packReservationValue() {
    return EMPTY;
  }

  /** Whether a stored reservation value marks the candidate as taken (any present value does). */
  static boolean unpackReservationValue(byte[] value) {
    return value != null;
  }

  byte[] naiveCounterKey() {
    return naiveCounterKey.clone();
  }

  /**
   * Seed 000's compact prefix for an allocated value: one byte holding the length of the value's
   * minimal big-endian encoding, then that encoding ({@code 0 -> 01 00}, {@code 300 -> 02 01 2c}).
   * The leading length keeps prefixes of different lengths from being prefixes of each other.
   */
  static byte[] packPrefix(long value) {
    if (value < 0) {
      throw new IllegalArgumentException("allocated values are never negative, got " + value);
    }
    int length = Math.max(1, (64 - Long.numberOfLeadingZeros(value) + 7) / 8);
    byte[] out = new byte[length + 1];
    out[0] = (byte) length;
    for (int i = 0; i < length; i++) {
      out[length - i] = (byte) (value >>> (8 * i));
    }
    return out;
  }

  /** The value behind a {@link #packPrefix compact prefix}. */
  static long unpackPrefix(byte[] prefix) {
    Objects.requireNonNull(prefix, "prefix");
    if (prefix.length < 2 || prefix[0] != prefix.length - 1 || prefix[0] > 8) {
      throw new IllegalArgumentException("not a compact allocator prefix: length byte does not match "
          + prefix.length + " bytes");
    }
    long value = 0;
    for (int i = 1; i < prefix.length; i++) {
      value = (value << 8) | (prefix[i] & 0xff);
    }
    if (value < 0) {
      throw new IllegalArgumentException("compact allocator prefix encodes a negative value");
    }
    return value;
  }

  /** Seed 000's window sizes: small windows while values are small, so prefixes stay short. */
  static long windowSize(long windowStart) {
    if (windowStart < 255) {
      return 64;
    }
    if (windowStart < 65535) {
      return 1024;
    }
    return 8192;
  }

  // ---- queries ---------------------------------------------------------------------------

  /** Start of the newest window, 0 when none exists. Pass a snapshot: no read conflict wanted. */
  CompletableFuture<Long> latestWindowStart(ReadTransaction snapshot) {
    return snapshot.getRange(counters.range(), 1, true).asList()
        .thenApply(this::startOf);
  }

  private long startOf(List<KeyValue> newest) {
    return newest.isEmpty() ? 0 : unpackCounterKey(newest.get(0).getKey());
  }

  /** Claims one slot in the window: an atomic add, so concurrent claimers do not conflict. */
  void incrementWindowCount(Transaction tr, long windowStart) {
    tr.mutate(MutationType.ADD, packCounterKey(windowStart), ONE);
  }

  /** The window's claimed count, this transaction's own increment included, without a read conflict. */
  CompletableFuture<Long> windowCount(Transaction tr, long windowStart) {
    return tr.snapshot().get(packCounterKey(windowStart))
        .thenApply(AllocatorSchema::unpackCounterValue);
  }

  /**
   * Drops the counters and reservations of every window before {@code windowStart}. The
   * reservations are cleared without a write conflict: a transaction still working in the old
   * window reads a snapshot that predates this clear, and conflicts only on its own candidate.
   */
  void clearWindowsBefore(Transaction tr, long windowStart) {
    tr.clear(new Range(counters.range().begin, packCounterKey(windowStart)));
    tr.options().setNextWriteNoWriteConflictRange();
    tr.clear(new Range(reservations.range().begin, packReservationKey(windowStart)));
  }

  /** Whether {@code candidate} is taken; a conflicting read, so a concurrent claim of it aborts us. */
  CompletableFuture<Boolean> isReserved(Transaction tr, long candidate) {
    return tr.get(packReservationKey(candidate)).thenApply(AllocatorSchema::unpackReservationValue);
  }

  /** Writes the reservation of {@code candidate} without a write conflict (added later, if we keep it). */
  void reserveWithoutConflict(Transaction tr, long candidate) {
    tr.options().setNextWriteNoWriteConflictRange();
    tr.set(packReservationKey(candidate), packReservationValue());
  }

  /** Makes the reservation of {@code candidate} conflict with every concurrent reader of it. */
  void addReservationConflict(Transaction tr, long candidate) {
    tr.addWriteConflictKey(packReservationKey(candidate));
  }

  /** The naive counter's current value (0 when absent), read with a conflict. */
  CompletableFuture<Long> naiveCounter(Transaction tr) {
    return tr.get(naiveCounterKey).thenApply(AllocatorSchema::unpackCounterValue);
  }

  void setNaiveCounter(Transaction tr, long value) {
    tr.set(naiveCounterKey, packCounterValue(value));
  }
}
