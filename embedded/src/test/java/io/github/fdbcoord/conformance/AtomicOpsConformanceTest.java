package io.github.fdbcoord.conformance;

import com.apple.foundationdb.MutationType;
import com.apple.foundationdb.Transaction;
import io.github.fdbcoord.fdb.FdbErrors;
import org.junit.jupiter.api.TestTemplate;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.function.Executable;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static io.github.fdbcoord.conformance.FdbAssertions.assertFdbError;
import static io.github.fdbcoord.conformance.FdbAssertions.await;
import static io.github.fdbcoord.conformance.FdbAssertions.hex;
import static io.github.fdbcoord.conformance.Fixture.bytes;
import static io.github.fdbcoord.conformance.Fixture.filled;
import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every MutationType with FoundationDB's rules for missing values and operand lengths
 * (fdbclient/include/fdbclient/Atomic.h; BIT_AND and MIN are the V2 forms used from API 510 on:
 * a missing value yields the operand). Each case is checked twice: read back inside the mutating
 * transaction (read-your-writes) and after commit.
 */
@ExtendWith(EngineExtension.class)
class AtomicOpsConformanceTest {
  private static final byte[] MISSING = null;
  private static final byte[] EMPTY = new byte[0];

  private record Case(String name, byte[] initial, MutationType op, byte[] operand, byte[] expected) {}

  private static byte[] b(int... values) {
    byte[] out = new byte[values.length];
    for (int i = 0; i < values.length; i++) {
      out[i] = (byte) values[i];
    }
    return out;
  }

  private static Case c(String name, byte[] initial, MutationType op, byte[] operand, byte[] expected) {
    return new Case(name, initial, op, operand, expected);
  }

  private static void check(Fixture f, List<Case> cases) {
    f.db().run(tr -> {
      for (int i = 0; i < cases.size(); i++) {
        if (cases.get(i).initial != null) {
          tr.set(f.key("case" + i), cases.get(i).initial);
        }
      }
      return null;
    });
    Transaction tr = f.tx();
    for (int i = 0; i < cases.size(); i++) {
      Case c = cases.get(i);
      tr.mutate(c.op, f.key("case" + i), c.operand);
    }
    List<Executable> checks = new ArrayList<>();
    for (int i = 0; i < cases.size(); i++) {
      Case c = cases.get(i);
      byte[] got = await(tr.get(f.key("case" + i)));
      checks.add(() -> assertArrayEquals(c.expected, got,
          () -> c.name + " read in the same transaction: expected " + hex(c.expected) + " got " + hex(got)));
    }
    await(tr.commit());
    for (int i = 0; i < cases.size(); i++) {
      Case c = cases.get(i);
      byte[] got = f.read(f.key("case" + i));
      checks.add(() -> assertArrayEquals(c.expected, got,
          () -> c.name + " after commit: expected " + hex(c.expected) + " got " + hex(got)));
    }
    assertAll(checks);
  }

  @TestTemplate
  void add(Fixture f) {
    MutationType op = MutationType.ADD;
    check(f, List.of(
        c("missing value yields the operand", MISSING, op, b(1, 0), b(1, 0)),
        c("little-endian carry", b(0xff, 0), op, b(1, 0), b(0, 1)),
        c("overflow wraps within the operand length", b(0xff), op, b(1), b(0)),
        c("shorter stored value is zero-extended", b(5), op, b(1, 1), b(6, 1)),
        c("carry propagates into the extension", b(0xff), op, b(1, 0), b(0, 1)),
        c("longer stored value is truncated to the operand", b(5, 1, 1), op, b(1), b(6)),
        c("carry out of the operand length is dropped", b(0xff, 0xff), op, b(1), b(0)),
        c("empty stored value yields the operand", EMPTY, op, b(3), b(3)),
        c("empty operand yields an empty value", b(5), op, EMPTY, EMPTY),
        c("eight-byte counter", b(1, 0, 0, 0, 0, 0, 0, 0), op, b(0xff, 0, 0, 0, 0, 0, 0, 0), b(0, 1, 0, 0, 0, 0, 0, 0)),
        c("negative operand subtracts", b(5, 0, 0, 0, 0, 0, 0, 0), op,
            b(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff), b(4, 0, 0, 0, 0, 0, 0, 0))));
  }

  @TestTemplate
  void bitAnd(Fixture f) {
    MutationType op = MutationType.BIT_AND;
    check(f, List.of(
        c("missing value yields the operand", MISSING, op, b(0x0f), b(0x0f)),
        c("and", b(0x3c), op, b(0x0f), b(0x0c)),
        c("longer stored value is truncated", b(0xff, 0xff), op, b(0x0f), b(0x0f)),
        c("shorter stored value is zero-extended", b(0x0f), op, b(0xff, 0xff), b(0x0f, 0x00)),
        c("empty stored value gives zeros", EMPTY, op, b(0xff, 0xff), b(0, 0)),
        c("empty operand yields an empty value", b(0xff), op, EMPTY, EMPTY)));
  }

  @TestTemplate
  void bitOr(Fixture f) {
    MutationType op = MutationType.BIT_OR;
    check(f, List.of(
        c("missing value yields the operand", MISSING, op, b(0x0f), b(0x0f)),
        c("or", b(0x30), op, b(0x03), b(0x33)),
        c("shorter stored value is zero-extended", b(0xf0), op, b(0x0f, 0x01), b(0xff, 0x01)),
        c("longer stored value is truncated", b(0xf0, 0xff), op, b(0x01), b(0xf1)),
        c("empty stored value yields the operand", EMPTY, op, b(0x01), b(0x01)),
        c("empty operand yields an empty value", b(0x01), op, EMPTY, EMPTY)));
  }

  @TestTemplate
  void bitXor(Fixture f) {
    MutationType op = MutationType.BIT_XOR;
    check(f, List.of(
        c("missing value yields the operand", MISSING, op, b(0x0f), b(0x0f)),
        c("xor", b(0xff), op, b(0x0f), b(0xf0)),
        c("shorter stored value is zero-extended", b(0xff), op, b(0x0f, 0x01), b(0xf0, 0x01)),
        c("longer stored value is truncated", b(0xff, 0xff), op, b(0x0f), b(0xf0)),
        c("empty operand yields an empty value", b(0x01), op, EMPTY, EMPTY)));
  }

  @TestTemplate
  void appendIfFits(Fixture f) {
    MutationType op = MutationType.APPEND_IF_FITS;
    byte[] almostFull = filled(99_999, (byte) 'x');
    byte[] twoShort = filled(99_998, (byte) 'y');
    check(f, List.of(
        c("missing value yields the operand", MISSING, op, bytes("ab"), bytes("ab")),
        c("append", bytes("ab"), op, bytes("cd"), bytes("abcd")),
        c("empty operand keeps the value", bytes("ab"), op, EMPTY, bytes("ab")),
        c("empty stored value yields the operand", EMPTY, op, bytes("cd"), bytes("cd")),
        c("result over 100,000 bytes keeps the stored value", almostFull, op, bytes("zz"), almostFull),
        c("result of exactly 100,000 bytes fits", twoShort, op, bytes("zz"), Fixture.concat(twoShort, bytes("zz")))));
  }

  @TestTemplate
  void max(Fixture f) {
    MutationType op = MutationType.MAX;
    check(f, List.of(
        c("missing value yields the operand", MISSING, op, b(5), b(5)),
        c("stored value larger", b(5), op, b(3), b(5)),
        c("operand larger", b(3), op, b(5), b(5)),
        c("little-endian: high byte decides", b(0xff, 0x00), op, b(0x00, 0x01), b(0x00, 0x01)),
        c("shorter stored value is zero-extended (stored wins)", b(5), op, b(3, 0), b(5, 0)),
        c("shorter stored value is zero-extended (operand wins)", b(5), op, b(0, 1), b(0, 1)),
        c("longer stored value: only the operand's length is compared", b(0, 1), op, b(5), b(5)),
        c("longer stored value wins truncated", b(7, 1), op, b(5), b(7)),
        c("empty stored value yields the operand", EMPTY, op, b(5), b(5)),
        c("empty operand yields an empty value", b(5), op, EMPTY, EMPTY)));
  }

  @TestTemplate
  void min(Fixture f) {
    MutationType op = MutationType.MIN;
    check(f, List.of(
        c("missing value yields the operand", MISSING, op, b(5), b(5)),
        c("operand smaller", b(5), op, b(3), b(3)),
        c("stored value smaller", b(3), op, b(5), b(3)),
        c("little-endian: high byte decides", b(0x00, 0x01), op, b(0xff, 0x00), b(0xff, 0x00)),
        c("shorter stored value is zero-extended (stored wins, operand high byte set)", b(5), op, b(3, 1), b(5, 0)),
        c("shorter stored value is zero-extended (stored wins)", b(5), op, b(7, 0), b(5, 0)),
        c("shorter stored value is zero-extended (operand wins)", b(5), op, b(3, 0), b(3, 0)),
        c("longer stored value: only the operand's length is compared", b(0, 1), op, b(5), b(0)),
        c("empty stored value counts as zero", EMPTY, op, b(5), b(0)),
        c("empty operand yields an empty value", b(5), op, EMPTY, EMPTY)));
  }

  @TestTemplate
  void byteMin(Fixture f) {
    MutationType op = MutationType.BYTE_MIN;
    check(f, List.of(
        c("missing value yields the operand", MISSING, op, bytes("abc"), bytes("abc")),
        c("stored smaller", bytes("abc"), op, bytes("abd"), bytes("abc")),
        c("operand smaller", bytes("abd"), op, bytes("abc"), bytes("abc")),
        c("lexicographic, not numeric", bytes("b"), op, bytes("abc"), bytes("abc")),
        c("a prefix is smaller", bytes("abc"), op, bytes("ab"), bytes("ab")),
        c("empty stored value is smallest", EMPTY, op, bytes("a"), EMPTY),
        c("unsigned bytes", b(0x80), op, b(0x7f), b(0x7f))));
  }

  @TestTemplate
  void byteMax(Fixture f) {
    MutationType op = MutationType.BYTE_MAX;
    check(f, List.of(
        c("missing value yields the operand", MISSING, op, bytes("abc"), bytes("abc")),
        c("operand larger", bytes("abc"), op, bytes("abd"), bytes("abd")),
        c("stored larger", bytes("b"), op, bytes("abc"), bytes("b")),
        c("a longer string with the prefix is larger", bytes("ab"), op, bytes("abc"), bytes("abc")),
        c("empty operand against missing", MISSING, op, EMPTY, EMPTY),
        c("unsigned bytes", b(0x7f), op, b(0x80), b(0x80))));
  }

  @TestTemplate
  void compareAndClear(Fixture f) {
    MutationType op = MutationType.COMPARE_AND_CLEAR;
    check(f, List.of(
        c("equal value is cleared", bytes("v"), op, bytes("v"), MISSING),
        c("different value is kept", bytes("v"), op, bytes("w"), bytes("v")),
        c("missing stays missing", MISSING, op, bytes("v"), MISSING),
        c("empty value equal to empty operand is cleared", EMPTY, op, EMPTY, MISSING),
        c("prefix is not equal", bytes("vv"), op, bytes("v"), bytes("vv"))));
  }

  @TestTemplate
  void deprecatedAliasesAreTheBitOperations(Fixture f) {
    check(f, List.of(
        c("AND is BIT_AND (missing yields operand)", MISSING, MutationType.AND, b(0x0f), b(0x0f)),
        c("OR is BIT_OR", b(0x30), MutationType.OR, b(0x03), b(0x33)),
        c("XOR is BIT_XOR", b(0xff), MutationType.XOR, b(0x0f), b(0xf0))));
  }

  @TestTemplate
  void atomicOperationOnOversizedKeyFailsAtCommit(Fixture f) {
    Transaction tr = f.tx();
    tr.mutate(MutationType.ADD, f.key(filled(10_001, (byte) 'k')), b(1));
    assertFdbError(FdbErrors.KEY_TOO_LARGE, tr.commit());
  }

  @TestTemplate
  void atomicOperationWithOversizedOperandFailsAtCommit(Fixture f) {
    Transaction tr = f.tx();
    tr.mutate(MutationType.APPEND_IF_FITS, f.key("k"), filled(100_001, (byte) 'v'));
    assertFdbError(FdbErrors.VALUE_TOO_LARGE, tr.commit());
  }

  @TestTemplate
  void atomicOperationInSystemKeysFailsAtCommit(Fixture f) {
    Transaction tr = f.tx();
    tr.mutate(MutationType.ADD, Fixture.concat(new byte[] {(byte) 0xff}, f.key("k")), b(1));
    assertFdbError(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE, tr.commit());
  }

  @TestTemplate
  void concurrentAddsNeverConflictAndAllCount(Fixture f) throws Exception {
    int clients = 16;
    int each = 20;
    List<Thread> threads = new ArrayList<>();
    List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
    for (int t = 0; t < clients; t++) {
      Thread th = new Thread(() -> {
        try {
          for (int i = 0; i < each; i++) {
            try (Transaction tr = f.db().createTransaction()) {
              tr.mutate(MutationType.ADD, f.key("counter"), b(1, 0, 0, 0, 0, 0, 0, 0));
              await(tr.commit());
            }
          }
        } catch (Throwable e) {
          failures.add(e);
        }
      });
      threads.add(th);
      th.start();
    }
    for (Thread th : threads) {
      th.join();
    }
    assertTrue(failures.isEmpty(), () -> "blind atomic adds must never fail: " + failures);
    byte[] v = f.read(f.key("counter"));
    assertEquals(clients * each, java.nio.ByteBuffer.wrap(v).order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong());
  }

  @SuppressWarnings("unused")
  private static String show(byte[] b) {
    return Arrays.toString(b);
  }
}
