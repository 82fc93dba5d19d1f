package io.github.fdbcoord.embedded;

import static io.github.fdbcoord.embedded.CrashBank.ACCOUNTS;
import static io.github.fdbcoord.embedded.CrashBank.OPENING;
import static io.github.fdbcoord.embedded.CrashBank.account;
import static io.github.fdbcoord.embedded.CrashBank.decode;
import static io.github.fdbcoord.embedded.CrashBank.encode;
import static io.github.fdbcoord.embedded.CrashBank.transfer;
import static io.github.fdbcoord.embedded.CrashBank.transferKey;
import io.github.fdbcoord.embedded.log.NonDurableFileLayer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.Range;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Money transfers on a durable {@link EmbeddedDatabase} whose disk is a {@link NonDurableFileLayer}, with
 * a power loss at a random moment (a random file operation or fsync, per seed) and one of the loss models.
 * After recovery: every acknowledged transfer is there; no transfer is there in part (each account's
 * balance is its opening balance plus exactly the transfers recorded); money is neither made nor lost.
 * Then the recovered database takes more transfers, closes cleanly and recovers them too.
 */
@Tag("slow")
class PowerLossTransferTest {
  private static final Path DIR = Path.of("/simulated/bank");
  private static final int WORKERS = 4;
  private static final int MAX_TRANSFERS_PER_WORKER = 400;
  private static final NonDurableFileLayer.Loss[] LOSSES = {
      NonDurableFileLayer.Loss.ALL_UNFORCED, NonDurableFileLayer.Loss.PREFIX_TORN,
      NonDurableFileLayer.Loss.SECTORS_REORDERED, NonDurableFileLayer.Loss.NOTHING};

  static LongStream seeds() {
    // -Dpowerloss.seeds=N for a longer soak; -Dpowerloss.firstSeed=S to start elsewhere.
    long first = Long.getLong("powerloss.firstSeed", 0);
    return LongStream.range(first, first + Long.getLong("powerloss.seeds", 40));
  }

  /**
   * The log lives on the simulated disk; RocksDB, beneath it, writes real files (it is trusted to
   * keep what its own flush made durable), so it gets a real directory.
   */
  private static EmbeddedDatabase open(NonDurableFileLayer disk, long seed, Path storage) {
    EmbeddedOptions.Builder options = EmbeddedOptions.builder().dataDirectory(DIR).files(disk)
        .storageDirectory(storage);
    if (seed % 3 == 0) {
      // Small enough that power is also lost during rolls and snapshots.
      options.compactAfterLogBytes(4_000);
    }
    return EmbeddedDatabase.open(options.build());
  }

  /** Runs transfers on {@code workers} threads until each has done {@code perWorker} or the database fails; returns the acknowledged ids. */
  private static Set<String> runTransfers(EmbeddedDatabase db, long seed, String round, int perWorker)
      throws InterruptedException {
    Set<String> acknowledged = ConcurrentHashMap.newKeySet();
    List<Thread> threads = new ArrayList<>();
    for (int w = 0; w < WORKERS; w++) {
      int worker = w;
      threads.add(new Thread(() -> {
        Random random = new Random(seed * 31 + worker);
        for (int n = 0; n < perWorker; n++) {
          String id = String.format("%s/%d/%05d", round, worker, n);
          try {
            transfer(db, id, random);
          } catch (RuntimeException e) {
            return; // the engine failed with its disk: no later commit is acknowledged
          }
          acknowledged.add(id);
        }
      }, "transfer-" + round + "-" + worker));
    }
    threads.forEach(Thread::start);
    for (Thread t : threads) {
      t.join(TimeUnit.SECONDS.toMillis(30));
      assertFalse(t.isAlive(), "seed " + seed + ": " + t.getName() + " did not stop");
    }
    return acknowledged;
  }

  /** Checks the invariants; returns the ids of the transfers present. */
  private static Set<String> check(EmbeddedDatabase db, long seed, Set<String> acknowledged) {
    List<KeyValue> transfers = db.run(tr -> tr.getRange(Range.startsWith(transferKey(""))).asList().join());
    long[] expected = new long[ACCOUNTS];
    java.util.Arrays.fill(expected, OPENING);
    Set<String> present = new TreeSet<>();
    for (KeyValue kv : transfers) {
      long[] t = decode(kv.getValue());
      expected[(int) t[0]] -= t[2];
      expected[(int) t[1]] += t[2];
      present.add(new String(kv.getKey(), StandardCharsets.UTF_8).substring("xfer/".length()));
    }
    Map<Integer, Long> balances = new TreeMap<>();
    long total = 0;
    for (int i = 0; i < ACCOUNTS; i++) {
      int a = i;
      long balance = decode(db.run(tr -> tr.get(account(a)).join()))[0];
      balances.put(i, balance);
      total += balance;
    }
    Set<String> lost = new TreeSet<>(acknowledged);
    lost.removeAll(present);
    assertTrue(lost.isEmpty(), "seed " + seed + ": acknowledged transfers lost: " + lost);
    assertEquals(ACCOUNTS * OPENING, total, "seed " + seed + ": money made or lost: " + balances);
    for (int i = 0; i < ACCOUNTS; i++) {
      assertEquals(expected[i], balances.get(i), "seed " + seed + ": account " + i
          + " does not match the transfers recorded (a transfer applied in part)");
    }
    return present;
  }

  @ParameterizedTest(name = "seed {0}")
  @MethodSource("seeds")
  @Timeout(120)
  void everyAcknowledgedTransferSurvivesAPowerLossAndNoneIsHalfApplied(long seed, @org.junit.jupiter.api.io.TempDir Path storage)
      throws Exception {
    Random random = new Random(seed);
    NonDurableFileLayer.Loss loss = LOSSES[(int) (seed % LOSSES.length)];
    NonDurableFileLayer disk = new NonDurableFileLayer();
    Set<String> acknowledged;
    try (EmbeddedDatabase db = open(disk, seed, storage)) {
      db.run(tr -> {
        for (int i = 0; i < ACCOUNTS; i++) {
          tr.set(account(i), encode(OPENING));
        }
        return null;
      });
      if (seed % 2 == 0) {
        disk.powerLossAtForce(disk.forces() + 1 + random.nextInt(60));
      } else {
        disk.powerLossAtOperation(disk.operations() + 1 + random.nextInt(250));
      }
      acknowledged = runTransfers(db, seed, "a", MAX_TRANSFERS_PER_WORKER);
      disk.powerLoss();
    }
    NonDurableFileLayer rebooted = disk.afterPowerLoss(random, loss);
    Set<String> more;
    try (EmbeddedDatabase db = open(rebooted, seed, storage)) {
      check(db, seed, acknowledged);
      more = runTransfers(db, seed, "b", 10);
      assertEquals(WORKERS * 10, more.size(), "seed " + seed + ": the recovered database takes commits");
    }
    acknowledged.addAll(more);
    try (EmbeddedDatabase db = open(rebooted, seed, storage)) {
      Set<String> present = check(db, seed, acknowledged);
      assertTrue(present.containsAll(more));
    }
  }
}
