package io.github.fdbcoord.embedded.engine;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.fdbcoord.embedded.FreeSpaceControlledDisk;
import io.github.fdbcoord.embedded.log.CommitLog;
import io.github.fdbcoord.embedded.storage.RocksStorage;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link DiskSpaceGate}'s ledger on a disk whose free space the test sets (the log's files are real): the log's
 * appends between two checks stay within the budget the last check left them, the next check renews it, and the
 * hold counts the log's segments as taken.
 */
@Timeout(60)
class DiskSpaceGateTest {
  private static final long RESERVE = 64L << 20;
  /** A record's payload: 64 KiB, so that the budget (4 MiB here) is reached in a few dozen appends. */
  private static final int RECORD = 64 << 10;

  @TempDir
  Path dir;

  private static final CommitLog.Replay NOTHING = new CommitLog.Replay() {
    @Override
    public void snapshotEntry(byte[] key, byte[] value) {}

    @Override
    public void record(long version, byte[] payload) {}
  };

  @Test
  void theLogsAppendsBetweenTwoChecksStayWithinTheBudgetTheLastCheckLeftAndTheNextCheckRenewsIt() throws Exception {
    FreeSpaceControlledDisk disk = new FreeSpaceControlledDisk();
    // Far above the reserve: the budget is its cap, 1/16 of the reserve.
    disk.usableSpace(RESERVE * 2);
    long budget = RESERVE / 16;
    try (RocksStorage storage = RocksStorage.open(dir, 4L << 20, 4L << 20, 0, false, false, true);
        CommitLog log = CommitLog.open(disk, dir, NOTHING)) {
      DiskSpaceGate gate = new DiskSpaceGate(List.of(dir), RESERVE, disk, dir, storage, log);
      gate.check();
      assertNull(gate.lowOnSpace());
      long version = 0;
      for (int check = 0; check < 3; check++) {
        long before = log.bytesAppended();
        while (!gate.appendBudgetSpent()) {
          log.append(++version, new byte[RECORD]).join();
        }
        long appended = log.bytesAppended() - before;
        // The budget is the cap, neither less nor more: spent by the record that takes the appends past it.
        assertTrue(appended > budget && appended <= budget + 2 * RECORD, appended + " bytes appended, budget " + budget);
        gate.check();
        assertFalse(gate.appendBudgetSpent(), "the next check leaves the log a new budget");
        assertNull(gate.lowOnSpace(), "nothing held: the disk has room");
      }
    }
  }

  @Test
  void theHoldCountsTheLogsSegmentsAsTakenAndTheBudgetShrinksWithWhatIsLeft() throws Exception {
    FreeSpaceControlledDisk disk = new FreeSpaceControlledDisk();
    long segments = 6L << 20;
    // Above the reserve by less than the segments will take.
    disk.usableSpace(RESERVE + segments / 2);
    try (RocksStorage storage = RocksStorage.open(dir, 4L << 20, 4L << 20, 0, false, false, true);
        CommitLog log = CommitLog.open(disk, dir, NOTHING)) {
      DiskSpaceGate gate = new DiskSpaceGate(List.of(dir), RESERVE, disk, dir, storage, log);
      gate.check();
      assertNull(gate.lowOnSpace(), "an empty log takes nothing");
      long version = 0;
      while (log.segmentBytes() < segments) {
        log.append(++version, new byte[RECORD]).join();
      }
      gate.check();
      String low = gate.lowOnSpace();
      assertNotNull(low, "the segments the storage writes again leave less than the reserve");
      assertTrue(low.contains("commit log's segments"), low);
      // What is left above half the reserve is about 29 MiB, so the budget is still its cap (4 MiB).
      long before = log.bytesAppended();
      while (!gate.appendBudgetSpent()) {
        log.append(++version, new byte[RECORD]).join();
      }
      assertTrue(log.bytesAppended() - before <= RESERVE / 16 + 2 * RECORD);
      disk.usableSpace(RESERVE / 2 + log.segmentBytes());
      gate.check();
      log.append(++version, new byte[1]).join();
      assertTrue(gate.appendBudgetSpent(), "no budget once nothing is left above half the reserve");
    }
  }
}
