package io.github.fdbcoord.embedded;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.fdbcoord.embedded.storage.RocksStorage;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A JVM ends while the storage compacts: the process exits. RocksDB's exit handler waits for its background threads
 * while the JVM holds the lock a native thread takes to call into Java; when the storage counted its running
 * compactions through RocksDB's callbacks, the compaction that ended during the exit called back and the process
 * hung for ever (ApplyKillTest's child, halted at its kill point, never exited: a CI run failed on it).
 */
@Timeout(200)
@Tag("slow")
class ExitDuringCompactionTest {
  /** Exit status of the child that halted while a compaction ran. */
  private static final int HALTED = 86;
  private static final int TABLES = 8;
  private static final int KEYS_PER_TABLE = 2_048;
  private static final int VALUE_BYTES = 4_096;

  private Path dir;

  @BeforeEach
  void createDir() throws Exception {
    dir = Files.createTempDirectory("exit-during-compaction-test-");
  }

  @AfterEach
  void removeDir() throws Exception {
    CrashBank.deleteRecursively(dir);
  }

  @Test
  void aProcessThatHaltsWhileItsStorageCompactsExits() throws Exception {
    Path childTmp = Files.createDirectories(dir.resolve("jvm-tmp"));
    Process child = new ProcessBuilder(ChildJvm.command(childTmp, "256m", Child.class, dir.resolve("data").toString()))
        .redirectError(ProcessBuilder.Redirect.INHERIT)
        .start();
    StringBuilder output = new StringBuilder();
    Thread reader = new Thread(() -> {
      try (BufferedReader in = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line; (line = in.readLine()) != null; ) {
          synchronized (output) {
            output.append(line).append('\n');
          }
        }
      } catch (Exception e) {
        // The child ended.
      }
    }, "child-stdout");
    reader.start();
    try {
      // Writing and flushing 64 MiB takes seconds; the exit after the halt, milliseconds (or for ever).
      boolean exited = child.waitFor(120, TimeUnit.SECONDS);
      String seen;
      synchronized (output) {
        seen = output.toString();
      }
      assertTrue(seen.contains("HALT"), "the child never saw a compaction run: " + seen);
      assertTrue(exited, "the child halted while a compaction ran and did not exit: " + seen);
      assertEquals(HALTED, child.exitValue(), seen);
    } finally {
      ChildJvm.kill(child);
      child.waitFor(30, TimeUnit.SECONDS);
      ChildJvm.joinReader(reader);
    }
  }

  /**
   * Writes {@link #TABLES} overlapping table files with compactions held back, lets them compact, and halts as soon
   * as a compaction runs (as a kill point or {@code System.exit} may, without closing the storage).
   */
  public static final class Child {
    public static void main(String[] args) throws Exception {
      RocksStorage storage = RocksStorage.open(Path.of(args[0]), 8L << 20, 64L << 20, 0, false, false, true);
      storage.roomForCompactions(0);
      Random random = new Random(40);
      byte[] value = new byte[VALUE_BYTES];
      for (int t = 0; t < TABLES; t++) {
        RocksStorage.WriteBatchBuilder batch = storage.batch();
        for (int i = 0; i < KEYS_PER_TABLE; i++) {
          random.nextBytes(value);
          // Every table spans the whole key space: a compaction must take them all.
          batch.set(String.format("k/%05d/%02d", i, t).getBytes(StandardCharsets.UTF_8), value.clone());
        }
        storage.apply(batch, t + 1);
        storage.flush();
      }
      storage.roomForCompactions(1L << 40);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (storage.compactionBytesInFlight() == 0) {
        if (System.nanoTime() > deadline) {
          System.out.println("NO COMPACTION");
          System.out.flush();
          Runtime.getRuntime().halt(1);
        }
        Thread.onSpinWait();
      }
      System.out.println("HALT while " + storage.compactionBytesInFlight() + " bytes are being compacted");
      System.out.flush();
      Runtime.getRuntime().halt(HALTED);
    }
  }
}
