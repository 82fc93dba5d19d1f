package io.github.fdbcoord.conformance;

import com.apple.foundationdb.FDBException;
import com.apple.foundationdb.KeySelector;
import com.apple.foundationdb.MutationType;
import com.apple.foundationdb.StreamingMode;
import com.apple.foundationdb.Transaction;
import io.github.fdbcoord.fdb.FdbErrors;
import org.junit.jupiter.api.TestTemplate;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import static io.github.fdbcoord.conformance.FdbAssertions.assertCode;
import static io.github.fdbcoord.conformance.FdbAssertions.await;
import static io.github.fdbcoord.conformance.Fixture.bytes;
import static io.github.fdbcoord.conformance.Fixture.filled;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Where FoundationDB's client fails an operation on a transaction that is cancelled, timed out, used
 * after its commit or holding a deferred error, and with which code (issue 35; the rules and their
 * sources are in docs/embedded-conformance.md, "Error paths"). Each failure is checked both ways a
 * caller meets it: waiting on the future ({@code join}, a blocking range iterator) and in a dependent
 * stage of it.
 */
@ExtendWith(EngineExtension.class)
class ErrorPathConformanceTest {
  /** exact_mode_without_limits (fdb_c.cpp): EXACT streaming mode with neither a row nor a byte limit. */
  static final int EXACT_MODE_WITHOUT_LIMITS = 2210;
  /** A code FoundationDB does not know; onError rethrows it on a live transaction. */
  private static final int UNKNOWN_CODE = 4167;

  /** Every read-side call FoundationDB checks a transaction's state in, by name, on {@code tr}. */
  static Map<String, Supplier<CompletableFuture<?>>> reads(Fixture f, Transaction tr) {
    Map<String, Supplier<CompletableFuture<?>>> calls = new LinkedHashMap<>();
    calls.put("get", () -> tr.get(f.key("k")));
    calls.put("snapshot get", () -> tr.snapshot().get(f.key("k")));
    calls.put("getKey", () -> tr.getKey(KeySelector.firstGreaterOrEqual(f.key("k"))));
    calls.put("getRange", () -> tr.getRange(f.range()).asList());
    calls.put("snapshot getRange", () -> tr.snapshot().getRange(f.range(), 10, true).asList());
    calls.put("getReadVersion", tr::getReadVersion);
    calls.put("getEstimatedRangeSizeBytes", () -> tr.getEstimatedRangeSizeBytes(f.range()));
    calls.put("getRangeSplitPoints", () -> tr.getRangeSplitPoints(f.range(), 1_000));
    calls.put("watch", () -> tr.watch(f.key("w")));
    return calls;
  }

  /** Asserts that {@code call} fails with {@code code} when waited on and in a dependent stage. */
  static void assertFailsBothWays(String what, int code, Supplier<? extends CompletableFuture<?>> call) {
    CompletableFuture<?> waited = call.get();
    try {
      Object value = waited.orTimeout(FdbAssertions.TIMEOUT_SECONDS, TimeUnit.SECONDS).join();
      fail(what + ": expected FDB error " + code + " but got " + FdbAssertions.describe(value));
    } catch (CompletionException e) {
      assertCode(code, e.getCause(), what + " (waited on)");
    }
    CompletableFuture<Integer> seen = call.get().handle((v, t) -> t == null ? null : FdbErrors.codeOf(t));
    assertEquals(Integer.valueOf(code), await(seen), what + " (in a dependent stage)");
  }

  /** Asserts that a blocking iteration of the range fails with {@code code} at its first {@code hasNext}. */
  static void assertIterationFails(String what, int code, Iterable<?> range) {
    Iterator<?> it = range.iterator();
    try {
      boolean any = it.hasNext();
      fail(what + ": expected FDB error " + code + " but hasNext answered " + any);
    } catch (RuntimeException e) {
      assertCode(code, e, what + " (iterated)");
    }
  }

  private static void assertEveryReadFails(Fixture f, Transaction tr, int code) {
    reads(f, tr).forEach((name, call) -> assertFailsBothWays(name, code, call));
    assertIterationFails("getRange", code, tr.getRange(f.range()));
  }

  // ------------------------------------------------------------ 1. storage metrics on a cancelled transaction

  @TestTemplate
  void storageMetricsReadsOfACancelledTransactionFail1025(Fixture f) {
    f.put("k", "v");
    Transaction tr = f.tx();
    tr.cancel();
    assertFailsBothWays("getRangeSplitPoints", FdbErrors.TRANSACTION_CANCELLED,
        () -> tr.getRangeSplitPoints(f.range(), 1_000));
    assertFailsBothWays("getEstimatedRangeSizeBytes", FdbErrors.TRANSACTION_CANCELLED,
        () -> tr.getEstimatedRangeSizeBytes(f.range()));
  }

  /** The same check (the reset promise is set) covers every read, the versionstamp and the commit. */
  @TestTemplate
  void everyReadOfACancelledTransactionFails1025(Fixture f) {
    Transaction tr = f.tx();
    tr.set(f.key("k"), bytes("v"));
    tr.cancel();
    assertEveryReadFails(f, tr, FdbErrors.TRANSACTION_CANCELLED);
    assertFailsBothWays("getVersionstamp", FdbErrors.TRANSACTION_CANCELLED, tr::getVersionstamp);
    assertFailsBothWays("commit", FdbErrors.TRANSACTION_CANCELLED, tr::commit);
  }

  @TestTemplate
  void everyReadOfATimedOutTransactionFails1031(Fixture f) {
    Transaction tr = f.tx();
    tr.options().setTimeout(1);
    awaitTimedOut(f, tr);
    assertEveryReadFails(f, tr, FdbErrors.TRANSACTION_TIMED_OUT);
    assertFailsBothWays("commit", FdbErrors.TRANSACTION_TIMED_OUT, tr::commit);
  }

  /** checkUsedDuringCommit() comes first in every storage-metrics read too. */
  @TestTemplate
  void storageMetricsReadsAfterCommitFail2017(Fixture f) {
    Transaction tr = f.tx();
    tr.set(f.key("k"), bytes("v"));
    await(tr.commit());
    assertFailsBothWays("getRangeSplitPoints", FdbErrors.USED_DURING_COMMIT,
        () -> tr.getRangeSplitPoints(f.range(), 1_000));
    assertFailsBothWays("getEstimatedRangeSizeBytes", FdbErrors.USED_DURING_COMMIT,
        () -> tr.getEstimatedRangeSizeBytes(f.range()));
  }

  /** Neither the size nor the committed version checks the transaction's state. */
  @TestTemplate
  void approximateSizeAndCommittedVersionAnswerOnACancelledTransaction(Fixture f) {
    Transaction tr = f.tx();
    tr.set(f.key("k"), filled(1_000, (byte) 'v'));
    tr.cancel();
    assertTrue(await(tr.getApproximateSize()) >= 1_000);
    assertEquals(-1L, tr.getCommittedVersion());
  }

  // ------------------------------------------------------------ 2. EXACT without a limit

  @TestTemplate
  void exactModeWithoutALimitFails2210(Fixture f) {
    f.put("k", "v");
    Transaction tr = f.tx();
    assertFailsBothWays("getRange EXACT", EXACT_MODE_WITHOUT_LIMITS,
        () -> tr.getRange(f.range(), 0, false, StreamingMode.EXACT).asList());
    assertFailsBothWays("reverse getRange EXACT", EXACT_MODE_WITHOUT_LIMITS,
        () -> tr.snapshot().getRange(f.range(), 0, true, StreamingMode.EXACT).asList());
    assertIterationFails("getRange EXACT", EXACT_MODE_WITHOUT_LIMITS,
        tr.getRange(f.range(), 0, false, StreamingMode.EXACT));
    assertEquals(1, await(tr.getRange(f.range(), 1, false, StreamingMode.EXACT).asList()).size());
  }

  /** fdb_c checks the arguments before the transaction sees the call, so they win over its state. */
  @TestTemplate
  void exactModeWithoutALimitFails2210EvenOnACancelledTransaction(Fixture f) {
    Transaction tr = f.tx();
    tr.cancel();
    assertFailsBothWays("getRange EXACT", EXACT_MODE_WITHOUT_LIMITS,
        () -> tr.getRange(f.range(), 0, false, StreamingMode.EXACT).asList());
  }

  @TestTemplate
  void exactModeErrorCarriesFoundationDbsMessage(Fixture f) {
    Transaction tr = f.tx();
    try {
      await(tr.getRange(f.range(), 0, false, StreamingMode.EXACT).asList());
      fail("expected 2210");
    } catch (FDBException e) {
      assertEquals("EXACT streaming mode requires limits, but none were given", e.getMessage());
    }
  }

  // ------------------------------------------------------------ 3. onError(0)

  @TestTemplate
  void onErrorWithCodeZeroFails2000(Fixture f) {
    assertFailsBothWays("onError(0)", FdbErrors.CLIENT_INVALID_OPERATION,
        () -> f.tx().onError(new FDBException("success", 0)));
  }

  // ------------------------------------------------------------ 4. onError on a cancelled transaction

  @TestTemplate
  void onErrorOfACancelledTransactionFails1025WhateverTheCode(Fixture f) {
    for (int code : new int[] {FdbErrors.NOT_COMMITTED, FdbErrors.TRANSACTION_TOO_OLD,
        FdbErrors.COMMIT_UNKNOWN_RESULT, FdbErrors.VALUE_TOO_LARGE, UNKNOWN_CODE, 0}) {
      assertFailsBothWays("onError(" + code + ")", FdbErrors.TRANSACTION_CANCELLED, () -> {
        Transaction tr = f.tx();
        tr.set(f.key("k"), bytes("v"));
        tr.cancel();
        return tr.onError(new FDBException("given", code));
      });
    }
  }

  @TestTemplate
  void onErrorOfALiveTransactionRethrowsAnUnknownCode(Fixture f) {
    assertFailsBothWays("onError(4167)", UNKNOWN_CODE, () -> f.tx().onError(new FDBException("given", UNKNOWN_CODE)));
  }

  /** onError does not check deferred errors (ThreadSafeTransaction::onError), only the reset promise. */
  @TestTemplate
  void onErrorOfACancelledTransactionWithADeferredErrorFails1025(Fixture f) {
    assertFailsBothWays("onError(1020)", FdbErrors.TRANSACTION_CANCELLED, () -> {
      Transaction tr = f.tx();
      tr.set(f.key("k"), filled(100_001, (byte) 'v'));
      tr.cancel();
      return tr.onError(new FDBException("given", FdbErrors.NOT_COMMITTED));
    });
  }

  @TestTemplate
  void onErrorRetriesDespiteADeferredError(Fixture f) {
    Transaction tr = f.tx();
    tr.set(f.key("k"), filled(100_001, (byte) 'v'));
    Transaction retried = await(tr.onError(new FDBException("given", FdbErrors.NOT_COMMITTED)));
    retried.set(f.key("k"), bytes("v"));
    await(retried.commit());
    assertEquals("v", f.read("k"));
  }

  // ------------------------------------------------------------ 5. getVersionstamp with a deferred error

  @TestTemplate
  void versionstampWithAPendingDeferredErrorFailsWithIt(Fixture f) {
    Transaction tr = f.tx();
    long rv = await(tr.getReadVersion());
    tr.setReadVersion(rv);
    tr.mutate(MutationType.SET_VERSIONSTAMPED_VALUE, f.key("v"),
        io.github.fdbcoord.fdb.Versionstamps.rawValue(new byte[0]));
    assertFailsBothWays("getVersionstamp (before the commit)", FdbErrors.READ_VERSION_ALREADY_SET, tr::getVersionstamp);
    assertFailsBothWays("getApproximateSize", FdbErrors.READ_VERSION_ALREADY_SET, tr::getApproximateSize);
    assertFailsBothWays("commit", FdbErrors.READ_VERSION_ALREADY_SET, tr::commit);
    assertFailsBothWays("getVersionstamp (after the commit)", FdbErrors.READ_VERSION_ALREADY_SET, tr::getVersionstamp);
  }

  // ------------------------------------------------------------ 6. a deferred error wins over cancellation

  @TestTemplate
  void aDeferredValueTooLargeWinsOverCancellation(Fixture f) {
    Transaction tr = f.tx();
    tr.set(f.key("k"), filled(100_001, (byte) 'v'));
    tr.cancel();
    assertEveryReadFails(f, tr, FdbErrors.VALUE_TOO_LARGE);
    assertFailsBothWays("commit", FdbErrors.VALUE_TOO_LARGE, tr::commit);
  }

  @TestTemplate
  void aDeferredAtomicOperandTooLargeWinsOverCancellation(Fixture f) {
    Transaction tr = f.tx();
    tr.mutate(MutationType.ADD, f.key("k"), filled(100_001, (byte) 1));
    tr.cancel();
    assertFailsBothWays("commit", FdbErrors.VALUE_TOO_LARGE, tr::commit);
    assertFailsBothWays("getRangeSplitPoints", FdbErrors.VALUE_TOO_LARGE,
        () -> tr.getRangeSplitPoints(f.range(), 1_000));
  }

  @TestTemplate
  void aDeferredReadVersionAlreadySetWinsOverCancellation(Fixture f) {
    Transaction tr = f.tx();
    long rv = await(tr.getReadVersion());
    tr.setReadVersion(rv);
    tr.cancel();
    assertEveryReadFails(f, tr, FdbErrors.READ_VERSION_ALREADY_SET);
    assertFailsBothWays("commit", FdbErrors.READ_VERSION_ALREADY_SET, tr::commit);
  }

  /** The deferred error is checked before checkUsedDuringCommit() too. */
  @TestTemplate
  void aDeferredErrorWinsOverUsedDuringCommit(Fixture f) {
    Transaction tr = f.tx();
    tr.set(f.key("k"), bytes("v"));
    await(tr.commit());
    // The read version is known, which NativeAPI's setVersion checks before the value.
    tr.setReadVersion(-1);
    assertFailsBothWays("get", FdbErrors.READ_VERSION_ALREADY_SET, () -> tr.get(f.key("k")));
    assertFailsBothWays("getRangeSplitPoints", FdbErrors.READ_VERSION_ALREADY_SET,
        () -> tr.getRangeSplitPoints(f.range(), 1_000));
    assertFailsBothWays("commit", FdbErrors.READ_VERSION_ALREADY_SET, tr::commit);
  }

  // ------------------------------------------------------------ 7. deferred errors at every checked call

  @TestTemplate
  void aDeferredVersionInvalidFailsEveryRead(Fixture f) {
    Transaction tr = f.tx();
    tr.setReadVersion(-1);
    assertEveryReadFails(f, tr, FdbErrors.VERSION_INVALID);
    assertFailsBothWays("commit", FdbErrors.VERSION_INVALID, tr::commit);
  }

  @TestTemplate
  void aDeferredValueTooLargeFailsEveryRead(Fixture f) {
    Transaction tr = f.tx();
    tr.set(f.key("k"), filled(100_001, (byte) 'v'));
    assertEveryReadFails(f, tr, FdbErrors.VALUE_TOO_LARGE);
    assertFailsBothWays("getApproximateSize", FdbErrors.VALUE_TOO_LARGE, tr::getApproximateSize);
    assertFailsBothWays("getVersionstamp", FdbErrors.VALUE_TOO_LARGE, tr::getVersionstamp);
  }

  // ------------------------------------------------------------ the same rules, found by the differential test

  /** Options are set on the network thread: a cancelled transaction takes them, a deferred error skips them. */
  @TestTemplate
  void optionsOfACancelledTransactionAreTakenAndAfterADeferredErrorSkipped(Fixture f) {
    Transaction cancelled = f.tx();
    cancelled.cancel();
    cancelled.options().setRetryLimit(0);
    cancelled.options().setSnapshotRywDisable();
    assertFailsBothWays("get", FdbErrors.TRANSACTION_CANCELLED, () -> cancelled.get(f.key("k")));

    Transaction deferred = f.tx();
    deferred.set(f.key("k"), filled(100_001, (byte) 'v'));
    deferred.options().setRetryLimit(0);
    // With the limit taken, onError would fail; skipped, it retries.
    Transaction retried = f.own(await(deferred.onError(new FDBException("given", FdbErrors.NOT_COMMITTED))));
    retried.set(f.key("k"), bytes("v"));
    await(retried.commit());
    assertEquals("v", f.read("k"));
  }

  /** A write to a cancelled transaction is still checked: its deferred error wins over the cancellation. */
  @TestTemplate
  void aWriteErrorAfterCancelWinsOverIt(Fixture f) {
    Transaction tr = f.tx();
    tr.cancel();
    tr.set(f.key("k"), filled(100_001, (byte) 'v'));
    assertFailsBothWays("get", FdbErrors.VALUE_TOO_LARGE, () -> tr.get(f.key("k")));
    assertFailsBothWays("commit", FdbErrors.VALUE_TOO_LARGE, tr::commit);
  }

  @TestTemplate
  void aRetryKeepsTheCommittedVersionAndBreaksTheVersionstamp(Fixture f) {
    Transaction tr = f.tx();
    tr.set(f.key("k"), bytes("v"));
    await(tr.commit());
    long committed = tr.getCommittedVersion();
    Transaction retried = f.own(await(tr.onError(new FDBException("given", FdbErrors.NOT_COMMITTED))));
    assertEquals(committed, retried.getCommittedVersion());
    CompletableFuture<byte[]> stamp = retried.getVersionstamp();
    Transaction again = f.own(await(retried.onError(new FDBException("given", FdbErrors.NOT_COMMITTED))));
    assertFailsBothWays("getVersionstamp across onError", FdbErrors.BROKEN_PROMISE, () -> stamp);
    again.cancel();
  }

  /** An inverted or empty range answers at once: it takes no read version, so one can still be set. */
  @TestTemplate
  void aRangeEmptyOnItsFaceTakesNoReadVersion(Fixture f) {
    f.put("k", "v");
    Transaction tr = f.tx();
    assertEquals(0, await(tr.getRange(f.key("k"), f.key("k")).asList()).size());
    assertEquals(0, await(tr.getRange(f.key("z"), f.key("a"), 0, true).asList()).size());
    tr.setReadVersion(-1);
    assertFailsBothWays("get", FdbErrors.VERSION_INVALID, () -> tr.get(f.key("k")));
  }

  /** A selector the transaction's own writes resolve takes no read version either. */
  @TestTemplate
  void aSelectorResolvedByOwnWritesTakesNoReadVersion(Fixture f) {
    Transaction tr = f.tx();
    tr.set(f.key("k"), bytes("v"));
    assertEquals("k", Fixture.string(java.util.Arrays.copyOfRange(
        await(tr.getKey(KeySelector.firstGreaterOrEqual(f.key("k")))), f.prefix().length, f.key("k").length)));
    assertEquals("k", Fixture.string(java.util.Arrays.copyOfRange(
        await(tr.snapshot().getKey(KeySelector.lastLessOrEqual(f.key("k")))), f.prefix().length, f.key("k").length)));
    tr.setReadVersion(-1);
    assertFailsBothWays("get", FdbErrors.VERSION_INVALID, () -> tr.get(f.key("other")));
  }

  /** Waits for the transaction's timeout to fire: the condition is its first visible effect, a read failing 1031. */
  static void awaitTimedOut(Fixture f, Transaction tr) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(FdbAssertions.TIMEOUT_SECONDS);
    while (FdbErrors.codeOf(catching(tr.get(f.key("k")))) != FdbErrors.TRANSACTION_TIMED_OUT) {
      if (System.nanoTime() > deadline) {
        fail("the transaction's 1 ms timeout did not fire within " + FdbAssertions.TIMEOUT_SECONDS + " s");
      }
      java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
    }
  }

  private static Throwable catching(CompletableFuture<?> f) {
    try {
      await(f);
      return null;
    } catch (RuntimeException e) {
      return e;
    }
  }
}
