package io.github.fdbcoord.embedded;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.fdbcoord.embedded.log.CommitLog;
import io.github.fdbcoord.embedded.log.LogRecordWriter;

import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.StreamingMode;
import com.apple.foundationdb.async.AsyncIterator;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A durable store holding more data than the heap of the process that reopens it: a first child JVM
 * (1 GB heap) writes 3,000,000 keys of 16 bytes with 100-byte values (348 MB of keys and values) as commit
 * log records of 60,000 keys and opens the directory once, which moves them into RocksDB.
 * A second child with {@code -Xmx256m} reopens the directory, reads 2,000 random keys, counts and checks
 * every key and value with a range scan in chunks (one transaction per chunk: a transaction lives 5 s),
 * writes 100,000 more keys and closes. The parent checks both children's exit codes and reports, then
 * opens the directory itself and counts the new keys. Heap in use does not grow with the stored keys:
 * the engine keeps only the last seconds of writes in memory, RocksDB the rest on disk.
 */
@Timeout(600)
@Tag("slow")
class LargerThanHeapRestartTest {
  static final int KEYS = 3_000_000;
  static final int MORE = 100_000;
  static final int VALUE_BYTES = 100;
  private static final int KEYS_PER_TRANSACTION = 60_000;
  private static final int SCAN_CHUNK = 100_000;
  private static final int SAMPLES = 2_000;

  private Path dir;

  @BeforeEach
  void createDir() throws Exception {
    dir = Files.createTempDirectory("larger-than-heap-test-");
  }

  @AfterEach
  void removeDir() throws Exception {
    CrashBank.deleteRecursively(dir);
  }

  /** 16 bytes: a prefix letter and 15 digits. */
  static byte[] key(char prefix, long i) {
    byte[] k = new byte[16];
    k[0] = (byte) prefix;
    for (int j = 15; j > 0; j--, i /= 10) {
      k[j] = (byte) ('0' + i % 10);
    }
    return k;
  }

  /** 100 bytes derived from the key's number, so that every value can be checked. */
  static byte[] value(long i) {
    byte[] v = new byte[VALUE_BYTES];
    ByteBuffer.wrap(v).putLong(i);
    for (int j = 8; j < VALUE_BYTES; j++) {
      v[j] = (byte) (i * 31 + j);
    }
    return v;
  }

  private static void write(EmbeddedDatabase db, char prefix, long from, long to) {
    for (long start = from; start < to; start += KEYS_PER_TRANSACTION) {
      long s = start;
      long e = Math.min(to, start + KEYS_PER_TRANSACTION);
      db.run(tr -> {
        for (long i = s; i < e; i++) {
          tr.set(key(prefix, i), value(i));
        }
        return null;
      });
    }
  }

  /**
   * First child: {@code args = dir}. Writes the keys as commit log records of 60,000 keys each, through the
   * log's own API, then opens the directory as a database, which replays them into RocksDB, flushes it and
   * truncates the log, and closes it; prints "FILLED n" and exits 0. (Through transactions the same keys take
   * about four times as long on two busy cores: every key passes through the MVCC window first.)
   */
  public static final class Filler {
    public static void main(String[] args) throws IOException {
      Path dir = Path.of(args[0]);
      long started = System.nanoTime();
      try (CommitLog log = CommitLog.open(dir, new CommitLog.Replay() {
        @Override
        public void snapshotEntry(byte[] key, byte[] value) {
          throw new AssertionError("a new directory");
        }

        @Override
        public void record(long version, byte[] payload) {
          throw new AssertionError("a new directory");
        }
      })) {
        CompletableFuture<Void> last = null;
        long version = 0;
        for (long from = 0; from < KEYS; from += KEYS_PER_TRANSACTION) {
          LogRecordWriter record = new LogRecordWriter();
          for (long i = from; i < Math.min(KEYS, from + KEYS_PER_TRANSACTION); i++) {
            record.set(key('k', i), value(i));
          }
          last = log.append(++version, record.toByteArray());
        }
        last.join();
      }
      long logged = System.nanoTime();
      try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.durable(dir))) {
        // A few keys through a transaction too, and one read back.
        write(db, 'k', KEYS - 10, KEYS);
        if (!Arrays.equals(value(7), db.read(tr -> tr.get(key('k', 7)).join()))) {
          throw new AssertionError("key 7 was not recovered");
        }
      }
      System.out.println("FILLED " + KEYS + ": log written in " + (logged - started) / 1_000_000
          + " ms, replayed into the storage and closed in " + (System.nanoTime() - logged) / 1_000_000 + " ms");
      System.exit(0);
    }
  }

  /**
   * Second child, small heap: {@code args = dir}. Prints "SAMPLED n", "COUNTED n", "HEAP used max", "WROTE n";
   * exits 0 when every check passed, 1 (with the reason on stderr) otherwise.
   */
  public static final class Verifier {
    public static void main(String[] args) {
      try {
        run(Path.of(args[0]));
        System.exit(0);
      } catch (Throwable t) {
        t.printStackTrace();
        System.exit(1);
      }
    }

    private static void run(Path dir) {
      long started = System.nanoTime();
      try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.durable(dir))) {
        System.out.println("OPENED in " + (System.nanoTime() - started) / 1_000_000 + " ms");
        Random random = new Random(42);
        for (int done = 0; done < SAMPLES; done += 500) {
          db.read(tr -> {
            for (int j = 0; j < 500; j++) {
              long i = random.nextInt(KEYS);
              check(i, tr.get(key('k', i)).join());
            }
            return null;
          });
        }
        check(-1, db.read(tr -> tr.get(key('k', KEYS)).join())); // one past the last: absent
        System.out.println("SAMPLED " + SAMPLES);
        long scanStarted = System.nanoTime();
        long counted = 0;
        byte[] begin = key('k', 0);
        byte[] end = new byte[] {'l'};
        while (true) {
          byte[] from = begin;
          long[] next = {counted};
          // A chunk per transaction, streamed: nothing of the range is held beyond one batch.
          byte[] last = db.read(tr -> scan(tr, from, end, next));
          if (last == null) {
            break;
          }
          counted = next[0];
          begin = Arrays.copyOf(last, last.length + 1); // just after the last key read
        }
        if (counted != KEYS) {
          throw new AssertionError("counted " + counted + " keys, expected " + KEYS);
        }
        System.out.println("COUNTED " + counted + " in " + (System.nanoTime() - scanStarted) / 1_000_000 + " ms");
        System.gc();
        Runtime rt = Runtime.getRuntime();
        System.out.println("HEAP " + (rt.totalMemory() - rt.freeMemory()) / (1 << 20) + " MB used of "
            + rt.maxMemory() / (1 << 20) + " MB; peak "
            + ManagementFactory.getMemoryPoolMXBeans().stream()
                .filter(p -> p.getType() == java.lang.management.MemoryType.HEAP)
                .mapToLong(p -> p.getPeakUsage().getUsed()).sum() / (1 << 20) + " MB summed over pools");
        write(db, 'm', 0, MORE);
        System.out.println("WROTE " + MORE);
      }
    }

    /** Reads up to {@link #SCAN_CHUNK} keys from {@code begin}, checking each; returns the last key, or null at the end. */
    private static byte[] scan(ReadTransaction tr, byte[] begin, byte[] end, long[] counted) {
      long expected = counted[0];
      byte[] last = null;
      AsyncIterator<KeyValue> it = tr.getRange(begin, end, SCAN_CHUNK, false, StreamingMode.WANT_ALL).iterator();
      while (it.hasNext()) {
        KeyValue kv = it.next();
        if (!Arrays.equals(key('k', expected), kv.getKey())) {
          throw new AssertionError("key " + expected + " missing: found " + new String(kv.getKey(), StandardCharsets.US_ASCII));
        }
        check(expected, kv.getValue());
        expected++;
        last = kv.getKey();
      }
      counted[0] = expected;
      return last;
    }

    private static void check(long i, byte[] actual) {
      byte[] expected = i < 0 ? null : value(i);
      if (!Arrays.equals(expected, actual)) {
        throw new AssertionError("wrong value for key " + i);
      }
    }
  }

  /** Runs a child JVM to completion; returns its stdout lines. */
  private static List<String> runChild(Class<?> main, String heap, Path dir, int maxSeconds) throws Exception {
    // The engine ignores what it does not know in its directory: the children's temporary files go there.
    Path childTmp = Files.createDirectories(dir.resolve("jvm-tmp"));
    Process child = new ProcessBuilder(ChildJvm.command(childTmp, heap, main, dir.toString()))
        .redirectError(ProcessBuilder.Redirect.INHERIT)
        .start();
    List<String> lines = new ArrayList<>();
    Thread reader = new Thread(() -> {
      try (BufferedReader in = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line; (line = in.readLine()) != null; ) {
          synchronized (lines) {
            lines.add(line);
          }
        }
      } catch (IOException e) {
        // The child ended.
      }
    });
    reader.start();
    try {
      assertTrue(child.waitFor(maxSeconds, TimeUnit.SECONDS), main.getSimpleName() + " did not finish in " + maxSeconds + " s");
    } finally {
      ChildJvm.kill(child);
    }
    ChildJvm.joinReader(reader);
    synchronized (lines) {
      System.out.println(main.getSimpleName() + ": exit " + child.exitValue() + ", " + lines);
      assertEquals(0, child.exitValue(), main.getSimpleName() + " failed: " + lines);
      return new ArrayList<>(lines);
    }
  }

  @Test
  void aStoreLargerThanTheHeapReopensAndIsReadAndWrittenInA256MbHeap() throws Exception {
    long started = System.nanoTime();
    List<String> filled = runChild(Filler.class, "1g", dir, 300);
    assertTrue(filled.stream().anyMatch(l -> l.startsWith("FILLED " + KEYS)), filled::toString);
    long fillMillis = (System.nanoTime() - started) / 1_000_000;
    long verifyStarted = System.nanoTime();
    List<String> verified = runChild(Verifier.class, "256m", dir, 300);
    long verifyMillis = (System.nanoTime() - verifyStarted) / 1_000_000;
    assertTrue(verified.contains("SAMPLED " + SAMPLES), verified::toString);
    assertTrue(verified.stream().anyMatch(l -> l.startsWith("COUNTED " + KEYS + " ")), verified::toString);
    assertTrue(verified.contains("WROTE " + MORE), verified::toString);
    String heap = verified.stream().filter(l -> l.startsWith("HEAP ")).findFirst().orElseThrow();
    long usedAfterScan = Long.parseLong(heap.split(" ")[1]);
    assertTrue(usedAfterScan < 64, "heap in use after the scan, with the database open, grows with the stored keys: "
        + heap);
    try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.durable(dir))) {
      List<KeyValue> more = db.read(tr -> tr.getRange(key('m', 0), key('m', MORE)).asList().join());
      assertEquals(MORE, more.size(), "the keys the 256 MB child wrote");
      assertTrue(Arrays.equals(value(MORE - 1), more.get(MORE - 1).getValue()));
    }
    System.out.printf("LargerThanHeapRestartTest: fill %d ms, verify in 256 MB %d ms, total %d ms%n", fillMillis,
        verifyMillis, (System.nanoTime() - started) / 1_000_000);
  }
}
