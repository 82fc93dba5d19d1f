package io.github.fdbcoord.embedded;

import io.github.fdbcoord.embedded.log.NonDurableFileLayer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.apple.foundationdb.FDBException;
import io.github.fdbcoord.embedded.log.Manifest;
import io.github.fdbcoord.embedded.log.NonDurableFileLayer.Hold;
import io.github.fdbcoord.fdb.FdbErrors;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.AbstractQueuedSynchronizer;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A commit log that fails while a commit is being written: that commit's caller learns its outcome is
 * unknown (1021), through the retry loops too, since it may be on disk; later callers get an error that
 * says the engine stopped and why; the commit, if it reached the disk, is there after a reopen.
 *
 * <p>The rule, whichever thread meets the failure (the log's sync thread at a batch's fsync, the applier
 * at the manifest's): every commit handed to the log's writer before it failed is answered 1021, every
 * other one the stop error (4100). The tests put each interleaving in place with the non-durable layer's
 * holds (a force, or the applier, waits until the test lets it go on or cuts the power under it), never
 * by winning a race: a power loss armed at "the next force" could be taken by the applier's manifest
 * write instead of the commit's fsync, which stops the engine before the commit starts.
 */
class LogFailureTest {
  private static final Path DIR = Path.of("/simulated/log-failure");

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static EmbeddedDatabase open(NonDurableFileLayer disk, Path storage) {
    return EmbeddedDatabase.open(EmbeddedOptions.builder().dataDirectory(DIR).files(disk).storageDirectory(storage).build());
  }

  private static FDBException fdbError(Throwable t) {
    return assertInstanceOf(FDBException.class, FdbErrors.unwrap(t), () -> "an FDBException, got " + t);
  }

  private static boolean segment(Path file) {
    return file.getFileName().toString().endsWith(".seg");
  }

  /** The manifest (its temporary file is the one forced): only the applier writes it while no segment rolls. */
  private static boolean manifest(Path file) {
    return file.getFileName().toString().startsWith(Manifest.FILE);
  }

  private static void set(EmbeddedDatabase db, String key) {
    db.run(tr -> {
      tr.set(bytes(key), bytes(key));
      return null;
    });
  }

  /**
   * Starts a commit of {@code key} through the retry loop on {@code executor}. It returns once the
   * engine has handed the record to the log's writer: the loop runs the body and the commit on the
   * calling thread, and nothing holds commits back here (no storage lag, no lack of space).
   */
  private static CompletableFuture<Void> commit(EmbeddedDatabase db, String key, Executor executor) {
    return db.runAsync(tr -> {
      tr.set(bytes(key), bytes(key));
      return CompletableFuture.completedFuture(null);
    }, executor);
  }

  private static CompletableFuture<Void> commit(EmbeddedDatabase db, String key) {
    return commit(db, key, ForkJoinPool.commonPool());
  }

  private static void assertCommitted(CompletableFuture<Void> commit) throws Exception {
    commit.get(1, TimeUnit.MINUTES);
  }

  private static FDBException errorOf(CompletableFuture<Void> commit) {
    return fdbError(assertThrows(ExecutionException.class, () -> commit.get(1, TimeUnit.MINUTES)).getCause());
  }

  private static void assertUnknownResult(CompletableFuture<Void> commit) {
    FDBException e = errorOf(commit);
    assertEquals(FdbErrors.COMMIT_UNKNOWN_RESULT, e.getCode(), e.getMessage());
    assertTrue(e.getMessage().contains("commit log failed"), e.getMessage());
  }

  private static void assertStopError(FDBException e) {
    assertEquals(FdbErrors.INTERNAL_ERROR, e.getCode(), e.getMessage());
    assertTrue(e.getMessage().contains("commit log failed"), e.getMessage());
  }

  /** A commit started now is refused outright: the engine has stopped. */
  private static void assertStopped(EmbeddedDatabase db) {
    assertStopError(fdbError(assertThrows(RuntimeException.class, () -> set(db, "after the stop"))));
  }

  /** Reopens on what survives a crash of the process (every write kept) and checks which keys are there. */
  private static void assertAfterReopen(NonDurableFileLayer disk, Path storage, String[] present, String[] absent) {
    try (EmbeddedDatabase db = open(disk.afterPowerLoss(new Random(1), NonDurableFileLayer.Loss.NOTHING), storage)) {
      for (String key : present) {
        assertArrayEquals(bytes(key), db.read(tr -> tr.get(bytes(key)).join()), key);
      }
      for (String key : absent) {
        assertNull(db.read(tr -> tr.get(bytes(key)).join()), key);
      }
    }
  }

  /**
   * Waits until the log's sync thread waits for records again, which it does only after recording the
   * failure of its batch: from then on the log refuses appends.
   */
  private static void awaitWaitingForRecords(Thread syncThread) {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
    // Held in the force it waited on a latch; the only condition it awaits is its queue's.
    while (!(syncThread.getState() == Thread.State.WAITING
        && LockSupport.getBlocker(syncThread) instanceof AbstractQueuedSynchronizer.ConditionObject)) {
      assertTrue(System.nanoTime() - deadline < 0, "the log's sync thread did not return to its queue");
      LockSupport.parkNanos(100_000);
    }
  }

  @Test
  void aCommitWhoseLogWriteFailsAnswersCommitUnknownResultThroughRunAndRunAsync(@TempDir Path storage) {
    NonDurableFileLayer disk = new NonDurableFileLayer();
    try (EmbeddedDatabase db = open(disk, storage)) {
      db.run(tr -> {
        tr.set(bytes("before"), bytes("1"));
        return null;
      });
      // The next fsync of the log's segment fails: the commit being written has an unknown outcome.
      disk.powerLossAtForceOf(LogFailureTest::segment);
      FDBException sync = fdbError(assertThrows(RuntimeException.class, () -> db.run(tr -> {
        tr.set(bytes("during"), bytes("2"));
        return null;
      })));
      assertEquals(FdbErrors.COMMIT_UNKNOWN_RESULT, sync.getCode(), sync.getMessage());
      assertTrue(sync.getMessage().contains("commit log failed"), sync.getMessage());

      FDBException later = fdbError(assertThrows(RuntimeException.class, () -> db.runAsync(tr -> {
        tr.set(bytes("after"), bytes("3"));
        return java.util.concurrent.CompletableFuture.completedFuture(null);
      }).join()));
      assertEquals(FdbErrors.INTERNAL_ERROR, later.getCode(), "a commit after the failure is refused outright");
      assertTrue(later.getMessage().contains("commit log failed"), later.getMessage());
    }
    // Nothing of the failed write was lost in this model: the first commit is there, the refused one is not.
    try (EmbeddedDatabase db = open(disk.afterPowerLoss(new Random(1), NonDurableFileLayer.Loss.NOTHING), storage)) {
      assertArrayEquals(bytes("1"), db.read(tr -> tr.get(bytes("before")).join()));
      assertNull(db.read(tr -> tr.get(bytes("after")).join()));
    }
  }
  @Test
  void aCommitWhoseOwnBatchFsyncFailsAnswersCommitUnknownResult(@TempDir Path storage) throws Exception {
    NonDurableFileLayer disk = new NonDurableFileLayer();
    try (EmbeddedDatabase db = open(disk, storage)) {
      set(db, "before");
      try (Hold own = disk.holdForce(LogFailureTest::segment)) {
        CompletableFuture<Void> commit = commit(db, "own");
        assertTrue(own.awaitReached().getName().startsWith("commit-log-sync"), "the log's sync thread forces");
        assertFalse(commit.isDone(), "answered before its record was synced");
        own.releaseIntoPowerLoss();
        assertUnknownResult(commit);
      }
      assertStopped(db);
    }
    assertAfterReopen(disk, storage, new String[] {"before", "own"}, new String[] {"after the stop"});
  }

  @Test
  void commitsSyncedTogetherAllAnswerCommitUnknownResultWhenTheirFsyncFails(@TempDir Path storage) throws Exception {
    NonDurableFileLayer disk = new NonDurableFileLayer();
    try (EmbeddedDatabase db = open(disk, storage); Hold first = disk.holdForce(LogFailureTest::segment)) {
      CompletableFuture<Void> earlier = commit(db, "earlier");
      first.awaitReached();
      // Queued while the sync thread forces the batch before theirs: the next batch holds both.
      CompletableFuture<Void> a = commit(db, "a");
      CompletableFuture<Void> b = commit(db, "b");
      disk.powerLossAtForceOf(LogFailureTest::segment);
      first.release();
      assertCommitted(earlier);
      assertUnknownResult(a);
      assertUnknownResult(b);
      assertStopped(db);
    }
    // Both were written before the fsync that failed: a crash of the process keeps them.
    assertAfterReopen(disk, storage, new String[] {"earlier", "a", "b"}, new String[] {"after the stop"});
  }

  @Test
  void aCommitHandedToTheLogWhileTheFailingFsyncRunsAnswersCommitUnknownResult(@TempDir Path storage)
      throws Exception {
    NonDurableFileLayer disk = new NonDurableFileLayer();
    try (EmbeddedDatabase db = open(disk, storage); Hold failing = disk.holdForce(LogFailureTest::segment)) {
      CompletableFuture<Void> syncing = commit(db, "syncing");
      failing.awaitReached();
      CompletableFuture<Void> queued = commit(db, "queued");
      failing.releaseIntoPowerLoss();
      assertUnknownResult(syncing);
      // Handed to the writer before it failed: the log never wrote it, but its caller cannot tell.
      assertUnknownResult(queued);
      assertStopped(db);
    }
    assertAfterReopen(disk, storage, new String[] {"syncing"}, new String[] {"queued", "after the stop"});
  }

  @Test
  void aCommitInFlightWhenTheAppliersManifestFsyncFailsAnswersCommitUnknownResult(@TempDir Path storage)
      throws Exception {
    NonDurableFileLayer disk = new NonDurableFileLayer();
    try (EmbeddedDatabase db = open(disk, storage); Hold first = disk.holdForce(LogFailureTest::segment);
        Hold manifestFsync = disk.holdForce(LogFailureTest::manifest);
        Hold inFlight = disk.holdForce(LogFailureTest::segment)) {
      CompletableFuture<Void> earlier = commit(db, "earlier");
      first.awaitReached();
      CompletableFuture<Void> commit = commit(db, "in flight");
      // Once "earlier" is synced the manifest is stale: the applier writes it while "in flight" awaits its fsync.
      first.release();
      assertCommitted(earlier);
      inFlight.awaitReached();
      Thread applier = manifestFsync.awaitReached();
      assertEquals("fdb-embedded-storage", applier.getName());
      manifestFsync.releaseIntoPowerLoss();
      // The applier stops the engine, then ends.
      applier.join(TimeUnit.MINUTES.toMillis(1));
      assertFalse(applier.isAlive(), "the applier did not stop");
      assertStopped(db);
      assertFalse(commit.isDone(), "answered before its fsync");
      inFlight.release();
      assertUnknownResult(commit);
    }
    // Its record was written before the power went: a crash of the process keeps it, so 1021 was the answer.
    assertAfterReopen(disk, storage, new String[] {"earlier", "in flight"}, new String[] {"after the stop"});
  }

  @Test
  void aCommitStartedAfterTheAppliersManifestFsyncFailedGetsTheStopError(@TempDir Path storage) throws Exception {
    NonDurableFileLayer disk = new NonDurableFileLayer();
    try (EmbeddedDatabase db = open(disk, storage); Hold manifestFsync = disk.holdForce(LogFailureTest::manifest)) {
      // Makes the manifest stale, so the applier writes it.
      set(db, "before");
      Thread applier = manifestFsync.awaitReached();
      assertEquals("fdb-embedded-storage", applier.getName());
      manifestFsync.releaseIntoPowerLoss();
      applier.join(TimeUnit.MINUTES.toMillis(1));
      assertFalse(applier.isAlive(), "the applier did not stop");
      // What the flaky version of the first test saw when the applier's fsync took its power loss: the
      // commit never reached the log, so its outcome is known.
      assertStopError(fdbError(assertThrows(RuntimeException.class, () -> set(db, "during"))));
      assertStopError(fdbError(assertThrows(RuntimeException.class, () -> commit(db, "during").join())));
    }
    assertAfterReopen(disk, storage, new String[] {"before"}, new String[] {"during"});
  }

  @Test
  void aCommitTheFailedLogRefusesBeforeTheEngineStoppedGetsTheStopError(@TempDir Path storage) throws Exception {
    NonDurableFileLayer disk = new NonDurableFileLayer();
    CountDownLatch completerHeld = new CountDownLatch(1);
    CountDownLatch letCompleterGo = new CountDownLatch(1);
    // Released before the database closes, which waits for the failed commit's answer.
    try (EmbeddedDatabase db = open(disk, storage); AutoCloseable completerGoes = letCompleterGo::countDown;
        Hold applier = disk.holdSpaceCheck(); Hold first = disk.holdForce(LogFailureTest::segment);
        Hold failing = disk.holdForce(LogFailureTest::segment)) {
      // The applier would stop the engine at its next write after the power loss.
      assertEquals("fdb-embedded-storage", applier.awaitReached().getName());
      // Its continuation runs on the thread that completes the log's futures (the executor runs it
      // inline) and keeps that thread, so the failed commit's answer, which stops the engine, waits.
      CompletableFuture<Void> earlier = commit(db, "earlier", Runnable::run);
      Thread syncThread = first.awaitReached();
      CompletableFuture<Void> completerBlocked = earlier.thenRun(() -> {
        completerHeld.countDown();
        while (true) {
          try {
            letCompleterGo.await();
            return;
          } catch (InterruptedException e) {
            // Keep the thread until the test lets it go.
          }
        }
      });
      CompletableFuture<Void> failed = commit(db, "failed");
      first.release();
      assertTrue(completerHeld.await(1, TimeUnit.MINUTES), "the completion of \"earlier\" did not start");
      failing.awaitReached();
      failing.releaseIntoPowerLoss();
      awaitWaitingForRecords(syncThread);
      assertFalse(failed.isDone(), "its answer waits for the completion thread");

      // The log has failed, the engine has not stopped yet: the log refuses this record.
      assertStopError(errorOf(commit(db, "refused")));

      letCompleterGo.countDown();
      completerBlocked.get(1, TimeUnit.MINUTES);
      assertCommitted(earlier);
      assertUnknownResult(failed);
      assertStopped(db);
    }
    assertAfterReopen(disk, storage, new String[] {"earlier", "failed"}, new String[] {"refused", "after the stop"});
  }
}
