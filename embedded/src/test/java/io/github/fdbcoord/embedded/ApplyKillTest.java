package io.github.fdbcoord.embedded;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A process dies while its applier moves versions that left the MVCC window into RocksDB. The child JVM
 * ({@link CrashBank.Child}) halts itself from the applier thread at an exact step (through
 * the options' {@code applyObserver}): right after a batch went into RocksDB and before its versions left the
 * window; after the first batch of a round split in two (a bulk transaction made it larger than 8 MiB);
 * between two eviction chunks; and after the storage had been flushed and the log truncated, so that
 * recovery starts from RocksDB's files and not from an empty storage. After each death the directory
 * is reopened: every acknowledged transfer is there, none in part, no money made or lost, the bulk
 * transaction whole or absent; the engine takes more transfers and recovers them after a clean close.
 * One directory goes through every round, so each recovery also starts from the previous ones' state.
 */
@Timeout(600)
@Tag("slow")
class ApplyKillTest {
  private Path dir;

  @BeforeEach
  void createDir() throws Exception {
    dir = Files.createTempDirectory("apply-kill-test-");
  }

  @AfterEach
  void removeDir() throws Exception {
    CrashBank.deleteRecursively(dir);
  }

  @Test
  void aProcessKilledWhileItsApplierWritesRocksDbLosesNoAcknowledgedTransfer() throws Exception {
    // round, bulk transactions, compactAfterLogBytes, kill point
    Object[][] rounds = {
        {"w", false, 64L << 20, "written:3"},
        {"s", true, 64L << 20, "written-split:1"},
        {"e", true, 64L << 20, "evicted-mid:2"},
        {"t", false, 16L << 10, "written-after-truncation:2"},
    };
    Set<String> acknowledged = new HashSet<>();
    long maxBulk = -1;
    for (Object[] r : rounds) {
      String round = (String) r[0];
      String kill = (String) r[3];
      CrashBank.ChildRun run = CrashBank.runChild(dir, round, 4, (Long) r[2], (Boolean) r[1], kill, 0, 180);
      System.out.printf("ApplyKillTest %s: %s%n", kill, run);
      assertEquals(CrashBank.HALTED, run.exitCode, () -> kill + ": the child did not halt at its kill point: " + run);
      assertTrue(run.halt != null && run.halt.startsWith(kill.replace(':', ' ')), run::toString);
      assertFalse(run.acked.isEmpty(), "the child acknowledged no transfer");
      if ((Boolean) r[1]) {
        assertTrue(run.maxBulkAcked.get() > 0, "the child acknowledged no bulk transaction");
      }
      acknowledged.addAll(run.acked);
      maxBulk = Math.max(maxBulk, run.maxBulkAcked.get());
      int present = CrashBank.reopenCheckAndContinue(dir, "after " + kill, acknowledged, maxBulk);
      System.out.printf("ApplyKillTest %s: %d transfers acknowledged in total, %d recovered%n", kill,
          acknowledged.size(), present);
    }
    try (Stream<Path> s = Files.walk(dir.resolve("storage"))) {
      assertTrue(s.anyMatch(p -> p.getFileName().toString().endsWith(".sst")), "the storage was flushed to files");
    }
  }
}
