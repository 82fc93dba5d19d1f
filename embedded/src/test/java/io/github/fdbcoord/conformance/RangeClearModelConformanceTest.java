package io.github.fdbcoord.conformance;

import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.MutationType;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.Transaction;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestTemplate;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;
import java.util.TreeMap;

import static io.github.fdbcoord.conformance.FdbAssertions.await;
import static io.github.fdbcoord.conformance.FdbAssertions.hex;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Read-your-writes of range clears that overlap, nest or touch each other, in both orders, mixed with
 * sets and atomic operations, checked against a model: a sorted map to which every write is applied in
 * order. After each write the transaction's own reads (get, range reads forwards and backwards, with and
 * without limits, snapshot and not) must match the model, and after commit the database must.
 */
@ExtendWith(EngineExtension.class)
class RangeClearModelConformanceTest {
  /** Key names are single letters; values are 8-byte little-endian numbers, so every atomic op has an operand of the same length. */
  private static final List<String> LETTERS = List.of("a", "b", "c", "d", "e", "f");

  /** One write: applied to the transaction and to the model alike. */
  private interface Write {
    void apply(Fixture f, Transaction tr);

    void apply(TreeMap<String, byte[]> model);
  }

  private record Set(String key, long value) implements Write {
    public void apply(Fixture f, Transaction tr) {
      tr.set(f.key(key), le(value));
    }

    public void apply(TreeMap<String, byte[]> model) {
      model.put(key, le(value));
    }

    @Override
    public String toString() {
      return "set " + key + "=" + value;
    }
  }

  private record Clear(String key) implements Write {
    public void apply(Fixture f, Transaction tr) {
      tr.clear(f.key(key));
    }

    public void apply(TreeMap<String, byte[]> model) {
      model.remove(key);
    }

    @Override
    public String toString() {
      return "clear " + key;
    }
  }

  private record ClearRange(String begin, String end) implements Write {
    public void apply(Fixture f, Transaction tr) {
      tr.clear(f.key(begin), f.key(end));
    }

    public void apply(TreeMap<String, byte[]> model) {
      model.subMap(begin, true, end, false).clear();
    }

    @Override
    public String toString() {
      return "clear [" + begin + "," + end + ")";
    }
  }

  private record Atomic(MutationType op, String key, long operand) implements Write {
    public void apply(Fixture f, Transaction tr) {
      tr.mutate(op, f.key(key), le(operand));
    }

    public void apply(TreeMap<String, byte[]> model) {
      byte[] current = model.get(key);
      byte[] result = atomic(op, current, le(operand));
      if (result == null) {
        model.remove(key);
      } else {
        model.put(key, result);
      }
    }

    @Override
    public String toString() {
      return op + " " + key + " " + operand;
    }
  }

  /** FoundationDB's result of {@code op} for 8-byte operands (API 730: a missing value yields the operand for BIT_AND and MIN). */
  static byte[] atomic(MutationType op, byte[] current, byte[] operand) {
    long p = ByteBuffer.wrap(operand).order(ByteOrder.LITTLE_ENDIAN).getLong();
    if (current == null) {
      return switch (op) {
        case COMPARE_AND_CLEAR -> null;
        case ADD, BIT_OR, BIT_XOR, MAX, BIT_AND, MIN, BYTE_MIN, BYTE_MAX, APPEND_IF_FITS -> operand;
        default -> throw new IllegalArgumentException(op.toString());
      };
    }
    long c = ByteBuffer.wrap(current).order(ByteOrder.LITTLE_ENDIAN).getLong();
    return switch (op) {
      case ADD -> le(c + p);
      case BIT_OR -> le(c | p);
      case BIT_XOR -> le(c ^ p);
      case BIT_AND -> le(c & p);
      case MAX -> Long.compareUnsigned(c, p) >= 0 ? current : operand;
      case MIN -> Long.compareUnsigned(c, p) <= 0 ? current : operand;
      case BYTE_MAX -> Arrays.compareUnsigned(current, operand) >= 0 ? current : operand;
      case BYTE_MIN -> Arrays.compareUnsigned(current, operand) <= 0 ? current : operand;
      case COMPARE_AND_CLEAR -> Arrays.equals(current, operand) ? null : current;
      default -> throw new IllegalArgumentException(op.toString());
    };
  }

  static byte[] le(long v) {
    return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array();
  }

  /** Commits {@code initial} under {@code f}, then applies {@code writes} in one transaction, checking every read after each. */
  private static void run(Fixture f, String name, Map<String, Long> initial, List<Write> writes, Random random) {
    TreeMap<String, byte[]> model = new TreeMap<>();
    f.db().run(tr -> {
      tr.clear(f.range());
      initial.forEach((k, v) -> tr.set(f.key(k), le(v)));
      return null;
    });
    initial.forEach((k, v) -> model.put(k, le(v)));
    Transaction tr = f.tx();
    List<Write> done = new ArrayList<>();
    for (Write w : writes) {
      w.apply(f, tr);
      w.apply(model);
      done.add(w);
      checkReads(f, tr, model, name + " after " + done, random);
    }
    await(tr.commit());
    Transaction after = f.tx();
    checkReads(f, after, model, name + " committed, after " + done, random);
  }

  private static void checkReads(Fixture f, Transaction tr, TreeMap<String, byte[]> model, String what, Random random) {
    List<String> names = new ArrayList<>(LETTERS);
    names.addAll(model.keySet());
    for (String k : names) {
      assertEquals(hex(model.get(k)), hex(await(tr.get(f.key(k)))), what + ": get " + k);
    }
    checkRange(f, tr, model, "", "\u00ff", 0, false, what);
    checkRange(f, tr, model, "", "\u00ff", 0, true, what);
    for (int i = 0; i < 3; i++) {
      String a = LETTERS.get(random.nextInt(LETTERS.size()));
      String b = LETTERS.get(random.nextInt(LETTERS.size()));
      String begin = a.compareTo(b) <= 0 ? a : b;
      String end = a.compareTo(b) <= 0 ? b : a;
      int limit = random.nextInt(4);
      checkRange(f, random.nextBoolean() ? tr : tr.snapshot(), model, begin, end, limit, random.nextBoolean(), what);
    }
  }

  private static void checkRange(Fixture f, ReadTransaction tr, TreeMap<String, byte[]> model, String begin,
      String end, int limit, boolean reverse, String what) {
    NavigableMap<String, byte[]> slice = model.subMap(begin, true, end, false);
    if (reverse) {
      slice = slice.descendingMap();
    }
    List<String> expected = new ArrayList<>();
    for (Map.Entry<String, byte[]> e : slice.entrySet()) {
      if (limit > 0 && expected.size() == limit) {
        break;
      }
      expected.add(e.getKey() + "=" + hex(e.getValue()));
    }
    byte[] from = begin.isEmpty() ? f.prefix() : f.key(begin);
    byte[] to = end.equals("\u00ff") ? f.range().end : f.key(end);
    List<KeyValue> rows = await(tr.getRange(from, to, limit, reverse).asList());
    List<String> actual = new ArrayList<>();
    for (KeyValue kv : rows) {
      actual.add(new String(kv.getKey(), f.prefix().length, kv.getKey().length - f.prefix().length,
          java.nio.charset.StandardCharsets.UTF_8) + "=" + hex(kv.getValue()));
    }
    assertEquals(expected, actual, what + ": range [" + begin + "," + end + ") limit " + limit
        + (reverse ? " reverse" : "") + (tr instanceof Transaction ? "" : " snapshot"));
  }

  private static Map<String, Long> allLetters() {
    Map<String, Long> m = new TreeMap<>();
    for (int i = 0; i < LETTERS.size(); i++) {
      m.put(LETTERS.get(i), 10L + i);
    }
    return m;
  }

  private static List<Write> w(Write... writes) {
    return List.of(writes);
  }

  private static ClearRange clear(String begin, String end) {
    return new ClearRange(begin, end);
  }

  @TestTemplate
  void overlappingNestedAndAdjacentClearsInBothOrders(Fixture f) {
    Map<String, List<Write>> cases = new java.util.LinkedHashMap<>();
    cases.put("overlapping, later one first", w(clear("c", "e"), clear("a", "d")));
    cases.put("overlapping, earlier one first", w(clear("a", "d"), clear("c", "e")));
    cases.put("nested, outer first", w(clear("a", "e"), clear("b", "c")));
    cases.put("nested, inner first", w(clear("b", "c"), clear("a", "e")));
    cases.put("adjacent, lower first", w(clear("a", "c"), clear("c", "e")));
    cases.put("adjacent, upper first", w(clear("c", "e"), clear("a", "c")));
    cases.put("same begin", w(clear("b", "c"), clear("b", "e")));
    cases.put("same end", w(clear("c", "e"), clear("a", "e")));
    cases.put("identical", w(clear("b", "d"), clear("b", "d")));
    cases.put("empty range", w(clear("c", "c"), clear("b", "c")));
    cases.put("bridging two", w(clear("a", "b"), clear("d", "e"), clear("b", "d")));
    cases.put("covering two", w(clear("b", "c"), clear("d", "e"), clear("a", "f")));
    cases.put("overlapping three, descending", w(clear("d", "f"), clear("c", "e"), clear("a", "d")));
    cases.put("set inside then overlapping clear", w(new Set("cc", 7), clear("c", "e"), clear("a", "d")));
    cases.put("set between overlapping clears", w(clear("c", "e"), new Set("d", 7), clear("a", "d")));
    cases.put("set after nested clears", w(clear("a", "e"), clear("b", "c"), new Set("bb", 7), new Set("d", 8)));
    cases.put("atomic ops on cleared keys", w(clear("c", "e"), new Atomic(MutationType.ADD, "c", 5),
        clear("a", "d"), new Atomic(MutationType.ADD, "d", 3), new Atomic(MutationType.MAX, "e", 1)));
    cases.put("atomic ops before a covering clear", w(new Atomic(MutationType.ADD, "b", 5),
        new Atomic(MutationType.BIT_XOR, "d", 3), clear("a", "e"), new Atomic(MutationType.ADD, "b", 1)));
    cases.put("compare-and-clear then clears", w(new Atomic(MutationType.COMPARE_AND_CLEAR, "b", 11),
        clear("c", "d"), clear("a", "c"), new Set("b", 4)));
    cases.put("point clears then ranges", w(new Clear("c"), new Clear("d"), clear("b", "c"), clear("d", "f")));
    Random random = new Random(1);
    for (Map.Entry<String, List<Write>> c : cases.entrySet()) {
      run(f, c.getKey(), allLetters(), c.getValue(), random);
    }
  }

  @TestTemplate
  @Tag("slow")
  void randomWritesMatchTheModel(Fixture f) {
    MutationType[] ops = {MutationType.ADD, MutationType.BIT_OR, MutationType.BIT_XOR, MutationType.BIT_AND,
        MutationType.MAX, MutationType.MIN, MutationType.BYTE_MAX, MutationType.BYTE_MIN,
        MutationType.COMPARE_AND_CLEAR};
    int seeds = f.isEmbedded() ? 150 : 30;
    for (int seed = 0; seed < seeds; seed++) {
      Random random = new Random(seed);
      Map<String, Long> initial = new TreeMap<>();
      for (String k : LETTERS) {
        if (random.nextBoolean()) {
          initial.put(k, (long) random.nextInt(4));
        }
      }
      List<Write> writes = new ArrayList<>();
      int n = 4 + random.nextInt(10);
      for (int i = 0; i < n; i++) {
        String key = LETTERS.get(random.nextInt(LETTERS.size())) + (random.nextInt(3) == 0 ? "x" : "");
        switch (random.nextInt(5)) {
          case 0 -> writes.add(new Set(key, random.nextInt(4)));
          case 1 -> writes.add(new Clear(key));
          case 2 -> writes.add(new Atomic(ops[random.nextInt(ops.length)], key, random.nextInt(4)));
          default -> {
            String a = LETTERS.get(random.nextInt(LETTERS.size())) + (random.nextBoolean() ? "" : "x");
            String b = LETTERS.get(random.nextInt(LETTERS.size())) + (random.nextBoolean() ? "" : "x");
            writes.add(a.compareTo(b) <= 0 ? clear(a, b) : clear(b, a));
          }
        }
      }
      run(f, "seed " + seed, initial, writes, random);
    }
  }
}
