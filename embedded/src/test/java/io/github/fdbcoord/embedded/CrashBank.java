package io.github.fdbcoord.embedded;

import io.github.fdbcoord.embedded.engine.ApplyObserver;
import io.github.fdbcoord.embedded.engine.ApplyStep;
import io.github.fdbcoord.embedded.log.FileLayer;
import io.github.fdbcoord.embedded.log.ForwardingFileLayer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.Range;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * Money transfers on a durable {@link EmbeddedDatabase} in a child JVM that dies at a chosen point of the
 * engine's work (an applier step, the k-th deletion of a log segment) or is SIGKILLed, and the checks made
 * after its directory is reopened: every acknowledged transfer is there, none is there in part (each
 * account is its opening balance plus exactly the recorded transfers), the total is unchanged, and a
 * "bulk" transaction (8,700 keys, more than one apply batch's 8 MiB) is there whole or not at all.
 */
final class CrashBank {
  static final int ACCOUNTS = 16;
  static final long OPENING = 1_000;
  /** Exit status of a child that halted itself at its kill point. */
  static final int HALTED = 86;
  /** Keys and value size of one bulk transaction: its log record (about 8.9 MB) is more than one 8 MiB apply batch. */
  static final int BULK_KEYS = 8_700;
  static final int BULK_VALUE_BYTES = 1_000;
  private static final byte[] BULK_GEN = bytes("bulkgen");

  private CrashBank() {}

  static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static byte[] account(int i) {
    return bytes(String.format("acct/%02d", i));
  }

  static byte[] transferKey(String id) {
    return bytes("xfer/" + id);
  }

  static byte[] bulkKey(int i) {
    return bytes(String.format("bulk/%05d", i));
  }

  static byte[] encode(long... values) {
    ByteBuffer b = ByteBuffer.allocate(8 * values.length);
    for (long v : values) {
      b.putLong(v);
    }
    return b.array();
  }

  static long[] decode(byte[] bytes) {
    ByteBuffer b = ByteBuffer.wrap(bytes);
    long[] out = new long[bytes.length / 8];
    for (int i = 0; i < out.length; i++) {
      out[i] = b.getLong();
    }
    return out;
  }

  /** Creates the accounts unless they exist. */
  static void openAccounts(EmbeddedDatabase db) {
    db.run(tr -> {
      if (tr.get(account(0)).join() == null) {
        for (int i = 0; i < ACCOUNTS; i++) {
          tr.set(account(i), encode(OPENING));
        }
      }
      return null;
    });
  }

  /** Moves a random amount between two random accounts and records it under {@code id}, at most once. */
  static void transfer(EmbeddedDatabase db, String id, Random random) {
    int from = random.nextInt(ACCOUNTS);
    int to = (from + 1 + random.nextInt(ACCOUNTS - 1)) % ACCOUNTS;
    long amount = 1 + random.nextInt(50);
    db.run(tr -> {
      if (tr.get(transferKey(id)).join() != null) {
        return null; // an earlier attempt committed (commit_unknown_result, then retried)
      }
      long a = decode(tr.get(account(from)).join())[0];
      long b = decode(tr.get(account(to)).join())[0];
      tr.set(account(from), encode(a - amount));
      tr.set(account(to), encode(b + amount));
      tr.set(transferKey(id), encode(from, to, amount));
      return null;
    });
  }

  /** Overwrites every bulk key with generation {@code gen}, in one transaction. */
  static void bulk(EmbeddedDatabase db, long gen) {
    byte[] value = new byte[BULK_VALUE_BYTES];
    Arrays.fill(value, (byte) gen);
    ByteBuffer.wrap(value).putLong(gen);
    db.run(tr -> {
      for (int i = 0; i < BULK_KEYS; i++) {
        tr.set(bulkKey(i), value);
      }
      tr.set(BULK_GEN, encode(gen));
      return null;
    });
  }

  /** What the child reported: acknowledged transfer ids, acknowledged bulk generations, its kill point. */
  static final class ChildRun {
    final Set<String> acked = ConcurrentHashMap.newKeySet();
    final AtomicLong maxBulkAcked = new AtomicLong(-1);
    volatile String halt;
    volatile boolean ready;
    int exitCode;
    long millis;

    @Override
    public String toString() {
      return String.format("exit %d after %d ms, %s, %d transfers and bulk generation %d acknowledged%s", exitCode,
          millis, halt == null ? "no halt" : "halted at \"" + halt + "\"", acked.size(), maxBulkAcked.get(),
          ready ? "" : ", never ready");
    }
  }

  /**
   * Runs {@link Child} on {@code dir}. With {@code killAfterMillis > 0} the parent SIGKILLs it that long
   * after it is ready; otherwise the child must halt itself at its kill point within {@code maxSeconds}.
   */
  static ChildRun runChild(Path dir, String round, int writers, long compactAfter, boolean bulk, String kill,
      long killAfterMillis, int maxSeconds) throws Exception {
    long started = System.nanoTime();
    // The engine ignores what it does not know in its directory: the children's temporary files go there.
    Path childTmp = Files.createDirectories(dir.resolve("jvm-tmp"));
    Process child = new ProcessBuilder(ChildJvm.command(childTmp, "512m", Child.class, dir.toString(), round,
        Integer.toString(writers), Long.toString(compactAfter), Boolean.toString(bulk), kill))
        .redirectError(ProcessBuilder.Redirect.INHERIT)
        .start();
    ChildRun run = new ChildRun();
    Object readyLock = new Object();
    Thread reader = new Thread(() -> {
      try (BufferedReader in = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line; (line = in.readLine()) != null; ) {
          if (line.startsWith("ACK ")) {
            run.acked.add(line.substring(4));
          } else if (line.startsWith("BULK ")) {
            run.maxBulkAcked.accumulateAndGet(Long.parseLong(line.substring(5)), Math::max);
          } else if (line.startsWith("HALT ")) {
            run.halt = line.substring(5);
          } else if (line.equals("READY")) {
            synchronized (readyLock) {
              run.ready = true;
              readyLock.notifyAll();
            }
          }
        }
      } catch (IOException | RuntimeException e) {
        // The child died: its stdout ends (a line cut short is ignored).
      }
    }, "child-stdout");
    reader.start();
    try {
      if (killAfterMillis > 0) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(maxSeconds);
        synchronized (readyLock) {
          while (!run.ready && child.isAlive() && System.nanoTime() < deadline) {
            readyLock.wait(100);
          }
        }
        assertTrue(run.ready, "the child did not start");
        Thread.sleep(killAfterMillis);
        assertTrue(child.isAlive(), () -> "the child died before it was killed: " + child.exitValue());
        ChildJvm.kill(child);
      }
      assertTrue(child.waitFor(maxSeconds, TimeUnit.SECONDS),
          () -> "round " + round + ": the child did not reach its kill point (" + kill + ") in " + maxSeconds + " s");
    } finally {
      ChildJvm.kill(child);
      child.waitFor(30, TimeUnit.SECONDS);
    }
    ChildJvm.joinReader(reader);
    run.exitCode = child.exitValue();
    run.millis = (System.nanoTime() - started) / 1_000_000;
    return run;
  }

  /**
   * The child process: {@code args = dir round writers compactAfterLogBytes bulk kill}. Writers transfer money
   * and print "ACK id" once a transfer is acknowledged; with {@code bulk} a thread commits a bulk transaction
   * every second and prints "BULK gen". {@code kill} is where the process halts itself (after printing
   * "HALT what"), {@code none} to run until killed:
   * <ul>
   *   <li>{@code written:N}: the N-th batch in RocksDB, before its versions leave the window;
   *   <li>{@code written-split:N}: the N-th such batch that is not the last of its round (the round was over 8 MiB);
   *   <li>{@code evicted-mid:N}: the N-th eviction chunk that is not the last of its batch;
   *   <li>{@code written-after-truncation:N}: the N-th batch written after a log segment was deleted;
   *   <li>{@code delete-before:K}, {@code delete-after:K}: just before or just after the K-th deletion of a
   *       {@code log-*.seg} file (counted from the start of the process, recovery included).
   * </ul>
   */
  public static final class Child {
    private static final AtomicInteger segmentDeletions = new AtomicInteger();
    private static final AtomicInteger matches = new AtomicInteger();

    public static void main(String[] args) throws Exception {
      Path dir = Path.of(args[0]);
      String round = args[1];
      int writers = Integer.parseInt(args[2]);
      long compactAfter = Long.parseLong(args[3]);
      boolean bulk = Boolean.parseBoolean(args[4]);
      String[] kill = args[5].split(":");
      String point = kill[0];
      int n = kill.length > 1 ? Integer.parseInt(kill[1]) : 0;
      ApplyObserver observer = (step, version, more) -> {
        boolean at = switch (point) {
          case "written" -> step == ApplyStep.WRITTEN;
          case "written-split" -> step == ApplyStep.WRITTEN && more;
          case "evicted-mid" -> step == ApplyStep.EVICTED && more;
          case "written-after-truncation" -> step == ApplyStep.WRITTEN && segmentDeletions.get() > 0;
          default -> false;
        };
        if (at && matches.incrementAndGet() == n) {
          halt(point + " " + n + ": " + step + " through version " + version + (more ? ", more to come" : ""));
        }
      };
      FileLayer files = new KillingFiles(point, n);
      EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.builder().dataDirectory(dir)
          .compactAfterLogBytes(compactAfter).files(files).applyObserver(observer).build());
      openAccounts(db);
      List<Thread> threads = new ArrayList<>();
      for (int w = 0; w < writers; w++) {
        int writer = w;
        threads.add(new Thread(() -> {
          Random random = new Random(round.hashCode() * 31L + writer);
          for (long seq = 0; ; seq++) {
            String id = round + "/" + writer + "/" + seq;
            transfer(db, id, random);
            print("ACK " + id);
          }
        }, "writer-" + w));
      }
      if (bulk) {
        threads.add(new Thread(() -> {
          byte[] stored = db.read(tr -> tr.get(BULK_GEN).join());
          for (long gen = stored == null ? 1 : decode(stored)[0] + 1; ; gen++) {
            bulk(db, gen);
            print("BULK " + gen);
            try {
              Thread.sleep(1000);
            } catch (InterruptedException e) {
              return;
            }
          }
        }, "bulk"));
      }
      print("READY");
      for (Thread t : threads) {
        t.setDaemon(true);
        t.start();
      }
      for (Thread t : threads) {
        t.join();
      }
    }

    private static void print(String line) {
      synchronized (System.out) {
        System.out.println(line);
        System.out.flush();
      }
    }

    /** Dies here, as a crash would: no shutdown hooks, no close, nothing flushed. */
    private static void halt(String what) {
      print("HALT " + what);
      Runtime.getRuntime().halt(HALTED);
    }

    /** The real file system, with a halt at the k-th deletion of a log segment. */
    private static final class KillingFiles extends ForwardingFileLayer {
      private final String point;
      private final int k;

      KillingFiles(String point, int k) {
        super(FileLayer.NIO);
        this.point = point;
        this.k = k;
      }

      @Override
      public boolean deleteIfExists(Path file) throws IOException {
        String name = file.getFileName().toString();
        if (!(name.startsWith("log-") && name.endsWith(".seg"))) {
          return delegate.deleteIfExists(file);
        }
        int count = segmentDeletions.get() + 1;
        if (point.equals("delete-before") && count == k) {
          halt(point + " " + k + ": " + name);
        }
        boolean deleted = delegate.deleteIfExists(file);
        segmentDeletions.incrementAndGet();
        if (point.equals("delete-after") && count == k) {
          halt(point + " " + k + ": " + name + (deleted ? " deleted" : " was not there"));
        }
        return deleted;
      }
    }
  }

  /** Checks the bank and the bulk keys; returns the ids of the transfers present. */
  static Set<String> check(EmbeddedDatabase db, String when, Set<String> acknowledged, long maxBulkAcked) {
    List<KeyValue> transfers = db.read(tr -> tr.getRange(Range.startsWith(transferKey(""))).asList().join());
    long[] expected = new long[ACCOUNTS];
    Arrays.fill(expected, OPENING);
    Set<String> present = new TreeSet<>();
    for (KeyValue kv : transfers) {
      long[] t = decode(kv.getValue());
      expected[(int) t[0]] -= t[2];
      expected[(int) t[1]] += t[2];
      present.add(new String(kv.getKey(), StandardCharsets.UTF_8).substring("xfer/".length()));
    }
    long[] balances = new long[ACCOUNTS];
    long total = 0;
    for (int i = 0; i < ACCOUNTS; i++) {
      int a = i;
      byte[] stored = db.read(tr -> tr.get(account(a)).join());
      assertTrue(stored != null, when + ": account " + i + " is missing");
      balances[i] = decode(stored)[0];
      total += balances[i];
    }
    Set<String> lost = new TreeSet<>(acknowledged);
    lost.removeAll(present);
    assertTrue(lost.isEmpty(), when + ": " + lost.size() + " acknowledged transfers lost, e.g. "
        + lost.stream().limit(10).toList());
    assertEquals(ACCOUNTS * OPENING, total, when + ": money made or lost: " + Arrays.toString(balances));
    for (int i = 0; i < ACCOUNTS; i++) {
      assertEquals(expected[i], balances[i], when + ": account " + i
          + " does not match the transfers recorded (a transfer applied in part)");
    }
    byte[] gen = db.read(tr -> tr.get(BULK_GEN).join());
    if (gen == null) {
      assertEquals(-1, maxBulkAcked, when + ": an acknowledged bulk transaction was lost");
    } else {
      long g = decode(gen)[0];
      assertTrue(g >= maxBulkAcked, when + ": bulk generation " + maxBulkAcked + " was acknowledged, " + g + " found");
      List<KeyValue> keys = db.read(tr -> tr.getRange(Range.startsWith(bytes("bulk/"))).asList().join());
      assertEquals(BULK_KEYS, keys.size(), when + ": bulk keys");
      for (KeyValue kv : keys) {
        assertEquals(g, ByteBuffer.wrap(kv.getValue()).getLong(), when + ": bulk transaction " + g
            + " applied in part: " + new String(kv.getKey(), StandardCharsets.UTF_8));
      }
    }
    return present;
  }

  /**
   * Reopens {@code dir} after a crash: checks it, makes more transfers (the engine works after recovery),
   * closes it cleanly, reopens it and checks again. Adds the new transfers to {@code acknowledged}.
   */
  static int reopenCheckAndContinue(Path dir, String when, Set<String> acknowledged, long maxBulkAcked)
      throws InterruptedException {
    int present;
    try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.durable(dir))) {
      present = check(db, when, acknowledged, maxBulkAcked).size();
      Set<String> more = ConcurrentHashMap.newKeySet();
      List<Thread> threads = new ArrayList<>();
      for (int w = 0; w < 4; w++) {
        int worker = w;
        threads.add(new Thread(() -> {
          Random random = new Random(worker);
          for (int n = 0; n < 25; n++) {
            String id = when.replace(' ', '-') + "-after/" + worker + "/" + n;
            transfer(db, id, random);
            more.add(id);
          }
        }, "after-" + w));
      }
      threads.forEach(Thread::start);
      for (Thread t : threads) {
        t.join(TimeUnit.SECONDS.toMillis(60));
        assertFalse(t.isAlive(), when + ": " + t.getName() + " did not finish");
      }
      assertEquals(100, more.size(), when + ": the reopened database takes transfers");
      acknowledged.addAll(more);
      check(db, when + ", after more transfers", acknowledged, maxBulkAcked);
    }
    try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.durable(dir))) {
      check(db, when + ", after a clean close", acknowledged, maxBulkAcked);
    }
    return present;
  }

  static void deleteRecursively(Path dir) throws IOException {
    if (dir == null || !Files.exists(dir)) {
      return;
    }
    try (Stream<Path> s = Files.walk(dir)) {
      for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
