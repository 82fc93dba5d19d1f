package io.github.fdbcoord.embedded;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.apple.foundationdb.FDBException;
import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.Range;
import com.apple.foundationdb.Transaction;
import io.github.fdbcoord.embedded.log.ForwardingFileLayer;
import io.github.fdbcoord.embedded.log.NonDurableFileLayer;
import io.github.fdbcoord.fdb.FdbErrors;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A disk that fills faster than the free-space check ({@code minFreeSpaceBytes}) notices: the commit
 * log's write or RocksDB's write or flush fails with ENOSPC. The engine keeps every acknowledged commit,
 * answers the commits being written 1021 (commit_unknown_result: the log writes them once space is back),
 * holds new commits, keeps answering reads, reports why (commitsHeldBecause, getClientStatus), and goes on
 * by itself once space is freed, without a reopen. Checked with money transfers between accounts, each
 * recording its own id and incrementing a counter, by 12 writers, while a reader checks the total all
 * along, on a simulated file layer whose writes fail with ENOSPC (once longer than the MVCC window, so
 * reads at the last visible version must stay allowed); {@link FullFileSystemTest} does the same on a
 * real size-limited file system.
 */
@Timeout(120)
class FullDiskTest {
  private static final int ACCOUNTS = 8;
  private static final long INITIAL = 1_000;
  private static final byte[] COUNTER = bytes("counter");
  private static final byte[] ACCOUNT_PREFIX = bytes("acct/");
  private static final byte[] TX_PREFIX = bytes("tx/");
  private static final String ENOSPC = "No space left on device";

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] account(int i) {
    return bytes("acct/" + i);
  }

  private static byte[] txKey(long id) {
    return bytes(String.format("tx/%012d", id));
  }

  private static byte[] longBytes(long v) {
    return ByteBuffer.allocate(8).putLong(v).array();
  }

  private static long asLong(byte[] v) {
    return v == null ? 0 : ByteBuffer.wrap(v).getLong();
  }

  /** A file layer whose writes and syncs fail, while {@link #failing} is set, with that message (ENOSPC: a full disk). */
  static final class FillableDisk extends ForwardingFileLayer {
    volatile String failing;

    FillableDisk(NonDurableFileLayer disk) {
      super(disk);
    }

    private void check() throws IOException {
      String message = failing;
      if (message != null) {
        throw new IOException(message);
      }
    }

    @Override
    public OpenFile open(Path file, Mode mode) throws IOException {
      if (mode == Mode.CREATE_NEW || mode == Mode.CREATE_OR_TRUNCATE) {
        check();
      }
      return new ForwardingOpenFile(delegate.open(file, mode)) {
        @Override
        public void write(ByteBuffer src, long position) throws IOException {
          if (failing != null && src.remaining() > 1) {
            // As a real write() that ran out of space part-way: some of it got there.
            ByteBuffer half = src.duplicate();
            half.limit(half.position() + src.remaining() / 2);
            super.write(half, position);
          }
          check();
          super.write(src, position);
        }

        @Override
        public void force(boolean metadata) throws IOException {
          check();
          super.force(metadata);
        }
      };
    }
  }

  /** Transfers and their outcomes. */
  static final class Bank {
    final EmbeddedDatabase db;
    final AtomicLong ids = new AtomicLong();
    final Set<Long> acknowledged = ConcurrentHashMap.newKeySet();
    final Set<Long> unknown = ConcurrentHashMap.newKeySet();
    final Set<Long> notCommitted = ConcurrentHashMap.newKeySet();
    final AtomicReference<Throwable> unexpected = new AtomicReference<>();
    final AtomicLong reads = new AtomicLong();
    final AtomicBoolean stop = new AtomicBoolean();
    final List<Thread> threads = new ArrayList<>();
    final int valueBytes;

    Bank(EmbeddedDatabase db, int valueBytes) {
      this.db = db;
      this.valueBytes = valueBytes;
      db.run(tr -> {
        for (int i = 0; i < ACCOUNTS; i++) {
          tr.set(account(i), longBytes(INITIAL));
        }
        return null;
      });
    }

    void start(int writers) {
      for (int w = 0; w < writers; w++) {
        threads.add(new Thread(this::transfers, "transfers-" + w));
      }
      threads.add(new Thread(this::audits, "audit"));
      threads.forEach(Thread::start);
    }

    /** One attempt per transaction: its id says what became of it. */
    private void transfers() {
      ThreadLocalRandom random = ThreadLocalRandom.current();
      byte[] payload = new byte[valueBytes];
      while (!stop.get()) {
        long id = ids.incrementAndGet();
        int from = random.nextInt(ACCOUNTS);
        int to = (from + 1 + random.nextInt(ACCOUNTS - 1)) % ACCOUNTS;
        long amount = 1 + random.nextInt(10);
        Transaction tr = db.createTransaction();
        try {
          long a = asLong(tr.get(account(from)).join());
          long b = asLong(tr.get(account(to)).join());
          long n = asLong(tr.get(COUNTER).join());
          tr.set(account(from), longBytes(a - amount));
          tr.set(account(to), longBytes(b + amount));
          tr.set(COUNTER, longBytes(n + 1));
          random.nextBytes(payload);
          tr.set(txKey(id), payload);
          tr.commit().join();
          acknowledged.add(id);
        } catch (RuntimeException e) {
          FDBException f = FdbErrors.fdbException(e);
          if (f == null) {
            unexpected.compareAndSet(null, e);
          } else if (f.getCode() == FdbErrors.COMMIT_UNKNOWN_RESULT) {
            unknown.add(id);
          } else {
            notCommitted.add(id);
          }
        } finally {
          tr.close();
        }
      }
    }

    /** Reads the total over and over: it never changes, and a read never fails. */
    private void audits() {
      while (!stop.get()) {
        try {
          long total = db.read(tr -> {
            long sum = 0;
            for (KeyValue kv : tr.getRange(Range.startsWith(ACCOUNT_PREFIX)).asList().join()) {
              sum += asLong(kv.getValue());
            }
            return sum;
          });
          if (total != ACCOUNTS * INITIAL) {
            unexpected.compareAndSet(null, new AssertionError("total " + total + " during the run"));
          }
          reads.incrementAndGet();
        } catch (RuntimeException e) {
          unexpected.compareAndSet(null, new AssertionError("a read failed", e));
        }
      }
    }

    void stop() throws InterruptedException {
      stop.set(true);
      for (Thread t : threads) {
        t.join(60_000);
        assertFalse(t.isAlive(), t.getName() + " still running");
      }
      assertNull(unexpected.get(), () -> "unexpected: " + unexpected.get());
    }

    /** Every acknowledged transfer is there once, none refused outright is, and the money adds up. */
    static void check(EmbeddedDatabase db, Bank run) {
      db.read(tr -> {
        List<KeyValue> txs = tr.getRange(Range.startsWith(TX_PREFIX)).asList().join();
        Set<Long> present = new java.util.HashSet<>();
        for (KeyValue kv : txs) {
          present.add(Long.parseLong(new String(kv.getKey(), StandardCharsets.UTF_8).substring(3)));
        }
        List<Long> missing = run.acknowledged.stream().filter(id -> !present.contains(id)).sorted().toList();
        if (!missing.isEmpty()) {
          // Lost, or only missing from the range read: a point read of each tells them apart.
          long found = missing.stream().filter(id -> tr.get(txKey(id)).join() != null).count();
          throw new AssertionError("acknowledged transfer " + missing.get(0) + " is missing: " + missing.size()
              + " of " + run.acknowledged.size() + " acknowledged are not in the range read (" + txs.size() + " rows), "
              + found + " of them found by a point read; missing " + missing);
        }
        for (long id : run.notCommitted) {
          assertFalse(present.contains(id), "transfer " + id + " was refused as not committed, yet it is there");
        }
        for (long id : present) {
          assertTrue(run.acknowledged.contains(id) || run.unknown.contains(id),
              "transfer " + id + " is there but was never answered success or 1021");
        }
        assertEquals(present.size(), asLong(tr.get(COUNTER).join()),
            "the counter counts each transfer once: none applied twice or half");
        long sum = 0;
        for (KeyValue kv : tr.getRange(Range.startsWith(ACCOUNT_PREFIX)).asList().join()) {
          sum += asLong(kv.getValue());
        }
        assertEquals(ACCOUNTS * INITIAL, sum, "the money adds up");
        return null;
      });
    }
  }

  static void await(BooleanSupplier condition, long seconds, String what) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("not within " + seconds + " s: " + what);
      }
      Thread.sleep(10);
    }
  }

  private static boolean healthy(EmbeddedDatabase db) {
    String status = new String(db.getClientStatus().join(), StandardCharsets.UTF_8);
    assertTrue(status.contains("\"Healthy\":true") || status.contains("\"Healthy\":false"), status);
    return status.contains("\"Healthy\":true");
  }

  /**
   * The engine while the disk is full: commits held with the reason reported, the client status not
   * healthy, reads answered, for at least {@code millis}; then the disk is freed and commits go on.
   * {@code strict}: nothing can free space meanwhile, so nothing is acknowledged (on a real file system
   * the engine's own deletions free some, which a commit may take before the test's filler does).
   */
  static void fullFor(Bank bank, long millis, boolean strict, Runnable free) throws InterruptedException {
    EmbeddedDatabase db = bank.db;
    await(() -> db.commitsHeldBecause().isPresent(), 30, "the full disk is noticed");
    String reason = db.commitsHeldBecause().get();
    assertTrue(reason.contains("disk space"), reason);
    assertFalse(healthy(db), "the client status says what is wrong while commits are held");
    long readsBefore = bank.reads.get();
    Thread.sleep(millis);
    if (strict) {
      assertTrue(db.commitsHeldBecause().isPresent(), "still held while the disk is full");
      long answered = bank.acknowledged.size();
      Thread.sleep(300);
      assertEquals(answered, bank.acknowledged.size(), "nothing is acknowledged while the disk is full");
    }
    assertTrue(bank.reads.get() > readsBefore, "reads go on while the disk is full");
    free.run();
    long before = bank.acknowledged.size();
    await(() -> db.commitsHeldBecause().isEmpty(), 30, "commits go on once space is freed: "
        + db.commitsHeldBecause());
    await(() -> bank.acknowledged.size() > before + 50, 30, "commits are acknowledged again without a reopen");
    assertTrue(healthy(db), "healthy again");
  }

  @Test
  @Tag("slow")
  void aSimulatedDiskThatFillsAtOnceHoldsCommitsKeepsReadsAndGoesOnOnceFreed(@TempDir Path storage) throws Exception {
    NonDurableFileLayer disk = new NonDurableFileLayer();
    FillableDisk fillable = new FillableDisk(disk);
    Path dir = Path.of("/simulated/full-disk");
    Bank bank;
    try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.builder().dataDirectory(dir).files(fillable)
        .storageDirectory(storage).compactAfterLogBytes(256 << 10).build())) {
      bank = new Bank(db, 100);
      bank.start(12);
      for (int round = 0; round < 2; round++) {
        long before = bank.acknowledged.size();
        await(() -> bank.acknowledged.size() > before + 200, 30, "transfers under way");
        fillable.failing = ENOSPC;
        // The first time longer than the MVCC window: reads at the last visible version must stay allowed.
        fullFor(bank, round == 0 ? 6_000 : 500, true, () -> fillable.failing = null);
      }
      bank.stop();
      assertFalse(bank.unknown.isEmpty(), "the commits being written when the disk filled were answered 1021");
      Bank.check(db, bank);
    }
    // And after a power loss that keeps only what was synced.
    try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.builder().dataDirectory(dir)
        .files(disk.afterPowerLoss(new Random(3), NonDurableFileLayer.Loss.ALL_UNFORCED)).storageDirectory(storage)
        .build())) {
      Bank.check(db, bank);
    }
  }


  /**
   * A disk that fails otherwise (EIO) while the log waits for space: the engine stops as for any log
   * failure, and the commits held for the space fail with its error instead of waiting for ever.
   */
  @Test
  void aDiskThatFailsOtherwiseWhileFullStopsTheEngineAndFailsHeldCommits(@TempDir Path storage) throws Exception {
    NonDurableFileLayer nonDurable = new NonDurableFileLayer();
    FillableDisk disk = new FillableDisk(nonDurable);
    try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.builder().dataDirectory(Path.of("/simulated/eio"))
        .files(disk).storageDirectory(storage).build())) {
      db.run(tr -> {
        tr.set(bytes("before"), bytes("1"));
        return null;
      });
      Transaction first = db.createTransaction();
      first.set(bytes("during"), bytes("2"));
      FDBException unknown;
      // The applier waits meanwhile: its manifest write would meet the full disk first and hold the commit.
      try (NonDurableFileLayer.Hold applier = nonDurable.holdSpaceCheck()) {
        applier.awaitReached();
        disk.failing = ENOSPC;
        unknown = FdbErrors.fdbException(
            org.junit.jupiter.api.Assertions.assertThrows(RuntimeException.class, () -> first.commit().join()));
      }
      assertEquals(FdbErrors.COMMIT_UNKNOWN_RESULT, unknown.getCode(), unknown.getMessage());
      assertTrue(db.commitsHeldBecause().isPresent(), "held for space");
      Transaction held = db.createTransaction();
      held.set(bytes("held"), bytes("3"));
      java.util.concurrent.CompletableFuture<Void> heldCommit = held.commit();
      Thread.sleep(300);
      assertFalse(heldCommit.isDone(), "held while the disk is full");

      disk.failing = "Input/output error";
      // Released once the stall ends, it never reaches the log: the failed log refuses its record, or the
      // engine has stopped already; either way it gets the stop error, not 1021.
      FDBException released = FdbErrors.fdbException(org.junit.jupiter.api.Assertions.assertThrows(
          java.util.concurrent.ExecutionException.class, () -> heldCommit.get(30, TimeUnit.SECONDS)));
      assertEquals(FdbErrors.INTERNAL_ERROR, released.getCode(), released.getMessage());
      FDBException stopped = FdbErrors.fdbException(org.junit.jupiter.api.Assertions.assertThrows(RuntimeException.class,
          () -> db.run(tr -> {
            tr.set(bytes("after"), bytes("4"));
            return null;
          })));
      assertEquals(FdbErrors.INTERNAL_ERROR, stopped.getCode(), stopped.getMessage());
      assertTrue(stopped.getMessage().contains("Input/output error"), stopped.getMessage());
      assertTrue(db.commitsHeldBecause().isEmpty(), "no longer held: commits fail");
      assertFalse(healthy(db), "the client status reports the failure");
      first.close();
      held.close();
    }
  }
}
