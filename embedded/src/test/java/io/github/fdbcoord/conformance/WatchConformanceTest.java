package io.github.fdbcoord.conformance;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.MutationType;
import com.apple.foundationdb.Transaction;
import io.github.fdbcoord.fdb.FdbErrors;
import org.junit.jupiter.api.TestTemplate;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static io.github.fdbcoord.conformance.FdbAssertions.assertCode;
import static io.github.fdbcoord.conformance.FdbAssertions.assertFdbError;
import static io.github.fdbcoord.conformance.FdbAssertions.assertFdbErrorEitherWay;
import static io.github.fdbcoord.conformance.FdbAssertions.await;
import static io.github.fdbcoord.conformance.FdbAssertions.completesWithin;
import static io.github.fdbcoord.conformance.Fixture.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Watches: fire when the value differs from the one the watching transaction saw, only once that
 * transaction has committed (immediately for its own change), fail with its commit error, 10,000
 * outstanding per database by default (1032).
 */
@ExtendWith(EngineExtension.class)
class WatchConformanceTest {
  /** How long a watch that must not fire is given to (wrongly) fire. */
  private static final long QUIET_MS = 300;
  /** How long a watch that must fire is given (it should fire within milliseconds). */
  private static final long FIRE_SECONDS = 5;

  private static void fired(CompletableFuture<Void> w) {
    await(w, FIRE_SECONDS);
  }

  private static CompletableFuture<Void> committedWatch(Fixture f, byte[] key) {
    Transaction tr = f.tx();
    CompletableFuture<Void> w = tr.watch(key);
    await(tr.commit());
    return w;
  }

  @TestTemplate
  void firesWhenAnotherTransactionChangesTheValue(Fixture f) {
    f.put("k", "a");
    CompletableFuture<Void> w = committedWatch(f, f.key("k"));
    assertFalse(completesWithin(w, QUIET_MS), "nothing changed yet");
    f.put("k", "b");
    fired(w);
  }

  @TestTemplate
  void doesNotFireWhenTheSameValueIsWritten(Fixture f) {
    f.put("k", "a");
    CompletableFuture<Void> w = committedWatch(f, f.key("k"));
    f.put("k", "a");
    assertFalse(completesWithin(w, QUIET_MS), "setting the same value must not fire a watch");
    f.put("k", "b");
    fired(w);
  }

  @TestTemplate
  void firesWhenAnAbsentKeyIsCreatedAndWhenAKeyIsCleared(Fixture f) {
    CompletableFuture<Void> created = committedWatch(f, f.key("new"));
    f.put("new", "v");
    fired(created);

    CompletableFuture<Void> cleared = committedWatch(f, f.key("new"));
    f.put("new", null);
    fired(cleared);
  }

  @TestTemplate
  void clearingAnAbsentKeyDoesNotFire(Fixture f) {
    CompletableFuture<Void> w = committedWatch(f, f.key("absent"));
    f.put("absent", null);
    assertFalse(completesWithin(w, QUIET_MS));
    f.put("absent", "now");
    fired(w);
  }

  @TestTemplate
  void firesOnAnAtomicOperationThatChangesTheValue(Fixture f) {
    f.put(f.key("n"), new byte[] {1});
    CompletableFuture<Void> w = committedWatch(f, f.key("n"));
    f.db().run(tr -> {
      tr.mutate(MutationType.ADD, f.key("n"), new byte[] {1});
      return null;
    });
    fired(w);
  }

  @TestTemplate
  void firesOnAClearRangeCoveringTheKey(Fixture f) {
    f.put("b", "v");
    CompletableFuture<Void> w = committedWatch(f, f.key("b"));
    f.db().run(tr -> {
      tr.clear(f.key("a"), f.key("c"));
      return null;
    });
    fired(w);
  }

  @TestTemplate
  void otherTransactionsChangesReportOnlyAfterTheWatchingTransactionCommits(Fixture f) {
    f.put("k", "a");
    Transaction watcher = f.tx();
    CompletableFuture<Void> w = watcher.watch(f.key("k"));
    await(watcher.get(f.key("k")));
    f.put("k", "b");
    assertFalse(completesWithin(w, QUIET_MS), "a watch does not report other changes before its transaction commits");
    await(watcher.commit());
    fired(w);
  }

  @TestTemplate
  void theTransactionsOwnChangeFiresImmediately(Fixture f) {
    f.put("k", "a");
    Transaction tr = f.tx();
    CompletableFuture<Void> w = tr.watch(f.key("k"));
    await(tr.get(f.key("k")));
    tr.set(f.key("k"), bytes("b"));
    fired(w);
  }

  @TestTemplate
  void theTransactionsOwnWriteOfTheSameValueDoesNotFire(Fixture f) {
    f.put("k", "a");
    Transaction tr = f.tx();
    CompletableFuture<Void> w = tr.watch(f.key("k"));
    await(tr.get(f.key("k")));
    tr.set(f.key("k"), bytes("a"));
    await(tr.commit());
    assertFalse(completesWithin(w, QUIET_MS));
    f.put("k", "c");
    fired(w);
  }

  @TestTemplate
  void aWatchSetAfterTheTransactionsOwnWriteComparesWithThatValue(Fixture f) {
    f.put("k", "a");
    Transaction tr = f.tx();
    tr.set(f.key("k"), bytes("mine"));
    CompletableFuture<Void> w = tr.watch(f.key("k"));
    await(tr.commit());
    assertFalse(completesWithin(w, QUIET_MS), "the committed value is the value the watch saw");
    f.put("k", "theirs");
    fired(w);
  }

  @TestTemplate
  void aFailedCommitFailsItsWatchesWithTheCommitError(Fixture f) {
    Transaction tr = f.tx();
    await(tr.get(f.key("read")));
    CompletableFuture<Void> w = tr.watch(f.key("k"));
    tr.set(f.key("x"), bytes("x"));
    f.put("read", "changed");
    assertFdbError(FdbErrors.NOT_COMMITTED, tr.commit());
    assertFdbError(FdbErrors.NOT_COMMITTED, w, FIRE_SECONDS);
  }

  @TestTemplate
  void closingAnUncommittedTransactionFailsItsWatchesWith1025(Fixture f) {
    CompletableFuture<Void> w;
    try (Transaction tr = f.db().createTransaction()) {
      w = tr.watch(f.key("k"));
      await(tr.get(f.key("k")));
    }
    assertFdbError(FdbErrors.TRANSACTION_CANCELLED, w, FIRE_SECONDS);
  }

  @TestTemplate
  void resettingAnUncommittedTransactionThroughOnErrorFailsItsWatchesWith1025(Fixture f) {
    Transaction tr = f.tx();
    CompletableFuture<Void> w = tr.watch(f.key("k"));
    await(tr.get(f.key("k")));
    f.own(await(tr.onError(new com.apple.foundationdb.FDBException("not committed", FdbErrors.NOT_COMMITTED))));
    assertFdbError(FdbErrors.TRANSACTION_CANCELLED, w, FIRE_SECONDS);
  }

  @TestTemplate
  void aWatchOutlivesItsTransaction(Fixture f) {
    f.put("k", "a");
    CompletableFuture<Void> w;
    try (Transaction tr = f.db().createTransaction()) {
      w = tr.watch(f.key("k"));
      await(tr.commit());
    }
    f.put("k", "b");
    fired(w);
  }

  @TestTemplate
  void manyWatchersOfOneKeyAllFire(Fixture f) {
    List<CompletableFuture<Void>> watches = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      watches.add(committedWatch(f, f.key("k")));
    }
    f.put("k", "v");
    for (CompletableFuture<Void> w : watches) {
      fired(w);
    }
  }

  @TestTemplate
  void watchesAreDisabledWithoutReadYourWrites(Fixture f) {
    Transaction tr = f.tx();
    tr.options().setReadYourWritesDisable();
    assertFdbErrorEitherWay(FdbErrors.WATCHES_DISABLED, () -> tr.watch(f.key("k")));
  }

  @TestTemplate
  void watchingASystemKeyFails2004(Fixture f) {
    Transaction tr = f.tx();
    assertFdbErrorEitherWay(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE, () -> tr.watch(new byte[] {(byte) 0xff, 'x'}));
  }

  @TestTemplate
  void watchingAnOversizedKeyFails2102(Fixture f) {
    Transaction tr = f.tx();
    assertFdbErrorEitherWay(FdbErrors.KEY_TOO_LARGE, () -> tr.watch(f.key(Fixture.filled(10_001, (byte) 'k'))));
  }

  @TestTemplate
  void watchAfterCommitFails2017(Fixture f) {
    Transaction tr = f.tx();
    await(tr.commit());
    assertFdbErrorEitherWay(FdbErrors.USED_DURING_COMMIT, () -> tr.watch(f.key("k")));
  }

  @TestTemplate
  void moreThanTenThousandOutstandingWatchesFail1032(Fixture f) {
    Database db = f.freshDatabase();
    List<CompletableFuture<Void>> watches = new ArrayList<>();
    try (Transaction tr = db.createTransaction()) {
      for (int i = 0; i <= 10_000; i++) {
        watches.add(tr.watch(f.key(String.format("w%05d", i))));
      }
      await(tr.commit());
    }
    // Through the C client the refusal reaches the watch's future from the network thread, shortly
    // after the commit completes: wait for it (bounded) before counting.
    long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
    while (watches.stream().noneMatch(CompletableFuture::isCompletedExceptionally) && System.nanoTime() < deadline) {
      java.util.concurrent.locks.LockSupport.parkNanos(5_000_000);
    }
    int tooMany = 0;
    for (CompletableFuture<Void> w : watches) {
      if (w.isCompletedExceptionally() || completesWithin(w, 0)) {
        try {
          w.join();
          throw new AssertionError("no watched key changed, yet a watch fired");
        } catch (java.util.concurrent.CompletionException e) {
          assertCode(FdbErrors.TOO_MANY_WATCHES, e);
          tooMany++;
        }
      }
    }
    assertEquals(1, tooMany, "exactly the watch past the limit of 10,000 fails with 1032");
    for (CompletableFuture<Void> w : watches) {
      w.cancel(true);
    }
  }

  @TestTemplate
  void maxWatchesDatabaseOptionLowersTheLimit(Fixture f) {
    Database db = f.freshDatabase();
    db.options().setMaxWatches(5);
    List<CompletableFuture<Void>> watches = new ArrayList<>();
    try (Transaction tr = db.createTransaction()) {
      for (int i = 0; i < 6; i++) {
        watches.add(tr.watch(f.key("w" + i)));
      }
      await(tr.commit());
    }
    List<CompletableFuture<Void>> failed = new ArrayList<>();
    for (CompletableFuture<Void> w : watches) {
      if (completesWithin(w, 100)) {
        failed.add(w);
      }
    }
    assertEquals(1, failed.size(), "exactly one watch is past the limit of 5");
    assertFdbError(FdbErrors.TOO_MANY_WATCHES, failed.get(0));
    CompletableFuture<Void> live = watches.stream().filter(w -> !failed.contains(w)).findFirst().orElseThrow();
    int index = watches.indexOf(live);
    db.run(tr -> {
      tr.set(f.key("w" + index), bytes("v"));
      return null;
    });
    fired(live);
  }

  @TestTemplate
  void watchCancelledBeforeCommitGivesItsSlotBack(Fixture f) {
    Database db = f.freshDatabase();
    db.options().setMaxWatches(5);
    try (Transaction tr = db.createTransaction()) {
      for (int i = 0; i < 20; i++) {
        CompletableFuture<Void> w = tr.watch(f.key("w" + i));
        assertTrue(w.cancel(true));
      }
      List<CompletableFuture<Void>> live = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        live.add(tr.watch(f.key("live" + i)));
      }
      await(tr.commit());
      for (CompletableFuture<Void> w : live) {
        assertFalse(completesWithin(w, 50), "a watch within the limit of 5 live ones must stay pending");
      }
      db.run(t -> {
        t.set(f.key("live3"), bytes("v"));
        return null;
      });
      fired(live.get(3));
      live.forEach(w -> w.cancel(true));
    }
  }
}
