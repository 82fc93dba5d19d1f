package io.github.fdbcoord.conformance;

import com.apple.foundationdb.KeySelector;
import com.apple.foundationdb.MutationType;
import com.apple.foundationdb.Transaction;
import io.github.fdbcoord.fdb.FdbErrors;
import io.github.fdbcoord.fdb.Versionstamps;
import org.junit.jupiter.api.TestTemplate;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;

import static io.github.fdbcoord.conformance.FdbAssertions.assertFdbError;
import static io.github.fdbcoord.conformance.FdbAssertions.await;
import static io.github.fdbcoord.conformance.FdbAssertions.keys;
import static io.github.fdbcoord.conformance.Fixture.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Conflict detection (1020 not_committed) with read and write conflict ranges as FoundationDB's
 * client computes them (ReadYourWrites.actor.cpp: addConflictRange / updateConflictMap).
 */
@ExtendWith(EngineExtension.class)
class ConflictConformanceTest {

  /** Writes {@code name} in a transaction of its own and commits it. */
  private static void commitWrite(Fixture f, String name, String value) {
    f.put(name, value);
  }

  @TestTemplate
  void readThenConcurrentWriteConflicts(Fixture f) {
    f.put("k", "0");
    Transaction tr = f.tx();
    assertEquals("0", Fixture.string(await(tr.get(f.key("k")))));
    commitWrite(f, "k", "1");
    tr.set(f.key("other"), bytes("x"));
    assertFdbError(FdbErrors.NOT_COMMITTED, tr.commit());
    assertNull(f.read("other"), "a conflicting transaction must not apply its writes");
  }

  @TestTemplate
  void conflictErrorCarriesFoundationDbMessage(Fixture f) {
    Transaction tr = f.tx();
    await(tr.get(f.key("k")));
    commitWrite(f, "k", "1");
    tr.set(f.key("other"), bytes("x"));
    try {
      await(tr.commit());
      throw new AssertionError("expected 1020");
    } catch (com.apple.foundationdb.FDBException e) {
      assertEquals(1020, e.getCode());
      assertEquals("Transaction not committed due to conflict with another transaction", e.getMessage());
    }
  }

  @TestTemplate
  void readVersionTakenBeforeConcurrentCommitConflictsEvenIfReadComesLater(Fixture f) {
    f.put("k", "0");
    Transaction tr = f.tx();
    await(tr.getReadVersion());
    commitWrite(f, "k", "1");
    assertEquals("0", Fixture.string(await(tr.get(f.key("k")))), "reads happen at the read version");
    tr.set(f.key("other"), bytes("x"));
    assertFdbError(FdbErrors.NOT_COMMITTED, tr.commit());
  }

  @TestTemplate
  void writeCommittedBeforeReadVersionDoesNotConflict(Fixture f) {
    commitWrite(f, "k", "1");
    Transaction tr = f.tx();
    assertEquals("1", Fixture.string(await(tr.get(f.key("k")))));
    tr.set(f.key("k"), bytes("2"));
    await(tr.commit());
    assertEquals("2", f.read("k"));
  }

  @TestTemplate
  void readOnlyTransactionNeverConflicts(Fixture f) {
    Transaction tr = f.tx();
    await(tr.get(f.key("k")));
    await(tr.getRange(f.range()).asList());
    commitWrite(f, "k", "1");
    await(tr.commit());
    assertEquals(-1L, tr.getCommittedVersion());
  }

  @TestTemplate
  void blindWritesNeverConflictAndLastCommitWins(Fixture f) {
    Transaction first = f.tx();
    Transaction second = f.tx();
    await(first.getReadVersion());
    await(second.getReadVersion());
    first.set(f.key("k"), bytes("first"));
    second.set(f.key("k"), bytes("second"));
    await(second.commit());
    await(first.commit());
    assertEquals("first", f.read("k"));
    assertTrue(first.getCommittedVersion() > second.getCommittedVersion());
  }

  @TestTemplate
  void writeToAKeyThatWasNotReadDoesNotConflict(Fixture f) {
    Transaction tr = f.tx();
    await(tr.get(f.key("a")));
    commitWrite(f, "b", "1");
    tr.set(f.key("c"), bytes("x"));
    await(tr.commit());
  }

  @TestTemplate
  void abortedTransactionWritesCauseNoConflict(Fixture f) {
    Transaction loser = f.tx();
    await(loser.get(f.key("a")));
    loser.set(f.key("b"), bytes("loser"));
    Transaction reader = f.tx();
    await(reader.get(f.key("b")));
    commitWrite(f, "a", "1");
    assertFdbError(FdbErrors.NOT_COMMITTED, loser.commit());
    reader.set(f.key("c"), bytes("x"));
    await(reader.commit());
  }

  @TestTemplate
  void rangeReadConflictsWithInsertOfANewKeyInsideTheRange(Fixture f) {
    f.put("a", "1");
    f.put("c", "1");
    Transaction tr = f.tx();
    assertEquals(List.of("a", "c"), keys(await(tr.getRange(f.key("a"), f.key("d")).asList()), f.prefix().length));
    commitWrite(f, "b", "phantom");
    tr.set(f.key("x"), bytes("x"));
    assertFdbError(FdbErrors.NOT_COMMITTED, tr.commit());
  }

  @TestTemplate
  void rangeReadDoesNotConflictAtItsExclusiveEnd(Fixture f) {
    f.put("a", "1");
    Transaction tr = f.tx();
    await(tr.getRange(f.key("a"), f.key("c")).asList());
    commitWrite(f, "c", "1");
    commitWrite(f, "0", "1");
    tr.set(f.key("x"), bytes("x"));
    await(tr.commit());
  }

  private static void fiveKeys(Fixture f) {
    for (int i = 1; i <= 5; i++) {
      f.put("k" + i, "v");
    }
  }

  @TestTemplate
  void limitedRangeReadDoesNotConflictPastTheLastKeyReturned(Fixture f) {
    fiveKeys(f);
    Transaction tr = f.tx();
    assertEquals(List.of("k1", "k2"),
        keys(await(tr.getRange(f.key("k0"), f.key("k9"), 2).asList()), f.prefix().length));
    commitWrite(f, "k3", "changed");
    commitWrite(f, "k2\u0001", "inserted after k2");
    tr.set(f.key("x"), bytes("x"));
    await(tr.commit());
  }

  @TestTemplate
  void limitedRangeReadConflictsOnTheLastKeyReturned(Fixture f) {
    fiveKeys(f);
    Transaction tr = f.tx();
    await(tr.getRange(f.key("k0"), f.key("k9"), 2).asList());
    commitWrite(f, "k2", "changed");
    tr.set(f.key("x"), bytes("x"));
    assertFdbError(FdbErrors.NOT_COMMITTED, tr.commit());
  }

  @TestTemplate
  void limitedRangeReadConflictsOnAnInsertBeforeTheLastKeyReturned(Fixture f) {
    fiveKeys(f);
    Transaction tr = f.tx();
    await(tr.getRange(f.key("k0"), f.key("k9"), 2).asList());
    commitWrite(f, "k1a", "inserted between k1 and k2");
    tr.set(f.key("x"), bytes("x"));
    assertFdbError(FdbErrors.NOT_COMMITTED, tr.commit());
  }

  @TestTemplate
  void reverseLimitedRangeReadConflictsOnlyDownToTheLastKeyReturned(Fixture f) {
    fiveKeys(f);
    Transaction tr = f.tx();
    assertEquals(List.of("k5", "k4"),
        keys(await(tr.getRange(f.key("k0"), f.key("k9"), 2, true).asList()), f.prefix().length));
    commitWrite(f, "k3", "changed");
    tr.set(f.key("x"), bytes("x"));
    await(tr.commit());

    Transaction tr2 = f.tx();
    await(tr2.getRange(f.key("k0"), f.key("k9"), 2, true).asList());
    commitWrite(f, "k4", "changed");
    tr2.set(f.key("x"), bytes("y"));
    assertFdbError(FdbErrors.NOT_COMMITTED, tr2.commit());
  }

  @TestTemplate
  void readingAKeyTheTransactionSetAddsNoReadConflict(Fixture f) {
    Transaction tr = f.tx();
    tr.set(f.key("k"), bytes("mine"));
    assertEquals("mine", Fixture.string(await(tr.get(f.key("k")))));
    commitWrite(f, "k", "theirs");
    await(tr.commit());
    assertEquals("mine", f.read("k"));
  }

  @TestTemplate
  void readingAKeyTheTransactionClearedAddsNoReadConflict(Fixture f) {
    f.put("k", "old");
    Transaction tr = f.tx();
    tr.clear(f.key("k"));
    assertNull(await(tr.get(f.key("k"))));
    commitWrite(f, "k", "theirs");
    await(tr.commit());
    assertNull(f.read("k"));
  }

  @TestTemplate
  void readingARangeTheTransactionClearedAddsNoReadConflict(Fixture f) {
    f.put("b", "old");
    Transaction tr = f.tx();
    tr.clear(f.key("a"), f.key("z"));
    assertTrue(await(tr.getRange(f.key("a"), f.key("z")).asList()).isEmpty());
    commitWrite(f, "c", "theirs");
    await(tr.commit());
    assertNull(f.read("c"));
  }

  @TestTemplate
  void readingAKeyTheTransactionOnlyMutatedAtomicallyAddsAReadConflict(Fixture f) {
    f.put(f.key("n"), new byte[] {1});
    Transaction tr = f.tx();
    tr.mutate(MutationType.ADD, f.key("n"), new byte[] {1});
    assertEquals(2, await(tr.get(f.key("n")))[0]);
    f.put(f.key("n"), new byte[] {10});
    assertFdbError(FdbErrors.NOT_COMMITTED, tr.commit());
  }

  @TestTemplate
  void atomicOperationWithoutAReadNeverConflicts(Fixture f) {
    f.put(f.key("n"), new byte[] {1});
    Transaction tr = f.tx();
    await(tr.getReadVersion());
    tr.mutate(MutationType.ADD, f.key("n"), new byte[] {1});
    f.put(f.key("n"), new byte[] {10});
    await(tr.commit());
    assertEquals(11, f.read(f.key("n"))[0], "the atomic add applies to the value current at commit");
  }

  @TestTemplate
  void manualReadConflictKeyConflicts(Fixture f) {
    Transaction tr = f.tx();
    await(tr.getReadVersion());
    tr.addReadConflictKey(f.key("k"));
    tr.set(f.key("x"), bytes("x"));
    commitWrite(f, "k", "1");
    assertFdbError(FdbErrors.NOT_COMMITTED, tr.commit());
  }

  @TestTemplate
  void manualReadConflictKeyCoversOnlyThatKey(Fixture f) {
    Transaction tr = f.tx();
    await(tr.getReadVersion());
    tr.addReadConflictKey(f.key("k"));
    tr.set(f.key("x"), bytes("x"));
    commitWrite(f, "k\u0000", "1");
    await(tr.commit());
  }

  @TestTemplate
  void manualReadConflictRangeConflicts(Fixture f) {
    Transaction tr = f.tx();
    await(tr.getReadVersion());
    tr.addReadConflictRange(f.key("a"), f.key("c"));
    tr.set(f.key("x"), bytes("x"));
    commitWrite(f, "b", "1");
    assertFdbError(FdbErrors.NOT_COMMITTED, tr.commit());
  }

  @TestTemplate
  void manualReadConflictRangeEndIsExclusive(Fixture f) {
    Transaction tr = f.tx();
    await(tr.getReadVersion());
    tr.addReadConflictRange(f.key("a"), f.key("c"));
    tr.set(f.key("x"), bytes("x"));
    commitWrite(f, "c", "1");
    await(tr.commit());
  }

  @TestTemplate
  void manualWriteConflictKeyWithoutMutationsCommitsAndConflictsWithReaders(Fixture f) {
    Transaction reader = f.tx();
    await(reader.get(f.key("k")));
    reader.set(f.key("x"), bytes("x"));

    Transaction writer = f.tx();
    writer.addWriteConflictKey(f.key("k"));
    await(writer.commit());
    assertTrue(writer.getCommittedVersion() > 0, "a write conflict range makes the transaction a write transaction");

    assertFdbError(FdbErrors.NOT_COMMITTED, reader.commit());
    assertNull(f.read("k"), "a write conflict range writes nothing");
  }

  @TestTemplate
  void manualWriteConflictRangeConflictsWithReadersInsideIt(Fixture f) {
    Transaction reader = f.tx();
    await(reader.get(f.key("b")));
    reader.set(f.key("x"), bytes("x"));
    Transaction writer = f.tx();
    writer.addWriteConflictRange(f.key("a"), f.key("c"));
    await(writer.commit());
    assertFdbError(FdbErrors.NOT_COMMITTED, reader.commit());
  }

  @TestTemplate
  void nextWriteNoWriteConflictRangeLetsAReaderCommit(Fixture f) {
    f.put("k", "0");
    Transaction reader = f.tx();
    await(reader.get(f.key("k")));
    reader.set(f.key("x"), bytes("x"));

    Transaction writer = f.tx();
    writer.options().setNextWriteNoWriteConflictRange();
    writer.set(f.key("k"), bytes("1"));
    await(writer.commit());
    assertEquals("1", f.read("k"), "the write itself is applied");

    await(reader.commit());
  }

  @TestTemplate
  void nextWriteNoWriteConflictRangeAppliesToTheNextWriteOnly(Fixture f) {
    Transaction reader = f.tx();
    await(reader.get(f.key("k2")));
    reader.set(f.key("x"), bytes("x"));

    Transaction writer = f.tx();
    writer.options().setNextWriteNoWriteConflictRange();
    writer.set(f.key("k1"), bytes("1"));
    writer.set(f.key("k2"), bytes("1"));
    await(writer.commit());

    assertFdbError(FdbErrors.NOT_COMMITTED, reader.commit());
  }

  @TestTemplate
  void nextWriteNoWriteConflictRangeAppliesToClearsAndAtomicOperations(Fixture f) {
    f.put("c", "0");
    Transaction reader = f.tx();
    await(reader.get(f.key("c")));
    await(reader.get(f.key("n")));
    reader.set(f.key("x"), bytes("x"));

    Transaction writer = f.tx();
    writer.options().setNextWriteNoWriteConflictRange();
    writer.clear(f.key("c"));
    writer.options().setNextWriteNoWriteConflictRange();
    writer.mutate(MutationType.ADD, f.key("n"), new byte[] {1});
    await(writer.commit());

    await(reader.commit());
  }

  @TestTemplate
  void clearRangeConflictsWithReadersOfKeysInside(Fixture f) {
    f.put("b", "1");
    Transaction reader = f.tx();
    await(reader.get(f.key("b")));
    reader.set(f.key("x"), bytes("x"));
    Transaction writer = f.tx();
    writer.clear(f.key("a"), f.key("c"));
    await(writer.commit());
    assertFdbError(FdbErrors.NOT_COMMITTED, reader.commit());
  }

  @TestTemplate
  void clearOfAnAbsentKeyStillConflictsWithItsReaders(Fixture f) {
    Transaction reader = f.tx();
    await(reader.get(f.key("k")));
    reader.set(f.key("x"), bytes("x"));
    Transaction writer = f.tx();
    writer.clear(f.key("k"));
    await(writer.commit());
    assertFdbError(FdbErrors.NOT_COMMITTED, reader.commit());
  }

  @TestTemplate
  void versionstampedValueWritesAConflictOnItsKey(Fixture f) {
    Transaction reader = f.tx();
    await(reader.get(f.key("k")));
    reader.set(f.key("x"), bytes("x"));
    Transaction writer = f.tx();
    writer.mutate(MutationType.SET_VERSIONSTAMPED_VALUE, f.key("k"), Versionstamps.rawValue(new byte[0]));
    await(writer.commit());
    assertFdbError(FdbErrors.NOT_COMMITTED, reader.commit());
  }

  @TestTemplate
  void getKeyConflictsWithAChangeToTheKeyItResolvedTo(Fixture f) {
    f.put("a", "1");
    f.put("c", "1");
    Transaction tr = f.tx();
    byte[] resolved = await(tr.getKey(KeySelector.firstGreaterThan(f.key("a"))));
    assertEquals("c", Fixture.string(java.util.Arrays.copyOfRange(resolved, f.prefix().length, resolved.length)));
    commitWrite(f, "b", "inserted");
    tr.set(f.key("x"), bytes("x"));
    assertFdbError(FdbErrors.NOT_COMMITTED, tr.commit());
  }

  @TestTemplate
  void writeSkewIsPrevented(Fixture f) {
    f.put("x", "1");
    f.put("y", "1");
    Transaction first = f.tx();
    Transaction second = f.tx();
    for (Transaction tr : List.of(first, second)) {
      await(tr.get(f.key("x")));
      await(tr.get(f.key("y")));
    }
    first.set(f.key("x"), bytes("0"));
    second.set(f.key("y"), bytes("0"));
    await(first.commit());
    assertFdbError(FdbErrors.NOT_COMMITTED, second.commit());
    assertEquals("1", f.read("y"));
  }

  @TestTemplate
  void readConflictRangesWithoutWritesNeverConflict(Fixture f) {
    Transaction tr = f.tx();
    await(tr.getReadVersion());
    tr.addReadConflictRange(f.key("a"), f.key("z"));
    commitWrite(f, "m", "1");
    await(tr.commit());
    assertEquals(-1L, tr.getCommittedVersion(), "without writes the transaction is read-only");
  }

  @TestTemplate
  void versionstampedKeyConflictsWithAReaderOfItsRange(Fixture f) {
    byte[] head = f.key("q/");
    Transaction reader = f.tx();
    await(reader.getRange(com.apple.foundationdb.Range.startsWith(head)).asList());
    reader.set(f.key("x"), bytes("x"));
    Transaction writer = f.tx();
    byte[] offset = java.nio.ByteBuffer.allocate(4).order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(head.length).array();
    writer.mutate(MutationType.SET_VERSIONSTAMPED_KEY, Fixture.concat(head, new byte[10], offset), bytes("v"));
    await(writer.commit());
    assertFdbError(FdbErrors.NOT_COMMITTED, reader.commit());
  }

  @TestTemplate
  void rangeReadOverOwnWritesConflictsOnlyOnTheUnmodifiedParts(Fixture f) {
    f.put("c", "db");
    Transaction tr = f.tx();
    tr.set(f.key("b"), bytes("mine"));
    assertEquals(List.of("b", "c"), keys(await(tr.getRange(f.key("a"), f.key("d")).asList()), f.prefix().length));
    commitWrite(f, "b", "theirs");
    await(tr.commit());
    assertEquals("mine", f.read("b"));

    Transaction tr2 = f.tx();
    tr2.set(f.key("b"), bytes("mine"));
    await(tr2.getRange(f.key("a"), f.key("d")).asList());
    commitWrite(f, "c", "theirs");
    assertFdbError(FdbErrors.NOT_COMMITTED, tr2.commit());
  }

  @TestTemplate
  void rangeReadOverAnAtomicallyMutatedKeyConflictsOnIt(Fixture f) {
    f.put(f.key("b"), new byte[] {1});
    Transaction tr = f.tx();
    tr.mutate(MutationType.ADD, f.key("b"), new byte[] {1});
    await(tr.getRange(f.key("a"), f.key("d")).asList());
    f.put(f.key("b"), new byte[] {5});
    assertFdbError(FdbErrors.NOT_COMMITTED, tr.commit());
  }

  @TestTemplate
  void lastLessThanConflictsFromTheResolvedKeyUpToItsKey(Fixture f) {
    f.put("a", "1");
    f.put("c", "1");
    Transaction excl = f.tx();
    assertEquals("a", Fixture.string(java.util.Arrays.copyOfRange(
        await(excl.getKey(KeySelector.lastLessThan(f.key("c")))), f.prefix().length, f.key("a").length)));
    excl.set(f.key("x"), bytes("x"));
    commitWrite(f, "c", "2");
    await(excl.commit());

    Transaction incl = f.tx();
    await(incl.getKey(KeySelector.lastLessThan(f.key("c"))));
    incl.set(f.key("x"), bytes("y"));
    commitWrite(f, "b", "inserted");
    assertFdbError(FdbErrors.NOT_COMMITTED, incl.commit());
  }

  @TestTemplate
  void firstGreaterOrEqualConflictsFromItsKeyThroughTheResolvedKey(Fixture f) {
    f.put("a", "1");
    f.put("c", "1");
    Transaction before = f.tx();
    await(before.getKey(KeySelector.firstGreaterOrEqual(f.key("b"))));
    before.set(f.key("x"), bytes("x"));
    commitWrite(f, "a", "2");
    await(before.commit());

    Transaction resolved = f.tx();
    await(resolved.getKey(KeySelector.firstGreaterOrEqual(f.key("b"))));
    resolved.set(f.key("x"), bytes("y"));
    commitWrite(f, "c", "2");
    assertFdbError(FdbErrors.NOT_COMMITTED, resolved.commit());
  }
}
