package io.github.fdbcoord.conformance;

import com.apple.foundationdb.MutationType;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.Transaction;
import io.github.fdbcoord.fdb.FdbErrors;
import org.junit.jupiter.api.TestTemplate;
import org.junit.jupiter.api.extension.ExtendWith;

import static io.github.fdbcoord.conformance.FdbAssertions.assertFdbError;
import static io.github.fdbcoord.conformance.FdbAssertions.await;
import static io.github.fdbcoord.conformance.Fixture.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Snapshot reads: no read conflicts, own writes visible unless snapshot RYW is disabled. */
@ExtendWith(EngineExtension.class)
class SnapshotConformanceTest {

  @TestTemplate
  void snapshotGetAddsNoReadConflict(Fixture f) {
    f.put("k", "0");
    Transaction tr = f.tx();
    assertEquals("0", Fixture.string(await(tr.snapshot().get(f.key("k")))));
    f.put("k", "1");
    tr.set(f.key("x"), bytes("x"));
    await(tr.commit());
  }

  @TestTemplate
  void snapshotRangeReadAddsNoReadConflict(Fixture f) {
    f.put("a", "0");
    Transaction tr = f.tx();
    await(tr.snapshot().getRange(f.range()).asList());
    f.put("b", "1");
    f.put("a", "1");
    tr.set(f.key("x"), bytes("x"));
    await(tr.commit());
  }

  @TestTemplate
  void snapshotGetKeyAddsNoReadConflict(Fixture f) {
    f.put("a", "0");
    f.put("c", "0");
    Transaction tr = f.tx();
    await(tr.snapshot().getKey(com.apple.foundationdb.KeySelector.firstGreaterThan(f.key("a"))));
    f.put("b", "1");
    tr.set(f.key("x"), bytes("x"));
    await(tr.commit());
  }

  @TestTemplate
  void aLaterSerializableReadOfTheSameKeyStillConflicts(Fixture f) {
    f.put("k", "0");
    Transaction tr = f.tx();
    await(tr.snapshot().get(f.key("k")));
    await(tr.get(f.key("k")));
    f.put("k", "1");
    tr.set(f.key("x"), bytes("x"));
    assertFdbError(FdbErrors.NOT_COMMITTED, tr.commit());
  }

  @TestTemplate
  void snapshotReadsSeeOwnWritesByDefault(Fixture f) {
    f.put("a", "db");
    f.put("b", "db");
    Transaction tr = f.tx();
    tr.set(f.key("a"), bytes("mine"));
    tr.clear(f.key("b"));
    tr.set(f.key("c"), bytes("new"));
    assertEquals("mine", Fixture.string(await(tr.snapshot().get(f.key("a")))));
    assertNull(await(tr.snapshot().get(f.key("b"))));
    assertEquals(2, await(tr.snapshot().getRange(f.range()).asList()).size());
  }

  @TestTemplate
  void snapshotReadSeesOwnAtomicOperationAppliedToTheStoredValue(Fixture f) {
    f.put(f.key("n"), new byte[] {5});
    Transaction tr = f.tx();
    tr.mutate(MutationType.ADD, f.key("n"), new byte[] {2});
    assertEquals(7, await(tr.snapshot().get(f.key("n")))[0]);
    f.put(f.key("n"), new byte[] {50});
    tr.set(f.key("x"), bytes("x"));
    await(tr.commit());
    assertEquals(52, f.read(f.key("n"))[0]);
  }

  @TestTemplate
  void snapshotRywDisableHidesOwnWritesFromSnapshotReadsOnly(Fixture f) {
    f.put("a", "db");
    Transaction tr = f.tx();
    tr.options().setSnapshotRywDisable();
    tr.set(f.key("a"), bytes("mine"));
    tr.set(f.key("b"), bytes("mine"));
    assertEquals("db", Fixture.string(await(tr.snapshot().get(f.key("a")))));
    assertNull(await(tr.snapshot().get(f.key("b"))));
    assertEquals(1, await(tr.snapshot().getRange(f.range()).asList()).size());
    assertEquals("mine", Fixture.string(await(tr.get(f.key("a")))));
  }

  @TestTemplate
  void snapshotRywOptionsNest(Fixture f) {
    f.put("a", "db");
    Transaction twice = f.tx();
    twice.options().setSnapshotRywDisable();
    twice.options().setSnapshotRywDisable();
    twice.options().setSnapshotRywEnable();
    twice.set(f.key("a"), bytes("mine"));
    assertEquals("db", Fixture.string(await(twice.snapshot().get(f.key("a")))),
        "two disables and one enable leave snapshot RYW disabled");

    Transaction balanced = f.tx();
    balanced.options().setSnapshotRywDisable();
    balanced.options().setSnapshotRywEnable();
    balanced.set(f.key("a"), bytes("mine"));
    assertEquals("mine", Fixture.string(await(balanced.snapshot().get(f.key("a")))));
  }

  @TestTemplate
  void snapshotViewReportsItselfAndSharesTheTransaction(Fixture f) {
    Transaction tr = f.tx();
    ReadTransaction snap = tr.snapshot();
    assertTrue(snap.isSnapshot());
    assertFalse(tr.isSnapshot());
    assertEquals(await(tr.getReadVersion()), await(snap.getReadVersion()));
  }

  @TestTemplate
  void addReadConflictIfNotSnapshotOnlyAddsOnTheTransaction(Fixture f) {
    Transaction viaSnapshot = f.tx();
    await(viaSnapshot.getReadVersion());
    assertFalse(viaSnapshot.snapshot().addReadConflictKeyIfNotSnapshot(f.key("k")));
    assertFalse(viaSnapshot.snapshot().addReadConflictRangeIfNotSnapshot(f.key("a"), f.key("z")));
    viaSnapshot.set(f.key("x"), bytes("x"));

    Transaction direct = f.tx();
    await(direct.getReadVersion());
    assertTrue(direct.addReadConflictKeyIfNotSnapshot(f.key("k")));
    direct.set(f.key("y"), bytes("y"));

    f.put("k", "1");
    await(viaSnapshot.commit());
    assertFdbError(FdbErrors.NOT_COMMITTED, direct.commit());
  }

  @TestTemplate
  void snapshotReadPlusManualConflictKeyConflicts(Fixture f) {
    Transaction tr = f.tx();
    await(tr.snapshot().get(f.key("k")));
    tr.addReadConflictKey(f.key("k"));
    tr.set(f.key("x"), bytes("x"));
    f.put("k", "1");
    assertFdbError(FdbErrors.NOT_COMMITTED, tr.commit());
  }
}
