package io.github.fdbcoord.conformance;

import com.apple.foundationdb.KeySelector;
import com.apple.foundationdb.MutationType;
import com.apple.foundationdb.Transaction;
import org.junit.jupiter.api.TestTemplate;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;

import static io.github.fdbcoord.conformance.FdbAssertions.await;
import static io.github.fdbcoord.conformance.FdbAssertions.keys;
import static io.github.fdbcoord.conformance.Fixture.bytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** Reads inside a transaction see its own sets, clears and atomic operations. */
@ExtendWith(EngineExtension.class)
class ReadYourWritesConformanceTest {

  private static List<String> rangeKeys(Fixture f, Transaction tr, boolean reverse, int limit) {
    return keys(await(tr.getRange(f.range().begin, f.range().end, limit, reverse).asList()), f.prefix().length);
  }

  @TestTemplate
  void getSeesOwnSetAndClear(Fixture f) {
    f.put("a", "db");
    Transaction tr = f.tx();
    tr.set(f.key("a"), bytes("mine"));
    assertEquals("mine", Fixture.string(await(tr.get(f.key("a")))));
    tr.clear(f.key("a"));
    assertNull(await(tr.get(f.key("a"))));
    tr.set(f.key("a"), bytes("again"));
    assertEquals("again", Fixture.string(await(tr.get(f.key("a")))));
  }

  @TestTemplate
  void ownWritesAreInvisibleToOtherTransactionsUntilCommit(Fixture f) {
    Transaction tr = f.tx();
    tr.set(f.key("a"), bytes("mine"));
    assertNull(f.read("a"));
    await(tr.commit());
    assertEquals("mine", f.read("a"));
  }

  @TestTemplate
  void rangeReadMergesOwnWritesWithStoredKeys(Fixture f) {
    f.put("b", "db");
    f.put("d", "db");
    f.put("f", "db");
    Transaction tr = f.tx();
    tr.set(f.key("a"), bytes("mine"));
    tr.set(f.key("c"), bytes("mine"));
    tr.clear(f.key("d"));
    tr.set(f.key("e"), bytes("mine"));
    assertEquals(List.of("a", "b", "c", "e", "f"), rangeKeys(f, tr, false, 0));
    assertEquals(List.of("f", "e", "c", "b", "a"), rangeKeys(f, tr, true, 0));
    assertEquals(List.of("a", "b"), rangeKeys(f, tr, false, 2));
    assertEquals(List.of("f", "e", "c"), rangeKeys(f, tr, true, 3));
  }

  @TestTemplate
  void clearRangeHidesStoredKeysAndLaterSetsReappear(Fixture f) {
    for (String k : List.of("a", "b", "c", "d")) {
      f.put(k, "db");
    }
    Transaction tr = f.tx();
    tr.clear(f.key("b"), f.key("d"));
    assertEquals(List.of("a", "d"), rangeKeys(f, tr, false, 0));
    tr.set(f.key("c"), bytes("mine"));
    assertEquals(List.of("a", "c", "d"), rangeKeys(f, tr, false, 0));
    assertNull(await(tr.get(f.key("b"))));
    assertEquals("mine", Fixture.string(await(tr.get(f.key("c")))));
  }

  @TestTemplate
  void clearRangeStartsWithClearsOwnAndStoredKeys(Fixture f) {
    f.put("p/1", "db");
    f.put("q", "db");
    Transaction tr = f.tx();
    tr.set(f.key("p/2"), bytes("mine"));
    tr.clearRangeStartsWith(f.key("p/"));
    assertEquals(List.of("q"), rangeKeys(f, tr, false, 0));
    await(tr.commit());
    assertEquals(1, f.readAll().size());
  }

  @TestTemplate
  void atomicOperationIsAppliedToTheStoredValueWhenRead(Fixture f) {
    f.put(f.key("n"), new byte[] {5, 0});
    Transaction tr = f.tx();
    tr.mutate(MutationType.ADD, f.key("n"), new byte[] {3, 0});
    assertArrayEquals(new byte[] {8, 0}, await(tr.get(f.key("n"))));
    tr.mutate(MutationType.ADD, f.key("n"), new byte[] {1, 0});
    tr.mutate(MutationType.MAX, f.key("n"), new byte[] {7, 0});
    assertArrayEquals(new byte[] {9, 0}, await(tr.get(f.key("n"))));
    await(tr.commit());
    assertArrayEquals(new byte[] {9, 0}, f.read(f.key("n")));
  }

  @TestTemplate
  void atomicOperationsStackOnOwnSetAndClear(Fixture f) {
    f.put(f.key("n"), new byte[] {100});
    Transaction tr = f.tx();
    tr.set(f.key("n"), new byte[] {1});
    tr.mutate(MutationType.ADD, f.key("n"), new byte[] {2});
    assertArrayEquals(new byte[] {3}, await(tr.get(f.key("n"))));
    tr.clear(f.key("n"));
    tr.mutate(MutationType.ADD, f.key("n"), new byte[] {4});
    assertArrayEquals(new byte[] {4}, await(tr.get(f.key("n"))), "an add after a clear starts from a missing value");
    tr.mutate(MutationType.APPEND_IF_FITS, f.key("n"), new byte[] {9});
    assertArrayEquals(new byte[] {4, 9}, await(tr.get(f.key("n"))));
    tr.set(f.key("n"), new byte[] {7});
    assertArrayEquals(new byte[] {7}, await(tr.get(f.key("n"))), "a set overrides earlier atomic operations");
    await(tr.commit());
    assertArrayEquals(new byte[] {7}, f.read(f.key("n")));
  }

  @TestTemplate
  void atomicOperationAppearsInRangeReads(Fixture f) {
    f.put(f.key("a"), new byte[] {1});
    Transaction tr = f.tx();
    tr.mutate(MutationType.ADD, f.key("a"), new byte[] {1});
    tr.mutate(MutationType.ADD, f.key("b"), new byte[] {5});
    tr.mutate(MutationType.COMPARE_AND_CLEAR, f.key("c"), new byte[] {5});
    var kvs = await(tr.getRange(f.range()).asList());
    assertEquals(List.of("a", "b"), keys(kvs, f.prefix().length));
    assertArrayEquals(new byte[] {2}, kvs.get(0).getValue());
    assertArrayEquals(new byte[] {5}, kvs.get(1).getValue());
  }

  @TestTemplate
  void compareAndClearIsVisibleAsAClear(Fixture f) {
    f.put(f.key("c"), new byte[] {5});
    Transaction tr = f.tx();
    tr.mutate(MutationType.COMPARE_AND_CLEAR, f.key("c"), new byte[] {5});
    assertNull(await(tr.get(f.key("c"))));
    assertEquals(0, await(tr.getRange(f.range()).asList()).size());
  }

  @TestTemplate
  void getKeySeesOwnWrites(Fixture f) {
    f.put("a", "db");
    f.put("d", "db");
    Transaction tr = f.tx();
    tr.set(f.key("b"), bytes("mine"));
    tr.clear(f.key("d"));
    tr.set(f.key("e"), bytes("mine"));
    assertArrayEquals(f.key("b"), await(tr.getKey(KeySelector.firstGreaterThan(f.key("a")))));
    assertArrayEquals(f.key("e"), await(tr.getKey(KeySelector.firstGreaterThan(f.key("b")))));
    assertArrayEquals(f.key("b"), await(tr.getKey(KeySelector.lastLessThan(f.key("e")))));
  }

  @TestTemplate
  void readYourWritesDisableReadsTheStoredValues(Fixture f) {
    f.put("a", "db");
    Transaction tr = f.tx();
    tr.options().setReadYourWritesDisable();
    tr.set(f.key("a"), bytes("mine"));
    tr.set(f.key("b"), bytes("mine"));
    assertEquals("db", Fixture.string(await(tr.get(f.key("a")))));
    assertNull(await(tr.get(f.key("b"))));
    assertEquals(1, await(tr.getRange(f.range()).asList()).size());
    await(tr.commit());
    assertEquals("mine", f.read("a"));
    assertEquals("mine", f.read("b"));
  }

  @TestTemplate
  void readYourWritesDisableStillDetectsConflicts(Fixture f) {
    Transaction tr = f.tx();
    tr.options().setReadYourWritesDisable();
    await(tr.get(f.key("k")));
    f.put("k", "1");
    tr.set(f.key("x"), bytes("x"));
    FdbAssertions.assertFdbError(io.github.fdbcoord.fdb.FdbErrors.NOT_COMMITTED, tr.commit());
  }

  @TestTemplate
  void largeInterleavingOfOwnAndStoredKeysIsOrdered(Fixture f) {
    f.db().run(tr -> {
      for (int i = 0; i < 200; i += 2) {
        tr.set(f.key(String.format("k%03d", i)), bytes("db"));
      }
      return null;
    });
    Transaction tr = f.tx();
    for (int i = 1; i < 200; i += 2) {
      tr.set(f.key(String.format("k%03d", i)), bytes("mine"));
    }
    for (int i = 0; i < 200; i += 10) {
      tr.clear(f.key(String.format("k%03d", i)));
    }
    List<String> got = rangeKeys(f, tr, false, 0);
    assertEquals(180, got.size());
    for (int i = 1; i < got.size(); i++) {
      assertEquals(-1, Integer.signum(got.get(i - 1).compareTo(got.get(i))));
    }
    List<String> reversed = rangeKeys(f, tr, true, 0);
    java.util.Collections.reverse(reversed);
    assertEquals(got, reversed);
  }

  /**
   * fdb-java's range iterator issues its first read when it is created; a write made afterwards in
   * the same transaction does not change what that read returns (fdb-java's
   * DirectoryLayer.removeRecursive relies on this: it opens the subdirectory iterator, then clears
   * the node).
   */
  @TestTemplate
  void rangeIteratorReadsAsOfItsCreation(Fixture f) {
    f.put("a1", "v");
    f.put("a2", "v");
    Transaction tr = f.tx();
    com.apple.foundationdb.async.AsyncIterator<com.apple.foundationdb.KeyValue> it =
        tr.getRange(f.key("a"), f.key("b")).iterator();
    tr.clear(f.key("a"), f.key("b"));
    int n = 0;
    while (await(it.onHasNext())) {
      it.next();
      n++;
    }
    assertEquals(2, n);
    assertEquals(0, await(tr.getRange(f.key("a"), f.key("b")).asList()).size());
  }

  @TestTemplate
  void rangeReadIssuedBeforeAWriteDoesNotSeeIt(Fixture f) {
    f.put("a1", "v");
    Transaction tr = f.tx();
    java.util.concurrent.CompletableFuture<List<com.apple.foundationdb.KeyValue>> before =
        tr.getRange(f.key("a"), f.key("b")).asList();
    tr.clear(f.key("a"), f.key("b"));
    assertEquals(1, await(before).size());
  }
}
