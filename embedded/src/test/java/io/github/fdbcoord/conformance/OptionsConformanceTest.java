package io.github.fdbcoord.conformance;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.FDBException;
import com.apple.foundationdb.Transaction;
import io.github.fdbcoord.fdb.FdbErrors;
import org.junit.jupiter.api.TestTemplate;
import org.junit.jupiter.api.extension.ExtendWith;

import static io.github.fdbcoord.conformance.FdbAssertions.assertFdbError;
import static io.github.fdbcoord.conformance.FdbAssertions.await;
import static io.github.fdbcoord.conformance.Fixture.bytes;
import static io.github.fdbcoord.conformance.Fixture.filled;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Transaction options not covered by their own area (NEXT_WRITE_NO_WRITE_CONFLICT_RANGE is in
 * ConflictConformanceTest, snapshot RYW in SnapshotConformanceTest, TIMEOUT / RETRY_LIMIT /
 * MAX_RETRY_DELAY in RetryLoopConformanceTest, system keys in LimitsAndErrorsConformanceTest) and
 * database options, which become the defaults of the database's new transactions.
 */
@ExtendWith(EngineExtension.class)
class OptionsConformanceTest {

  private static FDBException error(int code) {
    return new FDBException(FdbErrors.message(code), code);
  }

  @TestTemplate
  void sizeLimitLowersTheTransactionSizeLimit(Fixture f) {
    Transaction tr = f.tx();
    tr.options().setSizeLimit(1_000);
    tr.set(f.key("k"), filled(2_000, (byte) 'v'));
    assertFdbError(FdbErrors.TRANSACTION_TOO_LARGE, tr.commit());
    assertNull(f.read("k"));
  }

  @TestTemplate
  void sizeLimitAllowsTransactionsBelowIt(Fixture f) {
    Transaction tr = f.tx();
    tr.options().setSizeLimit(10_000);
    tr.set(f.key("k"), filled(1_000, (byte) 'v'));
    await(tr.commit());
  }

  @TestTemplate
  void databaseTransactionTimeoutAppliesToNewTransactions(Fixture f) throws InterruptedException {
    Database db = f.freshDatabase();
    db.options().setTransactionTimeout(100);
    try (Transaction tr = db.createTransaction()) {
      Thread.sleep(300);
      assertFdbError(FdbErrors.TRANSACTION_TIMED_OUT, tr.get(f.key("k")));
    }
  }

  @TestTemplate
  void transactionTimeoutOverridesTheDatabaseDefault(Fixture f) throws InterruptedException {
    Database db = f.freshDatabase();
    db.options().setTransactionTimeout(100);
    try (Transaction tr = db.createTransaction()) {
      tr.options().setTimeout(0);
      Thread.sleep(300);
      await(tr.get(f.key("k")));
    }
  }

  @TestTemplate
  void databaseRetryLimitAppliesToNewTransactions(Fixture f) {
    Database db = f.freshDatabase();
    db.options().setTransactionRetryLimit(1);
    Transaction tr = f.own(db.createTransaction());
    tr = f.own(await(tr.onError(error(FdbErrors.NOT_COMMITTED))));
    assertFdbError(FdbErrors.NOT_COMMITTED, tr.onError(error(FdbErrors.NOT_COMMITTED)));
  }

  @TestTemplate
  void databaseRetryLimitAppliesToRun(Fixture f) {
    Database db = f.freshDatabase();
    db.options().setTransactionRetryLimit(2);
    int[] attempts = {0};
    RuntimeException e = org.junit.jupiter.api.Assertions.assertThrows(RuntimeException.class, () -> db.run(tr -> {
      attempts[0]++;
      tr.get(f.key("k")).join();
      db.run(other -> {
        other.set(f.key("k"), bytes("" + attempts[0]));
        return null;
      });
      tr.set(f.key("x"), bytes("x"));
      return null;
    }));
    FdbAssertions.assertCode(FdbErrors.NOT_COMMITTED, e);
    assertEquals(3, attempts[0], "one attempt plus two retries");
  }

  @TestTemplate
  void databaseMaxRetryDelayAppliesToNewTransactions(Fixture f) {
    Database db = f.freshDatabase();
    db.options().setTransactionMaxRetryDelay(1);
    Transaction tr = f.own(db.createTransaction());
    long start = System.nanoTime();
    for (int i = 0; i < 20; i++) {
      tr = f.own(await(tr.onError(error(FdbErrors.NOT_COMMITTED))));
    }
    long millis = (System.nanoTime() - start) / 1_000_000;
    assertTrue(millis < 1_000, "20 retries with a 1 ms maximum delay took " + millis + " ms");
  }

  @TestTemplate
  void databaseSizeLimitAppliesToNewTransactions(Fixture f) {
    Database db = f.freshDatabase();
    db.options().setTransactionSizeLimit(1_000);
    try (Transaction tr = db.createTransaction()) {
      tr.set(f.key("k"), filled(2_000, (byte) 'v'));
      assertFdbError(FdbErrors.TRANSACTION_TOO_LARGE, tr.commit());
    }
  }

  @TestTemplate
  void databaseSnapshotRywDisableAppliesToNewTransactions(Fixture f) {
    Database db = f.freshDatabase();
    db.options().setSnapshotRywDisable();
    try (Transaction tr = db.createTransaction()) {
      tr.set(f.key("k"), bytes("mine"));
      assertNull(await(tr.snapshot().get(f.key("k"))));
      assertEquals("mine", Fixture.string(await(tr.get(f.key("k")))));
    }
  }

  @TestTemplate
  void optionsSetOnATransactionDoNotLeakIntoOthers(Fixture f) throws InterruptedException {
    Transaction limited = f.tx();
    limited.options().setTimeout(50);
    Transaction other = f.tx();
    Thread.sleep(150);
    await(other.get(f.key("k")));
    assertFdbError(FdbErrors.TRANSACTION_TIMED_OUT, limited.get(f.key("k")));
  }

  // Bad option values fail with 2006 and options set too late with 2000. Through FoundationDB's
  // client most option errors are deferred like write errors (ThreadSafeTransaction::setOption
  // hands the option to the transaction on the network thread and keeps the error for the next
  // read or commit), while MultiVersionTransaction validates TIMEOUT at the call; so each test
  // accepts the error either at the option call or at the next operation.

  private static void assertOptionError(int code, Transaction tr, Runnable setOption,
      java.util.function.Supplier<java.util.concurrent.CompletableFuture<?>> next) {
    FdbAssertions.assertFdbErrorEitherWay(code, () -> {
      setOption.run();
      return next.get();
    });
  }

  @TestTemplate
  void sizeLimitBelow32Fails2006(Fixture f) {
    Transaction tr = f.tx();
    assertOptionError(FdbErrors.INVALID_OPTION_VALUE, tr, () -> tr.options().setSizeLimit(31), () -> tr.get(f.key("k")));
  }

  @TestTemplate
  void sizeLimitAboveTenMillionFails2006(Fixture f) {
    Transaction tr = f.tx();
    assertOptionError(FdbErrors.INVALID_OPTION_VALUE, tr, () -> tr.options().setSizeLimit(10_000_001), () -> {
      tr.set(f.key("k"), bytes("v"));
      return tr.commit();
    });
  }

  @TestTemplate
  void negativeTimeoutFails2006(Fixture f) {
    Transaction tr = f.tx();
    assertOptionError(FdbErrors.INVALID_OPTION_VALUE, tr, () -> tr.options().setTimeout(-1), () -> tr.get(f.key("k")));
  }

  @TestTemplate
  void retryLimitBelowMinusOneFails2006(Fixture f) {
    Transaction tr = f.tx();
    assertOptionError(FdbErrors.INVALID_OPTION_VALUE, tr, () -> tr.options().setRetryLimit(-2), () -> tr.get(f.key("k")));
  }

  @TestTemplate
  void readYourWritesDisableAfterAWriteFails2000(Fixture f) {
    Transaction tr = f.tx();
    tr.set(f.key("k"), bytes("v"));
    assertOptionError(FdbErrors.CLIENT_INVALID_OPERATION, tr, () -> tr.options().setReadYourWritesDisable(),
        () -> tr.get(f.key("k")));
  }

  @TestTemplate
  void readYourWritesDisableAfterAReadFails2000(Fixture f) {
    Transaction tr = f.tx();
    await(tr.get(f.key("k")));
    assertOptionError(FdbErrors.CLIENT_INVALID_OPERATION, tr, () -> tr.options().setReadYourWritesDisable(), () -> {
      tr.set(f.key("x"), bytes("x"));
      return tr.commit();
    });
  }
}
