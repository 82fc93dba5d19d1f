package io.github.fdbcoord.embedded;

import io.github.fdbcoord.embedded.engine.ApplyObserver;
import io.github.fdbcoord.embedded.engine.ApplyStep;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An open after a crash puts the commit log's tail into the MVCC window and serves at once, while the
 * applier moves that tail into RocksDB in the background. A child JVM ({@link CrashBank.Child}) makes money
 * transfers and bulk transactions (8.7 MB each, so the tail spans several applier batches) and is killed
 * with SIGKILL before its applier has moved anything; then the directory is opened during the catch-up.
 * A second child is halted during its catch-up, and the next open bounds the window's share of the tail
 * so that its older records go to the storage before the open.
 */
@Timeout(180)
class RecoveryCatchUpTest {
  /** The applier's age bound on its backlog is 7 s of versions: the recovered commits are older than that. */
  private static final long OLDER_THAN_THE_BACKLOG_BOUND_MILLIS = 8_000;

  private Path root;

  @BeforeEach
  void createDir() throws Exception {
    root = Files.createTempDirectory("recovery-catch-up-test-");
  }

  @AfterEach
  void removeDir() throws Exception {
    CrashBank.deleteRecursively(root);
  }

  /** Kills a writing child; returns its run, which acknowledged transfers and at least two bulk transactions. */
  private static CrashBank.ChildRun crashedWriter(Path dir) throws Exception {
    // Two bulk transactions: the tail then spans several applier batches.
    CrashBank.ChildRun run = CrashBank.runChild(dir, "a", 4, 64L << 20, true, "none",
        (child, readyMillis) -> child.maxBulkAcked.get() >= 2 && readyMillis >= 2_000, 120);
    System.out.printf("RecoveryCatchUpTest, killed writer: %s%n", run);
    assertTrue(run.acked.size() > 0 && run.maxBulkAcked.get() >= 2, () -> "the writer made too little: " + run);
    return run;
  }

  @Test
  void aProcessKilledWhileTheStorageCatchesUpLosesNoAcknowledgedTransfer() throws Exception {
    Path dir = root.resolve("db");
    CrashBank.ChildRun first = crashedWriter(dir);
    Set<String> acknowledged = new HashSet<>(first.acked);
    CrashBank.ChildRun second = CrashBank.runChild(dir, "b", 4, 64L << 20, true, "catching-up:1", 0, 120);
    System.out.printf("RecoveryCatchUpTest, killed during the catch-up: %s%n", second);
    assertEquals(CrashBank.HALTED, second.exitCode, () -> "the child did not halt during its catch-up: " + second);
    assertTrue(second.halt != null && second.halt.startsWith("catching-up 1"), second::toString);
    assertFalse(second.acked.isEmpty(), "no transfer was acknowledged while the storage caught up");
    acknowledged.addAll(second.acked);
    long maxBulk = Math.max(first.maxBulkAcked.get(), second.maxBulkAcked.get());
    AtomicBoolean caughtUp = new AtomicBoolean();
    // Half of it is the window's share, about one bulk transaction: the older records go to the storage first.
    EmbeddedOptions bounded = EmbeddedOptions.builder().dataDirectory(dir).maxUnappliedBytes(20L << 20)
        .applyObserver((step, version, more) -> {
          if (step == ApplyStep.CAUGHT_UP) {
            caughtUp.set(true);
          }
        }).build();
    try (EmbeddedDatabase db = EmbeddedDatabase.open(bounded)) {
      CrashBank.check(db, "with the tail split between the storage and the window", acknowledged, maxBulk);
      acknowledged.addAll(CrashBank.moreTransfers(db, "after a split tail"));
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (!caughtUp.get() && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertTrue(caughtUp.get(), "the storage caught up with the window's part of the tail");
      CrashBank.check(db, "after the catch-up", acknowledged, maxBulk);
    }
    try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.durable(dir))) {
      CrashBank.check(db, "after a clean close", acknowledged, maxBulk);
    }
  }

  @Test
  void theReopenedEngineServesReadsCommitsAndBackupsBeforeTheStorageCaughtUp() throws Exception {
    Path dir = root.resolve("db");
    CrashBank.ChildRun crashed = crashedWriter(dir);
    Set<String> acknowledged = new HashSet<>(crashed.acked);
    long maxBulk = crashed.maxBulkAcked.get();
    Thread.sleep(Math.max(0, OLDER_THAN_THE_BACKLOG_BOUND_MILLIS
        - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - crashed.readyNanos)));
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger catchUpBatches = new AtomicInteger();
    AtomicBoolean caughtUp = new AtomicBoolean();
    ApplyObserver stallTheCatchUp = (step, version, more) -> {
      if (step == ApplyStep.CAUGHT_UP) {
        caughtUp.set(true);
      } else if (step == ApplyStep.WRITTEN && !caughtUp.get() && catchUpBatches.incrementAndGet() == 1) {
        try {
          release.await(120, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    };
    Set<String> segmentsDuringCatchUp;
    Path backup = root.resolve("backup");
    try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.builder().dataDirectory(dir)
        .applyObserver(stallTheCatchUp).build())) {
      try {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (catchUpBatches.get() == 0 && System.nanoTime() < deadline) {
          Thread.sleep(20);
        }
        assertEquals(1, catchUpBatches.get(), "the applier started catching up with the recovered commits");
        CrashBank.check(db, "while the storage catches up", acknowledged, maxBulk);
        acknowledged.addAll(CrashBank.moreTransfers(db, "during the catch-up"));
        CrashBank.check(db, "after transfers during the catch-up", acknowledged, maxBulk);
        db.backup(backup).get(60, TimeUnit.SECONDS);
        assertFalse(caughtUp.get(), "the storage was held behind the recovered commits throughout");
        segmentsDuringCatchUp = segments(dir);
        assertFalse(segmentsDuringCatchUp.isEmpty());
      } finally {
        release.countDown();
      }
    }
    Set<String> kept = segments(dir);
    kept.retainAll(segmentsDuringCatchUp);
    assertEquals(Set.of(), kept, "a close during the catch-up moves the log into the storage and truncates it");
    try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.durable(dir))) {
      CrashBank.check(db, "after a close during the catch-up", acknowledged, maxBulk);
    }
    Path restored = root.resolve("restored");
    EmbeddedDatabase.restore(backup, restored);
    try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.durable(restored))) {
      CrashBank.check(db, "the backup taken during the catch-up", acknowledged, maxBulk);
    }
  }

  private static Set<String> segments(Path dir) throws Exception {
    try (Stream<Path> s = Files.list(dir)) {
      return new HashSet<>(s.map(p -> p.getFileName().toString())
          .filter(n -> n.startsWith("log-") && n.endsWith(".seg")).toList());
    }
  }
}
