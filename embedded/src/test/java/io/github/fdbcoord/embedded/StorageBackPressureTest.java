package io.github.fdbcoord.embedded;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.apple.foundationdb.FDBException;
import com.apple.foundationdb.Transaction;
import io.github.fdbcoord.embedded.engine.ApplyObserver;
import io.github.fdbcoord.embedded.engine.ApplyStep;
import io.github.fdbcoord.fdb.FdbErrors;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Commits wait while the storage lags (as FoundationDB's ratekeeper throttles clients behind a slow
 * storage server), so the MVCC window's heap stays bounded: past a byte budget of unapplied changes,
 * and once the oldest unapplied commit is more than two seconds past the 5-second window. A stalled
 * applier (held at its first batch through the options' {@code applyObserver}) stops commits; released, they
 * resume and nothing is lost. A held commit waits in the engine's queue, not on its caller's thread, and
 * closing the database fails it at once.
 */
@Timeout(120)
@Tag("slow")
class StorageBackPressureTest {
  @TempDir
  Path dir;

  private final CountDownLatch release = new CountDownLatch(1);

  @AfterEach
  void releaseApplier() {
    release.countDown();
  }

  /** Holds the applier at its first written batch until {@link #release}. */
  private ApplyObserver stallApplier() {
    AtomicBoolean held = new AtomicBoolean();
    return (step, version, more) -> {
      if (step == ApplyStep.WRITTEN && held.compareAndSet(false, true)) {
        try {
          release.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    };
  }

  private static byte[] key(long i) {
    return ByteBuffer.allocate(9).put((byte) 'k').putLong(i).array();
  }

  /** Commits one key at a time until stopped; counts them and notes when the last one completed. */
  private static final class Writer {
    final AtomicLong committed = new AtomicLong();
    final AtomicLong lastCompletedNanos = new AtomicLong(System.nanoTime());
    final AtomicBoolean stop = new AtomicBoolean();
    final CompletableFuture<Void> done;

    Writer(EmbeddedDatabase db, int valueBytes) {
      done = CompletableFuture.runAsync(() -> {
        for (long i = 0; !stop.get(); i++) {
          long k = i;
          db.run(tr -> {
            tr.set(key(k), new byte[valueBytes]);
            return null;
          });
          committed.set(i + 1);
          lastCompletedNanos.set(System.nanoTime());
          if (valueBytes < 1000) {
            sleepMillis(2);
          }
        }
      });
    }

    long millisSinceLastCommit() {
      return (System.nanoTime() - lastCompletedNanos.get()) / 1_000_000;
    }
  }

  private static void sleepMillis(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void waitUntil(String what, java.util.function.BooleanSupplier condition, long millis) {
    long end = System.nanoTime() + millis * 1_000_000;
    while (!condition.getAsBoolean()) {
      assertTrue(System.nanoTime() < end, "not within " + millis + " ms: " + what);
      sleepMillis(20);
    }
  }

  private static void assertAllStored(EmbeddedDatabase db, long count, int valueBytes) {
    for (long i = 0; i < count; i++) {
      long k = i;
      byte[] value = db.read(tr -> tr.get(key(k)).join());
      assertArrayEquals(new byte[valueBytes], value, "key " + k + " of " + count);
    }
  }

  @Test
  void commitsWaitOnceTheOldestUnappliedCommitIsTwoSecondsPastTheWindowAndResumeWhenTheApplierCatchesUp() {
    try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.builder().dataDirectory(dir)
        .applyObserver(stallApplier()).build())) {
      long started = System.nanoTime();
      Writer writer = new Writer(db, 16);
      // The applier takes its first batch at 6 s (the window plus its lag) and stalls on it; the
      // commits after that batch are then waiting in memory, and at 7 s past the oldest of them
      // commits start to wait.
      waitUntil("commits stop while the applier is held", () -> writer.millisSinceLastCommit() > 1500, 15_000);
      long stoppedAfter = (System.nanoTime() - started) / 1_000_000 - writer.millisSinceLastCommit();
      assertTrue(stoppedAfter >= 6_500 && stoppedAfter < 9_000,
          "commits stopped " + stoppedAfter + " ms after the first one (expected about 7 s)");
      long before = writer.committed.get();
      sleepMillis(500);
      assertEquals(before, writer.committed.get(), "no commit completes while the applier is held");

      release.countDown();
      waitUntil("commits resume once the applier catches up", () -> writer.committed.get() > before + 10, 10_000);
      writer.stop.set(true);
      writer.done.join();
      assertAllStored(db, writer.committed.get(), 16);
    }
  }

  @Test
  void commitsWaitWhileTheUnappliedChangesExceedTheirByteBudget() {
    EmbeddedOptions options = EmbeddedOptions.builder().dataDirectory(dir).maxUnappliedBytes(256 << 10).build();
    try (EmbeddedDatabase db = EmbeddedDatabase.open(options)) {
      long started = System.nanoTime();
      Writer writer = new Writer(db, 4096);
      // 256 KiB of 4 KiB values is about 64 commits: they take well under a second, and the rest
      // wait until versions leave the window at 6 s and the applier moves them to the storage.
      waitUntil("commits stop at the byte budget", () -> writer.millisSinceLastCommit() > 1500, 10_000);
      long stopped = writer.committed.get();
      assertTrue(stopped >= 60 && stopped <= 80, stopped + " commits of 4 KiB within a 256 KiB budget");
      waitUntil("commits resume once the applier has moved the oldest ones", () -> writer.committed.get() > stopped,
          15_000);
      long resumedAfter = (System.nanoTime() - started) / 1_000_000;
      assertTrue(resumedAfter >= 5_500, "commits resumed after " + resumedAfter + " ms, before the window passed");
      writer.stop.set(true);
      writer.done.join();
      assertAllStored(db, writer.committed.get(), 4096);
    }
  }

  /** Starts {@code count} commits of 4 KiB values on the executor's thread without waiting for any. */
  private static List<CompletableFuture<Void>> startCommits(EmbeddedDatabase db, ExecutorService executor, int count)
      throws Exception {
    return executor.submit(() -> {
      List<CompletableFuture<Void>> commits = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        Transaction tr = db.createTransaction();
        tr.set(key(i), new byte[4096]);
        commits.add(tr.commit().whenComplete((v, t) -> tr.close()));
      }
      return commits;
    }).get(5, TimeUnit.SECONDS);
  }

  private static long done(List<CompletableFuture<Void>> commits) {
    return commits.stream().filter(CompletableFuture::isDone).count();
  }

  @Test
  void heldCommitsTakeNoThreadFromTheExecutor() throws Exception {
    // One executor thread: had a held commit parked its caller, nothing else could run on it, the
    // completions of the commits before it included.
    ExecutorService one = Executors.newSingleThreadExecutor();
    EmbeddedOptions options = EmbeddedOptions.builder().dataDirectory(dir).maxUnappliedBytes(64 << 10)
        .executor(one).build();
    try (EmbeddedDatabase db = EmbeddedDatabase.open(options)) {
      // About 16 commits of 4 KiB fit the budget; the rest are held until the first ones leave the
      // window at 6 s and the applier moves them to the storage.
      List<CompletableFuture<Void>> commits = startCommits(db, one, 24);
      waitUntil("the commits within the budget complete", () -> done(commits) >= 10, 5_000);
      sleepMillis(300);
      long completed = done(commits);
      assertTrue(completed >= 10 && completed < 24, completed + " commits of 4 KiB done within a 64 KiB budget");
      assertEquals(42, one.submit(() -> 42).get(1, TimeUnit.SECONDS), "the executor's thread is free");

      CompletableFuture.allOf(commits.toArray(new CompletableFuture<?>[0])).get(30, TimeUnit.SECONDS);
      for (int i = 0; i < 24; i++) {
        long k = i;
        assertArrayEquals(new byte[4096], db.read(tr -> tr.get(key(k)).join()), "key " + k);
      }
    } finally {
      one.shutdownNow();
    }
  }

  @Test
  void closingTheDatabaseFailsHeldCommitsAndKeepsTheOthers() throws Exception {
    ExecutorService one = Executors.newSingleThreadExecutor();
    List<CompletableFuture<Void>> commits;
    EmbeddedOptions options = EmbeddedOptions.builder().dataDirectory(dir).maxUnappliedBytes(64 << 10)
        .executor(one).build();
    try (EmbeddedDatabase db = EmbeddedDatabase.open(options)) {
      // Nothing leaves the window for its first 6 s: past the budget, commits are held until then.
      commits = startCommits(db, one, 100);
      waitUntil("the commits within the budget complete", () -> done(commits) >= 10, 5_000);
      assertTrue(done(commits) < 100, "some commits are held");
    } finally {
      one.shutdownNow();
    }
    int committed = 0;
    for (CompletableFuture<Void> commit : commits) {
      // Every commit answers at once: done, or failed with operation_cancelled (1101).
      assertTrue(commit.isDone(), "a commit still waits after close");
      if (commit.isCompletedExceptionally()) {
        CompletionException e = assertThrows(CompletionException.class, commit::join);
        assertEquals(FdbErrors.OPERATION_CANCELLED, ((FDBException) e.getCause()).getCode());
      } else {
        committed++;
      }
    }
    assertTrue(committed >= 10 && committed < 100, committed + " commits done before close");
    try (EmbeddedDatabase reopened = EmbeddedDatabase.open(EmbeddedOptions.durable(dir))) {
      for (int i = 0; i < 100; i++) {
        long k = i;
        byte[] value = reopened.read(tr -> tr.get(key(k)).join());
        if (commits.get(i).isCompletedExceptionally()) {
          assertEquals(null, value, "a failed commit's key " + k + " is absent");
        } else {
          assertArrayEquals(new byte[4096], value, "key " + k);
        }
      }
    }
  }
}
