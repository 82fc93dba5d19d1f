package io.github.fdbcoord.embedded.engine;

import com.apple.foundationdb.MutationType;

import java.util.ArrayList;
import java.util.List;

/**
 * What a transaction has written to one key, coalesced as FoundationDB's write map does: either a
 * known value (a set, or a clear as null), or atomic operations waiting for the stored value, or
 * a versionstamped value whose bytes exist only at commit.
 */
public final class PendingWrite {
  public enum Kind { KNOWN, DEPENDENT, STAMPED }

  public Kind kind;
  public byte[] value;
  /** For DEPENDENT (and operations stacked on STAMPED): applied in order to the base at commit. */
  List<MutationType> opTypes;
  List<byte[]> operands;
  /** For STAMPED: the SET_VERSIONSTAMPED_VALUE operand, offset suffix included. */
  public byte[] stampOperand;

  public static PendingWrite known(byte[] value) {
    PendingWrite w = new PendingWrite();
    w.kind = Kind.KNOWN;
    w.value = value;
    return w;
  }

  public static PendingWrite stamped(byte[] operand) {
    PendingWrite w = new PendingWrite();
    w.kind = Kind.STAMPED;
    w.stampOperand = operand;
    return w;
  }

  /** Stacks an atomic operation on this write (or on an unknown base when {@code w} is null). */
  public static PendingWrite withOp(PendingWrite w, MutationType type, byte[] operand) {
    if (w != null && w.kind == Kind.KNOWN) {
      return known(Mutations.apply(type, w.value, operand));
    }
    PendingWrite next = new PendingWrite();
    next.kind = w == null ? Kind.DEPENDENT : w.kind;
    next.stampOperand = w == null ? null : w.stampOperand;
    next.opTypes = new ArrayList<>(w == null || w.opTypes == null ? List.of() : w.opTypes);
    next.operands = new ArrayList<>(w == null || w.operands == null ? List.of() : w.operands);
    next.opTypes.add(type);
    next.operands.add(operand);
    return next;
  }

  /** The value after applying the stacked operations to {@code base}. */
  public byte[] applyOps(byte[] base) {
    byte[] v = base;
    if (opTypes != null) {
      for (int i = 0; i < opTypes.size(); i++) {
        v = Mutations.apply(opTypes.get(i), v, operands.get(i));
      }
    }
    return v;
  }
}
