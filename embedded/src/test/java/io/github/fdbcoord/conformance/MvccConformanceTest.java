package io.github.fdbcoord.conformance;

import com.apple.foundationdb.Transaction;
import org.junit.jupiter.api.TestTemplate;
import org.junit.jupiter.api.extension.ExtendWith;

import static io.github.fdbcoord.conformance.FdbAssertions.await;
import static io.github.fdbcoord.conformance.Fixture.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Versions and multi-version reads. (1007 transaction_too_old is in LimitsAndErrorsConformanceTest.) */
@ExtendWith(EngineExtension.class)
class MvccConformanceTest {

  @TestTemplate
  void readsSeeOneSnapshotAtTheReadVersion(Fixture f) {
    f.put("a", "1");
    Transaction tr = f.tx();
    long rv = await(tr.getReadVersion());
    assertEquals("1", Fixture.string(await(tr.get(f.key("a")))));
    f.put("a", "2");
    f.put("b", "2");
    assertEquals("1", Fixture.string(await(tr.get(f.key("a")))));
    assertNull(await(tr.get(f.key("b"))));
    assertEquals(1, await(tr.getRange(f.range()).asList()).size());
    assertEquals(rv, (long) await(tr.getReadVersion()), "the read version does not change within a transaction");
  }

  @TestTemplate
  void aNewTransactionReadsAtOrAfterTheLastCommit(Fixture f) {
    Transaction writer = f.tx();
    writer.set(f.key("a"), bytes("1"));
    await(writer.commit());
    long committed = writer.getCommittedVersion();
    assertTrue(committed > 0);
    Transaction reader = f.tx();
    assertTrue(await(reader.getReadVersion()) >= committed);
    assertEquals("1", Fixture.string(await(reader.get(f.key("a")))));
  }

  @TestTemplate
  void commitVersionsIncreaseAndExceedTheReadVersion(Fixture f) {
    long last = 0;
    for (int i = 0; i < 5; i++) {
      Transaction tr = f.tx();
      long rv = await(tr.getReadVersion());
      tr.set(f.key("a"), bytes("" + i));
      await(tr.commit());
      assertTrue(tr.getCommittedVersion() > rv);
      assertTrue(tr.getCommittedVersion() > last);
      last = tr.getCommittedVersion();
    }
  }

  @TestTemplate
  void versionsAdvanceAboutOneMillionPerSecond(Fixture f) throws InterruptedException {
    Transaction first = f.tx();
    first.set(f.key("a"), bytes("1"));
    long startedBefore = System.nanoTime();
    await(first.commit());
    long finishedFirst = System.nanoTime();
    Thread.sleep(1000);
    Transaction second = f.tx();
    second.set(f.key("a"), bytes("2"));
    long startedSecond = System.nanoTime();
    await(second.commit());
    long finishedSecond = System.nanoTime();
    long delta = second.getCommittedVersion() - first.getCommittedVersion();
    long minMicros = (startedSecond - finishedFirst) / 1000;
    long maxMicros = (finishedSecond - startedBefore) / 1000;
    assertTrue(delta >= minMicros * 8 / 10 && delta <= maxMicros * 12 / 10 + 100_000,
        "versions should advance ~1,000,000 per second: " + delta + " versions in " + minMicros + ".." + maxMicros + " us");
  }

  @TestTemplate
  void setReadVersionReadsAnOlderSnapshot(Fixture f) {
    Transaction one = f.tx();
    one.set(f.key("a"), bytes("1"));
    await(one.commit());
    f.put("a", "2");
    Transaction old = f.tx();
    old.setReadVersion(one.getCommittedVersion());
    assertEquals(one.getCommittedVersion(), (long) await(old.getReadVersion()));
    assertEquals("1", Fixture.string(await(old.get(f.key("a")))));
    Transaction before = f.tx();
    before.setReadVersion(one.getCommittedVersion() - 1);
    assertNull(await(before.get(f.key("a"))), "the commit is not visible one version earlier");
  }

  @TestTemplate
  void getRangeAndGetAgreeOnTheSnapshot(Fixture f) {
    for (int i = 0; i < 10; i++) {
      f.put("k" + i, "" + i);
    }
    Transaction tr = f.tx();
    await(tr.getReadVersion());
    f.db().run(t -> {
      t.clear(f.key("k0"), f.key("k5"));
      return null;
    });
    assertEquals(10, await(tr.getRange(f.range()).asList()).size());
    assertEquals("3", Fixture.string(await(tr.get(f.key("k3")))));
  }
}
