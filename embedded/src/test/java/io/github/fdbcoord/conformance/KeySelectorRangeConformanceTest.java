package io.github.fdbcoord.conformance;

import com.apple.foundationdb.KeySelector;
import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.Range;
import com.apple.foundationdb.StreamingMode;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.async.AsyncIterator;
import io.github.fdbcoord.fdb.FdbErrors;
import org.junit.jupiter.api.TestTemplate;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static io.github.fdbcoord.conformance.FdbAssertions.assertFdbError;
import static io.github.fdbcoord.conformance.FdbAssertions.await;
import static io.github.fdbcoord.conformance.FdbAssertions.keys;
import static io.github.fdbcoord.conformance.Fixture.bytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Key selectors (getKey and range bounds) and range reads with limit, reverse and streaming modes. */
@ExtendWith(EngineExtension.class)
class KeySelectorRangeConformanceTest {

  /** Keys a, b, c, d, e under the test prefix. */
  private static void abcde(Fixture f) {
    f.db().run(tr -> {
      for (String k : List.of("a", "b", "c", "d", "e")) {
        tr.set(f.key(k), bytes(k));
      }
      return null;
    });
  }

  private static String resolve(Fixture f, Transaction tr, KeySelector selector) {
    byte[] k = await(tr.getKey(selector));
    byte[] p = f.prefix();
    if (k.length < p.length || !Arrays.equals(Arrays.copyOf(k, p.length), p)) {
      return "<outside:" + FdbAssertions.hex(k) + ">";
    }
    return Fixture.string(Arrays.copyOfRange(k, p.length, k.length));
  }

  private static List<String> range(Fixture f, Transaction tr, KeySelector begin, KeySelector end, int limit, boolean reverse) {
    return keys(await(tr.getRange(begin, end, limit, reverse).asList()), f.prefix().length);
  }

  @TestTemplate
  void basicSelectorsResolve(Fixture f) {
    abcde(f);
    Transaction tr = f.tx();
    assertEquals("b", resolve(f, tr, KeySelector.firstGreaterOrEqual(f.key("b"))));
    assertEquals("c", resolve(f, tr, KeySelector.firstGreaterThan(f.key("b"))));
    assertEquals("a", resolve(f, tr, KeySelector.lastLessThan(f.key("b"))));
    assertEquals("b", resolve(f, tr, KeySelector.lastLessOrEqual(f.key("b"))));
  }

  @TestTemplate
  void selectorsOnAbsentKeysResolveToNeighbours(Fixture f) {
    abcde(f);
    Transaction tr = f.tx();
    assertEquals("c", resolve(f, tr, KeySelector.firstGreaterOrEqual(f.key("bb"))));
    assertEquals("c", resolve(f, tr, KeySelector.firstGreaterThan(f.key("bb"))));
    assertEquals("b", resolve(f, tr, KeySelector.lastLessThan(f.key("bb"))));
    assertEquals("b", resolve(f, tr, KeySelector.lastLessOrEqual(f.key("bb"))));
  }

  @TestTemplate
  void offsetsMoveBySelectedKeys(Fixture f) {
    abcde(f);
    Transaction tr = f.tx();
    assertEquals("c", resolve(f, tr, KeySelector.firstGreaterOrEqual(f.key("a")).add(2)));
    assertEquals("e", resolve(f, tr, KeySelector.firstGreaterThan(f.key("b")).add(2)));
    assertEquals("b", resolve(f, tr, KeySelector.firstGreaterOrEqual(f.key("c")).add(-1)));
    assertEquals("a", resolve(f, tr, KeySelector.lastLessOrEqual(f.key("c")).add(-2)));
    assertEquals("e", resolve(f, tr, new KeySelector(f.key("bb"), false, 3)));
    assertEquals("b", resolve(f, tr, new KeySelector(f.key("c"), false, 0)));
    assertEquals("c", resolve(f, tr, new KeySelector(f.key("c"), true, 0)));
  }

  @TestTemplate
  void selectorsPastTheEndsOfTheDatabaseClampToTheKeyspace(Fixture f) {
    Transaction tr = f.tx();
    assertArrayEquals(new byte[0], await(tr.getKey(KeySelector.lastLessThan(new byte[0]))));
    assertArrayEquals(new byte[0], await(tr.getKey(KeySelector.lastLessOrEqual(new byte[] {0}).add(-1_000_000))));
    assertArrayEquals(new byte[] {(byte) 0xff}, await(tr.getKey(KeySelector.firstGreaterOrEqual(new byte[] {(byte) 0xff}))));
    assertArrayEquals(new byte[] {(byte) 0xff},
        await(tr.getKey(KeySelector.firstGreaterOrEqual(new byte[] {(byte) 0xfe}).add(1_000_000))));
  }

  @TestTemplate
  void getKeyInsideTheSystemKeyspaceFails2004(Fixture f) {
    Transaction tr = f.tx();
    assertFdbError(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE, tr.getKey(KeySelector.firstGreaterOrEqual(new byte[] {(byte) 0xff, 0})));
  }

  @TestTemplate
  void rangeWithSelectorBounds(Fixture f) {
    abcde(f);
    Transaction tr = f.tx();
    assertEquals(List.of("b", "c"),
        range(f, tr, KeySelector.firstGreaterThan(f.key("a")), KeySelector.firstGreaterOrEqual(f.key("d")), 0, false));
    assertEquals(List.of("b", "c", "d"),
        range(f, tr, KeySelector.firstGreaterThan(f.key("a")), KeySelector.firstGreaterThan(f.key("d")), 0, false));
    assertEquals(List.of("a", "b"),
        range(f, tr, KeySelector.firstGreaterOrEqual(f.key("a")), KeySelector.lastLessOrEqual(f.key("c")), 0, false));
    assertEquals(List.of("c", "d"),
        range(f, tr, KeySelector.firstGreaterOrEqual(f.key("a")).add(2), KeySelector.firstGreaterOrEqual(f.key("e")), 0, false));
    assertEquals(List.of("d", "c", "b"),
        range(f, tr, KeySelector.firstGreaterThan(f.key("a")), KeySelector.firstGreaterThan(f.key("d")), 0, true));
  }

  @TestTemplate
  void rangeLimitsAndReverse(Fixture f) {
    abcde(f);
    Transaction tr = f.tx();
    Range r = f.range();
    assertEquals(List.of("a", "b", "c", "d", "e"), keys(await(tr.getRange(r).asList()), f.prefix().length));
    assertEquals(List.of("a", "b"), keys(await(tr.getRange(r, 2).asList()), f.prefix().length));
    assertEquals(List.of("e", "d", "c", "b", "a"), keys(await(tr.getRange(r, 0, true).asList()), f.prefix().length));
    assertEquals(List.of("e", "d"), keys(await(tr.getRange(r, 2, true).asList()), f.prefix().length));
    assertEquals(5, await(tr.getRange(r, 100).asList()).size());
    assertEquals(5, await(tr.getRange(r, ReadTransactionLimits.UNLIMITED).asList()).size());
    assertEquals(List.of("b", "c"), keys(await(tr.getRange(f.key("b"), f.key("d")).asList()), f.prefix().length));
  }

  @TestTemplate
  void emptyAndInvertedRangesReturnNothing(Fixture f) {
    abcde(f);
    Transaction tr = f.tx();
    assertTrue(await(tr.getRange(f.key("c"), f.key("c")).asList()).isEmpty());
    assertTrue(await(tr.getRange(f.key("d"), f.key("b")).asList()).isEmpty(), "an inverted range reads as empty");
    assertTrue(await(tr.getRange(f.key("d"), f.key("b"), 0, true).asList()).isEmpty());
    assertTrue(await(tr.getRange(KeySelector.firstGreaterOrEqual(f.key("e")).add(1), KeySelector.firstGreaterOrEqual(f.key("e"))).asList()).isEmpty());
  }

  @TestTemplate
  void everyStreamingModeReturnsTheSameRows(Fixture f) {
    f.db().run(tr -> {
      for (int i = 0; i < 1500; i++) {
        tr.set(f.key(String.format("k%05d", i)), new byte[100]);
      }
      return null;
    });
    Transaction tr = f.tx();
    Range r = f.range();
    List<KeyValue> all = await(tr.getRange(r).asList());
    assertEquals(1500, all.size());
    for (StreamingMode mode : StreamingMode.values()) {
      if (mode == StreamingMode.EXACT) {
        continue;
      }
      assertEquals(keys(all, 0), keys(await(tr.getRange(r, 0, false, mode).asList()), 0), mode + " forward");
      List<KeyValue> rev = new ArrayList<>(all);
      java.util.Collections.reverse(rev);
      assertEquals(keys(rev, 0), keys(await(tr.getRange(r, 0, true, mode).asList()), 0), mode + " reverse");
      assertEquals(keys(all.subList(0, 1234), 0), keys(await(tr.getRange(r, 1234, false, mode).asList()), 0), mode + " limited");
    }
    assertEquals(keys(all.subList(0, 1234), 0), keys(await(tr.getRange(r, 1234, false, StreamingMode.EXACT).asList()), 0), "EXACT");
    assertEquals(keys(rev(all).subList(0, 7), 0), keys(await(tr.getRange(r, 7, true, StreamingMode.EXACT).asList()), 0), "EXACT reverse");
  }

  private static List<KeyValue> rev(List<KeyValue> l) {
    List<KeyValue> out = new ArrayList<>(l);
    java.util.Collections.reverse(out);
    return out;
  }

  @TestTemplate
  void asyncIteratorStreamsEveryRowInOrder(Fixture f) {
    f.db().run(tr -> {
      for (int i = 0; i < 1000; i++) {
        tr.set(f.key(String.format("k%05d", i)), bytes("" + i));
      }
      return null;
    });
    Transaction tr = f.tx();
    AsyncIterator<KeyValue> it = tr.getRange(f.range(), 0, false, StreamingMode.ITERATOR).iterator();
    int n = 0;
    while (await(it.onHasNext())) {
      KeyValue kv = it.next();
      assertEquals(String.valueOf(n), Fixture.string(kv.getValue()));
      n++;
    }
    assertEquals(1000, n);
  }

  @TestTemplate
  void rangeEndInsideTheSystemKeyspaceFails2004(Fixture f) {
    Transaction tr = f.tx();
    assertFdbError(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE, tr.getRange(f.key("a"), new byte[] {(byte) 0xff, 0}).asList());
  }

  @TestTemplate
  void rangeEndingExactlyAtTheSystemKeyspaceIsAllowed(Fixture f) {
    f.put("a", "1");
    Transaction tr = f.tx();
    List<KeyValue> kvs = await(tr.getRange(f.key("a"), new byte[] {(byte) 0xff}).asList());
    assertTrue(kvs.size() >= 1);
    assertArrayEquals(f.key("a"), kvs.get(0).getKey());
  }

  @TestTemplate
  void rangeOfKeysSharingAPrefix(Fixture f) {
    f.put("p", "x");
    f.put("p/1", "x");
    f.put("p/2", "x");
    f.put("p0", "x");
    Transaction tr = f.tx();
    assertEquals(List.of("p/1", "p/2"), keys(await(tr.getRange(Range.startsWith(f.key("p/"))).asList()), f.prefix().length));
  }

  /** fdb-java's ROW_LIMIT_UNLIMITED, named here for readability. */
  private static final class ReadTransactionLimits {
    static final int UNLIMITED = com.apple.foundationdb.ReadTransaction.ROW_LIMIT_UNLIMITED;
  }
}
