package io.github.fdbcoord.embedded;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A process dies while it truncates its commit log: the child JVM ({@link CrashBank.Child}) runs money
 * transfers with a log that is rolled as soon as it holds 4 kB, so the applier truncates it (flushes
 * RocksDB, then deletes the segments behind it) every time the storage catches up with a roll, and it halts
 * itself through a {@code FileLayer} that wraps the real one: just before or just after the k-th deletion of
 * a {@code log-*.seg} file. Then the directory is reopened and checked as in {@link ApplyKillTest}.
 */
@Timeout(600)
@Tag("slow")
class TruncationKillTest {
  private static final long COMPACT_AFTER = 4096;

  private Path dir;

  @BeforeEach
  void createDir() throws Exception {
    dir = Files.createTempDirectory("truncation-kill-test-");
  }

  @AfterEach
  void removeDir() throws Exception {
    CrashBank.deleteRecursively(dir);
  }

  private static CrashBank.ChildRun haltAt(Path dir, String round, String kill, boolean mustBeReady) throws Exception {
    CrashBank.ChildRun run = CrashBank.runChild(dir, round, 4, COMPACT_AFTER, false, kill, 0, 180);
    System.out.printf("TruncationKillTest %s: %s%n", kill, run);
    assertEquals(CrashBank.HALTED, run.exitCode, () -> kill + ": the child did not halt at its kill point: " + run);
    assertTrue(run.halt != null && run.halt.startsWith(kill.replace(':', ' ')) && run.halt.contains("log-"),
        run::toString);
    if (mustBeReady) {
      assertTrue(run.ready, "the child halted before it was ready: " + run);
      assertFalse(run.acked.isEmpty(), "the child acknowledged no transfer");
    }
    return run;
  }

  /** Kills at the truncations of a running engine: before and after the first deletion, and at the second. */
  @Test
  void aProcessKilledWhileItTruncatesItsLogLosesNoAcknowledgedTransfer() throws Exception {
    Set<String> acknowledged = new HashSet<>();
    String[] kills = {"delete-before:1", "delete-after:1", "delete-after:2"};
    for (int i = 0; i < kills.length; i++) {
      String kill = kills[i];
      CrashBank.ChildRun run = haltAt(dir, "k" + i, kill, true);
      acknowledged.addAll(run.acked);
      int present = CrashBank.reopenCheckAndContinue(dir, "after " + kill, acknowledged, -1);
      System.out.printf("TruncationKillTest %s: %d transfers acknowledged in total, %d recovered%n", kill,
          acknowledged.size(), present);
    }
  }

  /**
   * A process SIGKILLed with two segments in its log; the next one dies while its recovery truncates
   * the replayed log, after the first of the two deletions; the third recovers the rest.
   */
  @Test
  void aProcessKilledWhileItsRecoveryTruncatesTheLogLosesNoAcknowledgedTransfer() throws Exception {
    CrashBank.ChildRun first = CrashBank.runChild(dir, "a", 4, COMPACT_AFTER, false, "none", 2000, 180);
    System.out.printf("TruncationKillTest SIGKILL: %s%n", first);
    assertFalse(first.acked.isEmpty(), "the child acknowledged no transfer");
    long segments;
    try (var s = Files.list(dir)) {
      segments = s.filter(p -> p.getFileName().toString().matches("log-\\d+\\.seg")).count();
    }
    assertTrue(segments >= 2, "the log was rolled before the kill: " + segments + " segments");
    CrashBank.ChildRun second = haltAt(dir, "b", "delete-after:1", false);
    assertFalse(second.ready, "the second child halted in its recovery: " + second);
    Set<String> acknowledged = new HashSet<>(first.acked);
    int present = CrashBank.reopenCheckAndContinue(dir, "after a kill in recovery", acknowledged, -1);
    System.out.printf("TruncationKillTest in recovery: %d transfers acknowledged in total, %d recovered%n",
        acknowledged.size(), present);
  }
}
