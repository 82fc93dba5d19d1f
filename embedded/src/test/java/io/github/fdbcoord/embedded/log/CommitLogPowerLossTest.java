package io.github.fdbcoord.embedded.log;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Power loss under the commit log, on {@link NonDurableFileLayer}: appenders and compaction run until the
 * power goes (at a random operation or force, depending on the seed), the disk is what the chosen loss
 * model leaves of it, and the reopened log must hold every acknowledged record, in order, whole, and
 * nothing but a contiguous run of the records appended (a snapshot plus the records after it).
 */
@Tag("slow")
public class CommitLogPowerLossTest {
  private static final Path DIR = Path.of("/simulated/commit-log");
  private static final int APPENDERS = 4;
  private static final long MAX_VERSION = 3000;
  private static final NonDurableFileLayer.Loss[] LOSSES = {
      NonDurableFileLayer.Loss.ALL_UNFORCED, NonDurableFileLayer.Loss.PREFIX_TORN,
      NonDurableFileLayer.Loss.SECTORS_REORDERED, NonDurableFileLayer.Loss.NOTHING};

  static LongStream seeds() {
    // -Dpowerloss.seeds=N for a longer soak; -Dpowerloss.firstSeed=S to start elsewhere.
    long first = Long.getLong("powerloss.firstSeed", 0);
    return LongStream.range(first, first + Long.getLong("powerloss.seeds", 64));
  }

  static byte[] payloadFor(long version) {
    byte[] p = new byte[(int) (version * 7 % 300)];
    new Random(version).nextBytes(p);
    return p;
  }

  /** What recovery handed over: snapshot entries by version, then records. */
  static final class Recovered implements CommitLog.Replay {
    final Map<Long, byte[]> snapshot = new TreeMap<>();
    final List<Long> versions = new ArrayList<>();
    final List<byte[]> payloads = new ArrayList<>();

    @Override
    public void snapshotEntry(byte[] key, byte[] value) {
      snapshot.put(Long.parseLong(new String(key)), value);
    }

    @Override
    public void record(long version, byte[] payload) {
      versions.add(version);
      payloads.add(payload);
    }

    /** Checks that this is versions 1..n (snapshot, then records) with the right payloads; returns n. */
    long checkContiguous(long seed) {
      long next = 1;
      for (Map.Entry<Long, byte[]> e : snapshot.entrySet()) {
        assertEquals(next, e.getKey(), "seed " + seed + ": snapshot entries are not 1..n");
        assertArrayEquals(payloadFor(next), e.getValue(), "seed " + seed + ": snapshot entry " + next);
        next++;
      }
      for (int i = 0; i < versions.size(); i++) {
        assertEquals(next, versions.get(i), "seed " + seed + ": records do not continue the snapshot: " + versions);
        assertArrayEquals(payloadFor(next), payloads.get(i), "seed " + seed + ": payload of version " + next);
        next++;
      }
      return next - 1;
    }
  }

  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  @Timeout(60)
  void everyAcknowledgedRecordSurvivesAPowerLoss(long seed) throws Exception {
    Random random = new Random(seed);
    NonDurableFileLayer disk = new NonDurableFileLayer();
    NonDurableFileLayer.Loss loss = LOSSES[(int) (seed % LOSSES.length)];
    Set<Long> acknowledged = ConcurrentHashMap.newKeySet();
    CommitLog log = CommitLog.open(disk, DIR, new Recovered());
    if (seed % 2 == 0) {
      disk.powerLossAtForce(disk.forces() + 1 + random.nextInt(40));
    } else {
      disk.powerLossAtOperation(disk.operations() + 1 + random.nextInt(200));
    }
    ReentrantLock commitLock = new ReentrantLock();
    long[] clock = {0};
    List<Thread> threads = new ArrayList<>();
    for (int a = 0; a < APPENDERS; a++) {
      threads.add(new Thread(() -> {
        while (true) {
          CompletableFuture<Void> f;
          long v;
          commitLock.lock();
          try {
            if (clock[0] >= MAX_VERSION) {
              return;
            }
            v = ++clock[0];
            f = log.append(v, payloadFor(v));
          } finally {
            commitLock.unlock();
          }
          try {
            f.join();
            acknowledged.add(v);
          } catch (RuntimeException e) {
            return; // the log failed with the power: nothing later is acknowledged
          }
        }
      }, "appender-" + a));
    }
    threads.add(new Thread(() -> {
      // Compaction while appends go on, so power is also lost during rolls and snapshots.
      Random r = new Random(seed);
      while (!disk.powerLost().isDone()) {
        long v;
        commitLock.lock();
        try {
          if (clock[0] >= MAX_VERSION) {
            return;
          }
          v = log.rollSegment();
        } catch (IOException e) {
          return;
        } finally {
          commitLock.unlock();
        }
        try {
          List<Map.Entry<byte[], byte[]>> state = new ArrayList<>();
          for (long k = 1; k <= v; k++) {
            state.add(Map.entry(Long.toString(k).getBytes(), payloadFor(k)));
          }
          log.writeSnapshot(v, state.iterator());
          Thread.sleep(r.nextInt(5));
        } catch (IOException e) {
          return;
        } catch (InterruptedException e) {
          return;
        }
      }
    }, "compactor"));
    threads.forEach(Thread::start);
    for (Thread t : threads) {
      t.join(TimeUnit.SECONDS.toMillis(30));
      assertTrue(!t.isAlive(), "seed " + seed + ": " + t.getName() + " did not stop");
    }
    log.close();
    NonDurableFileLayer rebooted = disk.afterPowerLoss(random, loss);

    Recovered recovered = new Recovered();
    long last;
    try (CommitLog reopened = CommitLog.open(rebooted, DIR, recovered)) {
      last = recovered.checkContiguous(seed);
      assertEquals(last, reopened.recoveredVersion(), "seed " + seed);
      List<Long> lost = new ArrayList<>();
      for (long v : acknowledged) {
        if (v > last) {
          lost.add(v);
        }
      }
      Collections.sort(lost);
      assertTrue(lost.isEmpty(), "seed " + seed + " (" + loss + "): acknowledged records lost: " + lost
          + " (recovered up to " + last + ")");
      // The recovered log takes appends after what it recovered.
      for (long v = last + 1; v <= last + 20; v++) {
        reopened.append(v, payloadFor(v)).get(10, TimeUnit.SECONDS);
      }
    }
    Recovered again = new Recovered();
    try (CommitLog reopened = CommitLog.open(rebooted, DIR, again)) {
      assertEquals(last + 20, again.checkContiguous(seed));
    }
  }

  @Test
  @Timeout(30)
  void recordsInASegmentStartedByARollSurviveAPowerLossBeforeAnySnapshot() throws Exception {
    // The new segment's creation must be durable (directory synced) before records in it are
    // acknowledged; no snapshot follows here to sync the directory by chance.
    NonDurableFileLayer disk = new NonDurableFileLayer();
    try (CommitLog log = CommitLog.open(disk, DIR, new Recovered())) {
      for (long v = 1; v <= 5; v++) {
        log.append(v, payloadFor(v)).get(10, TimeUnit.SECONDS);
      }
      assertEquals(5, log.rollSegment());
      for (long v = 6; v <= 10; v++) {
        log.append(v, payloadFor(v)).get(10, TimeUnit.SECONDS);
      }
      disk.powerLoss();
    }
    Recovered recovered = new Recovered();
    try (CommitLog reopened = CommitLog.open(disk.afterPowerLoss(new Random(0), NonDurableFileLayer.Loss.ALL_UNFORCED),
        DIR, recovered)) {
      assertEquals(10, recovered.checkContiguous(0));
    }
  }

  @Test
  @Timeout(30)
  void noForceMeansNothingSurvivesAndAForcedRecordAlwaysDoes() throws Exception {
    // The layer itself: only forced data is kept under ALL_UNFORCED, everything written under NOTHING.
    NonDurableFileLayer disk = new NonDurableFileLayer();
    Path file = DIR.resolve("plain");
    disk.createDirectories(DIR);
    try (FileLayer.OpenFile f = disk.open(file, FileLayer.Mode.CREATE_NEW)) {
      f.write(java.nio.ByteBuffer.wrap(new byte[] {1, 2, 3}), 0);
      f.force(false);
      f.write(java.nio.ByteBuffer.wrap(new byte[] {4, 5}), 3);
    }
    assertEquals(null, disk.afterPowerLoss(new Random(1), NonDurableFileLayer.Loss.ALL_UNFORCED).content(file),
        "a file whose directory was never synced is gone");
    NonDurableFileLayer synced = new NonDurableFileLayer();
    synced.createDirectories(DIR);
    try (FileLayer.OpenFile f = synced.open(file, FileLayer.Mode.CREATE_NEW)) {
      f.write(java.nio.ByteBuffer.wrap(new byte[] {1, 2, 3}), 0);
      f.force(false);
      synced.syncDirectory(DIR);
      f.write(java.nio.ByteBuffer.wrap(new byte[] {4, 5}), 3);
    }
    AtomicReference<NonDurableFileLayer> after = new AtomicReference<>();
    after.set(synced.afterPowerLoss(new Random(1), NonDurableFileLayer.Loss.ALL_UNFORCED));
    assertArrayEquals(new byte[] {1, 2, 3}, after.get().content(file));
    assertArrayEquals(new byte[] {1, 2, 3, 4, 5},
        synced.afterPowerLoss(new Random(1), NonDurableFileLayer.Loss.NOTHING).content(file));
    for (int s = 0; s < 20; s++) {
      byte[] torn = synced.afterPowerLoss(new Random(s), NonDurableFileLayer.Loss.PREFIX_TORN).content(file);
      assertTrue(torn.length >= 3 && torn.length <= 5, "a prefix of the unforced write: " + torn.length);
      assertArrayEquals(java.util.Arrays.copyOf(new byte[] {1, 2, 3, 4, 5}, torn.length), torn);
    }
    IOException e = org.junit.jupiter.api.Assertions.assertThrows(IOException.class,
        () -> synced.open(file, FileLayer.Mode.READ));
    assertTrue(e.getMessage().contains("power loss"), e.getMessage());
  }
}
