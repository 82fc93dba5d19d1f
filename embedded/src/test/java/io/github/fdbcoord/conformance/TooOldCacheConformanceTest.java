package io.github.fdbcoord.conformance;

import com.apple.foundationdb.KeySelector;
import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.MutationType;
import com.apple.foundationdb.Transaction;
import io.github.fdbcoord.fdb.FdbErrors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestTemplate;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

import static io.github.fdbcoord.conformance.FdbAssertions.assertFdbError;
import static io.github.fdbcoord.conformance.FdbAssertions.await;
import static io.github.fdbcoord.conformance.FdbAssertions.keys;
import static io.github.fdbcoord.conformance.Fixture.bytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * Reads of a transaction whose read version has left the 5-second MVCC window. FoundationDB's
 * read-your-writes client (fdbclient/ReadYourWrites.actor.cpp, SnapshotCache.h, RYWIterator.cpp)
 * answers a read from what the transaction already knows, its cache of what storage answered it
 * (keys it read, ranges it read through) and its own writes, and only a read that reaches storage
 * fails 1007 {@code transaction_too_old}. Each test waits out the window once and checks many
 * transactions prepared before the wait.
 */
@ExtendWith(EngineExtension.class)
@Tag("slow")
class TooOldCacheConformanceTest {
  private static final long PAST_WINDOW_MILLIS = 6_000;

  private static byte[] le(long v) {
    return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array();
  }

  private static void waitOutTheWindow(Fixture f) throws InterruptedException {
    Thread.sleep(PAST_WINDOW_MILLIS);
    // Versions advance with time, but on an idle engine a commit makes sure they have.
    f.put("tick", "1");
  }

  private static List<String> names(Fixture f, List<KeyValue> kvs) {
    return keys(kvs, f.prefix().length);
  }

  @TestTemplate
  void keysAndRangesTheTransactionReadOrWroteStillAnswerAfterTheWindow(Fixture f) throws InterruptedException {
    f.put("k1", "v1");
    f.put("w2", "old");
    f.put("c/1", "x");
    f.put("ra/1", "a1");
    f.put("ra/2", "a2");
    f.put("ra/3", "a3");
    f.put("rb/1", "b1");
    f.put("rb/2", "b2");
    f.put("rb/3", "b3");
    f.put("never", "n");
    f.put(f.key("m1"), le(1));
    f.put(f.key("m2"), le(5));

    Transaction tr = f.tx();
    assertArrayEquals(bytes("v1"), await(tr.get(f.key("k1"))));
    assertNull(await(tr.get(f.key("absent"))));
    tr.set(f.key("w1"), bytes("x"));
    tr.clear(f.key("w2"));
    tr.clear(f.key("c/"), f.key("c0"));
    assertEquals(List.of("ra/1", "ra/2", "ra/3"), names(f, await(tr.getRange(f.key("ra/"), f.key("ra0")).asList())));
    assertEquals(List.of("rb/1", "rb/2"), names(f, await(tr.getRange(f.key("rb/"), f.key("rb0"), 2).asList())));
    tr.mutate(MutationType.ADD, f.key("m1"), le(1));
    assertArrayEquals(le(5), await(tr.get(f.key("m2"))));
    tr.mutate(MutationType.ADD, f.key("m2"), le(1));

    // A transaction that so far only read its own write has no read version yet.
    Transaction blind = f.tx();
    blind.set(f.key("own"), bytes("o"));
    assertArrayEquals(bytes("o"), await(blind.get(f.key("own"))));

    waitOutTheWindow(f);

    // Keys it read, present or absent, serializable or snapshot.
    assertArrayEquals(bytes("v1"), await(tr.get(f.key("k1"))));
    assertArrayEquals(bytes("v1"), await(tr.snapshot().get(f.key("k1"))));
    assertNull(await(tr.get(f.key("absent"))));
    // Keys it set, cleared, or cleared with a range; a range read inside its range clear.
    assertArrayEquals(bytes("x"), await(tr.get(f.key("w1"))));
    assertNull(await(tr.get(f.key("w2"))));
    assertNull(await(tr.get(f.key("c/1"))));
    assertEquals(List.of(), await(tr.getRange(f.key("c/"), f.key("c0")).asList()));
    // Keys and sub-ranges of a range it read completely, forward and reverse, and selectors in it.
    assertArrayEquals(bytes("a2"), await(tr.get(f.key("ra/2"))));
    assertNull(await(tr.get(f.key("ra/15"))));
    assertEquals(List.of("ra/1", "ra/2", "ra/3"), names(f, await(tr.getRange(f.key("ra/"), f.key("ra0")).asList())));
    assertEquals(List.of("ra/3", "ra/2", "ra/1"),
        names(f, await(tr.getRange(f.key("ra/"), f.key("ra0"), 0, true).asList())));
    assertEquals(List.of("ra/2", "ra/3"), names(f, await(tr.getRange(f.key("ra/2"), f.key("ra0")).asList())));
    assertArrayEquals(f.key("ra/2"), await(tr.getKey(KeySelector.firstGreaterThan(f.key("ra/1")))));
    assertArrayEquals(f.key("ra/2"), await(tr.getKey(KeySelector.lastLessThan(f.key("ra/3")))));
    // A range read stopped by its limit knows only the part it returned.
    assertArrayEquals(bytes("b2"), await(tr.get(f.key("rb/2"))));
    assertEquals(List.of("rb/1", "rb/2"), names(f, await(tr.getRange(f.key("rb/"), f.key("rb0"), 2).asList())));
    assertFdbError(FdbErrors.TRANSACTION_TOO_OLD, tr.get(f.key("rb/3")));
    assertFdbError(FdbErrors.TRANSACTION_TOO_OLD, tr.getRange(f.key("rb/"), f.key("rb0")).asList());
    assertFdbError(FdbErrors.TRANSACTION_TOO_OLD, tr.getKey(KeySelector.firstGreaterThan(f.key("rb/2"))));
    // A key it never read reaches storage.
    assertFdbError(FdbErrors.TRANSACTION_TOO_OLD, tr.get(f.key("never")));
    assertFdbError(FdbErrors.TRANSACTION_TOO_OLD, tr.getRange(f.key("k1"), f.key("w0")).asList());
    // An atomic operation needs its base: known only if the transaction read the key.
    assertFdbError(FdbErrors.TRANSACTION_TOO_OLD, tr.get(f.key("m1")));
    assertArrayEquals(le(6), await(tr.get(f.key("m2"))));
    // A failed read does not stop the others; the commit is too old.
    assertArrayEquals(bytes("v1"), await(tr.get(f.key("k1"))));
    assertFdbError(FdbErrors.TRANSACTION_TOO_OLD, tr.commit());

    // Its read version is taken by the first read that reaches storage, now.
    assertArrayEquals(bytes("o"), await(blind.get(f.key("own"))));
    assertArrayEquals(bytes("v1"), await(blind.get(f.key("k1"))));
    await(blind.commit());
    assertEquals("o", f.read("own"));
  }

  @TestTemplate
  void snapshotReadsFillTheCacheAndWithoutReadYourWritesEveryReadReachesStorage(Fixture f)
      throws InterruptedException {
    f.put("s1", "v1");
    f.put("w", "old");
    f.put("sr/1", "r1");
    f.put("sr/2", "r2");
    f.put("gk/1", "g1");
    f.put("gk/2", "g2");

    // Snapshot reads, own writes seen (the default): they fill the cache like any read.
    Transaction snap = f.tx();
    assertArrayEquals(bytes("v1"), await(snap.snapshot().get(f.key("s1"))));
    assertEquals(2, await(snap.snapshot().getRange(f.key("sr/"), f.key("sr0")).asList()).size());
    snap.set(f.key("w"), bytes("x"));
    assertArrayEquals(f.key("gk/1"), await(snap.getKey(KeySelector.firstGreaterOrEqual(f.key("gk/")))));

    // SNAPSHOT_RYW_DISABLE: snapshot reads answer from the cache alone, not from the writes.
    Transaction noSnapRyw = f.tx();
    noSnapRyw.options().setSnapshotRywDisable();
    assertArrayEquals(bytes("v1"), await(noSnapRyw.snapshot().get(f.key("s1"))));
    noSnapRyw.set(f.key("w"), bytes("x"));

    // READ_YOUR_WRITES_DISABLE: no cache at all.
    Transaction noRyw = f.tx();
    noRyw.options().setReadYourWritesDisable();
    assertArrayEquals(bytes("v1"), await(noRyw.get(f.key("s1"))));
    assertEquals(2, await(noRyw.getRange(f.key("sr/"), f.key("sr0")).asList()).size());

    waitOutTheWindow(f);

    assertArrayEquals(bytes("v1"), await(snap.get(f.key("s1"))));
    assertArrayEquals(bytes("v1"), await(snap.snapshot().get(f.key("s1"))));
    assertEquals(List.of("sr/1", "sr/2"), names(f, await(snap.getRange(f.key("sr/"), f.key("sr0")).asList())));
    assertArrayEquals(bytes("x"), await(snap.snapshot().get(f.key("w"))));
    // A getKey knows from its selector's key through the key it found.
    assertArrayEquals(bytes("g1"), await(snap.get(f.key("gk/1"))));
    assertArrayEquals(f.key("gk/1"), await(snap.getKey(KeySelector.firstGreaterOrEqual(f.key("gk/")))));
    assertFdbError(FdbErrors.TRANSACTION_TOO_OLD, snap.get(f.key("gk/2")));

    assertArrayEquals(bytes("v1"), await(noSnapRyw.snapshot().get(f.key("s1"))));
    assertArrayEquals(bytes("v1"), await(noSnapRyw.get(f.key("s1"))));
    assertArrayEquals(bytes("x"), await(noSnapRyw.get(f.key("w"))));
    assertFdbError(FdbErrors.TRANSACTION_TOO_OLD, noSnapRyw.snapshot().get(f.key("w")));

    assertFdbError(FdbErrors.TRANSACTION_TOO_OLD, noRyw.get(f.key("s1")));
    assertFdbError(FdbErrors.TRANSACTION_TOO_OLD, noRyw.snapshot().get(f.key("s1")));
    assertFdbError(FdbErrors.TRANSACTION_TOO_OLD, noRyw.getRange(f.key("sr/"), f.key("sr0")).asList());
  }
}
