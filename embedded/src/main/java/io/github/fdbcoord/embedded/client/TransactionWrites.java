package io.github.fdbcoord.embedded.client;

import io.github.fdbcoord.embedded.engine.Limits;
import io.github.fdbcoord.embedded.engine.PendingWrite;
import io.github.fdbcoord.embedded.engine.StampedOperands;
import io.github.fdbcoord.embedded.bytes.Bytes;

import com.apple.foundationdb.MutationType;
import io.github.fdbcoord.fdb.FdbErrors;

import java.util.Arrays;

/**
 * A transaction's writes: set, clear, clear range and atomic operations, checked as FoundationDB checks
 * them with their errors deferred to the next read or the commit, recorded in the {@link WriteMap} with
 * their write-conflict ranges, firing the transaction's own watches they change. Runs under the
 * transaction's monitor.
 */
final class TransactionWrites {
  private static final int DROP = -1;
  private static final int WITH_CONFLICT = 1;

  private final EmbeddedTransaction tx;
  private final TransactionSettings settings;
  private final WriteMap writes;
  private final ConflictRanges conflicts;
  private final OwnWatches watches;
  /** Bytes of the writes: with the conflict ranges' bytes, the transaction's approximate size. */
  private long bytes;

  TransactionWrites(EmbeddedTransaction tx) {
    this.tx = tx;
    this.settings = tx.settings;
    this.writes = tx.writes;
    this.conflicts = tx.conflicts;
    this.watches = tx.watches;
  }

  long bytes() {
    return bytes;
  }

  /** Forgets every write (the transaction was reset for a retry). */
  void reset() {
    writes.reset();
    bytes = 0;
  }

  /**
   * FoundationDB's checks before a point write, errors deferred: DROP when the write must not
   * happen, otherwise whether it adds a write-conflict range (the one-shot
   * NEXT_WRITE_NO_WRITE_CONFLICT_RANGE is consumed either way). Caller holds the monitor.
   */
  private int admitPointWrite(byte[] key, byte[] operand, boolean longKeyIsError) {
    tx.ensureOpen();
    if (!tx.writable()) {
      return DROP;
    }
    boolean conflict = settings.consumeWriteConflict();
    if (Bytes.compare(key, settings.maxWriteKey()) >= 0) {
      tx.defer(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE);
      return DROP;
    }
    if (key.length > Limits.maxKeySize(key)) {
      if (longKeyIsError) {
        tx.defer(FdbErrors.KEY_TOO_LARGE);
      }
      return DROP;
    }
    if (operand != null && operand.length > Limits.VALUE_SIZE_LIMIT) {
      tx.defer(FdbErrors.VALUE_TOO_LARGE);
      return DROP;
    }
    return conflict ? WITH_CONFLICT : 0;
  }

  void set(byte[] key, byte[] value) {
    if (key == null || value == null) {
      throw new IllegalArgumentException("Keys/Values must be non-null");
    }
    int admitted = admitPointWrite(key, value, true);
    if (admitted == DROP) {
      return;
    }
    bytes += key.length + value.length;
    // The caller keeps its arrays: the transaction holds copies, as the native client does.
    putKnown(key.clone(), value.clone(), admitted == WITH_CONFLICT);
  }

  /** Records a set (or, with a null value, a clear) of one key whose value is known now. */
  private void putKnown(byte[] key, byte[] value, boolean conflict) {
    writes.putKnown(key, value);
    if (conflict) {
      conflicts.addWrite(key, Bytes.keyAfter(key));
    }
    watches.written(key, null, value, true);
  }

  void clear(byte[] key) {
    if (key == null) {
      throw new IllegalArgumentException("Key cannot be null");
    }
    // No stored key is longer than the limit, so clearing one is a no-op rather than an error.
    int admitted = admitPointWrite(key, null, false);
    if (admitted == DROP) {
      return;
    }
    bytes += key.length;
    putKnown(key.clone(), null, admitted == WITH_CONFLICT);
  }

  void clear(byte[] begin, byte[] end) {
    if (begin == null || end == null) {
      throw new IllegalArgumentException("Keys cannot be null");
    }
    tx.ensureOpen();
    // The C client checks the order of the bounds before the transaction sees the clear, so an
    // inverted range is deferred whatever the transaction's state (2005 then wins over 1025 and 2017).
    if (Bytes.compare(begin, end) > 0) {
      tx.defer(FdbErrors.INVERTED_RANGE);
      return;
    }
    if (!tx.writable()) {
      return;
    }
    boolean conflict = settings.consumeWriteConflict();
    byte[] max = settings.maxWriteKey();
    if (Bytes.compare(begin, max) > 0 || Bytes.compare(end, max) > 0) {
      tx.defer(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE);
      return;
    }
    // No stored key is longer than the key limit, so longer bounds can be shortened.
    begin = begin.length > Limits.maxKeySize(begin) ? Arrays.copyOf(begin, Limits.maxKeySize(begin) + 1) : begin;
    end = end.length > Limits.maxKeySize(end) ? Arrays.copyOf(end, Limits.maxKeySize(end) + 1) : end;
    if (Bytes.compare(begin, end) >= 0) {
      return;
    }
    bytes += begin.length + end.length;
    begin = begin.clone();
    end = end.clone();
    writes.clearRange(begin, end);
    if (conflict) {
      conflicts.addWrite(begin, end);
    }
    watches.written(begin, end, null, true);
  }

  void mutate(MutationType type, byte[] key, byte[] param) {
    if (type == null || key == null || param == null) {
      throw new IllegalArgumentException("Mutation type, key and parameter must be non-null");
    }
    if (type == MutationType.SET_VERSIONSTAMPED_KEY) {
      // Its key exists only at commit: the checks apply to the key with the stamp filled in.
      tx.ensureOpen();
      if (tx.writable()) {
        mutateStampedKey(key, param, settings.consumeWriteConflict());
      }
      return;
    }
    int admitted = admitPointWrite(key, param, true);
    if (admitted == DROP) {
      return;
    }
    key = key.clone();
    param = param.clone();
    PendingWrite next = writes.mutate(key, type, param);
    if (next == null) {
      tx.defer(FdbErrors.CLIENT_INVALID_OPERATION);
      return;
    }
    bytes += key.length + param.length;
    if (admitted == WITH_CONFLICT) {
      conflicts.addWrite(key, Bytes.keyAfter(key));
    }
    watches.written(key, null, next.value, next.kind == PendingWrite.Kind.KNOWN);
  }

  private void mutateStampedKey(byte[] key, byte[] value, boolean conflict) {
    if (StampedOperands.stampOffset(key) < 0) {
      tx.defer(FdbErrors.CLIENT_INVALID_OPERATION);
      return;
    }
    // FoundationDB's range for the key to be: the stamp from just past the read version (when one
    // is known) to all 0xff, and the key after that.
    byte[] maxWrite = settings.maxWriteKey();
    byte[] low = StampedOperands.fillStamp(key, StampedOperands.versionstamp(tx.hasReadVersion() ? tx.readVersion() + 1 : 0));
    byte[] highStamp = new byte[10];
    Arrays.fill(highStamp, (byte) 0xff);
    byte[] high = Bytes.min(Bytes.keyAfter(StampedOperands.fillStamp(key, highStamp)), maxWrite);
    if (Bytes.compare(low, maxWrite) >= 0) {
      tx.defer(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE);
      return;
    }
    if (low.length > Limits.maxKeySize(low)) {
      tx.defer(FdbErrors.KEY_TOO_LARGE);
      return;
    }
    if (value.length > Limits.VALUE_SIZE_LIMIT) {
      tx.defer(FdbErrors.VALUE_TOO_LARGE);
      return;
    }
    writes.addStampedKey(key.clone(), value.clone(), low, high);
    bytes += key.length + value.length;
    if (conflict) {
      conflicts.addWrite(low, high);
    }
  }
}
