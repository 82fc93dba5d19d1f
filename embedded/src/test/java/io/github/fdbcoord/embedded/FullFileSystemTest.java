package io.github.fdbcoord.embedded;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link FullDiskTest}'s transfers on a real size-limited file system (a tmpfs the test mounts: root
 * only, skipped otherwise) filled at once by {@code fallocate}, as the audit did, and filled slowly,
 * then kept full while the engine frees space of its own (log truncation, compactions): the commit
 * log's writes and its manifest's, and RocksDB's flushes (storage on a file system of its own) fail with
 * ENOSPC. Every acknowledged transfer survives, also a reopen; reads go on; commits resume without one.
 */
@Timeout(120)
@Tag("slow")
class FullFileSystemTest {
  private static final String ENOSPC = "No space left on device";

  /** A tmpfs of {@code megabytes} at {@code at}, or the test is skipped (mounting needs root). */
  static void mountTmpfs(Path at, int megabytes) throws Exception {
    boolean root = "root".equals(System.getProperty("user.name"));
    assumeTrue(root, "mounting a size-limited tmpfs needs root; running as " + System.getProperty("user.name"));
    Files.createDirectories(at);
    Process p = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=" + megabytes + "m", "tmpfs", at.toString())
        .redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assumeTrue(p.waitFor() == 0, "cannot mount a tmpfs here (" + output.trim() + ")");
  }

  static void unmount(Path at) throws Exception {
    // Lazily: a failed run may leave a file open (an engine that stopped), and the mount must not outlive the test.
    new ProcessBuilder("umount", "-l", at.toString()).inheritIO().start().waitFor();
  }

  /**
   * Takes all the free space of {@code filler}'s file system with one fallocate, as the audit did (the
   * free space moves while the engine writes: a little less is tried until it fits; the rest fills up).
   */
  private static void fillAtOnce(Path filler) throws Exception {
    long free = Files.getFileStore(filler.getParent()).getUsableSpace();
    String output = "";
    for (long size = free; size > free / 2; size -= 256 << 10) {
      Process p = new ProcessBuilder("fallocate", "-l", Long.toString(size), filler.toString())
          .redirectErrorStream(true).start();
      output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (p.waitFor() == 0) {
        return;
      }
    }
    throw new AssertionError("fallocate never fitted: " + output);
  }

  /** Writes {@code filler} 256 KiB at a time until the file system is full. */
  private static void fillSlowly(Path filler) throws Exception {
    byte[] chunk = new byte[256 << 10];
    try (OutputStream out = Files.newOutputStream(filler)) {
      while (true) {
        out.write(chunk);
        out.flush();
        Thread.sleep(5);
      }
    } catch (IOException e) {
      assertTrue(String.valueOf(e.getMessage()).contains(ENOSPC), "filled until ENOSPC: " + e);
    }
  }

  /** Keeps the file system full: whatever the engine frees (log truncation, compactions), it takes. */
  private static Thread topUp(Path topper, AtomicBoolean freed) {
    Thread t = new Thread(() -> {
      byte[] block = new byte[4096];
      try (OutputStream out = Files.newOutputStream(topper)) {
        while (!freed.get()) {
          try {
            out.write(block);
            out.flush();
          } catch (IOException full) {
            Thread.sleep(1);
          }
        }
      } catch (IOException | InterruptedException e) {
        throw new AssertionError(e);
      }
    }, "top-up");
    t.start();
    return t;
  }

  /**
   * Transfers on the engine {@code options} describe, until they are under way; then the tmpfs at
   * {@code mount} is filled (at once or slowly) and kept full, then freed; then the engine is reopened.
   * {@code named}: what the reason for holding commits must name while it is full.
   */
  static void fullWhileWriting(Path mount, EmbeddedOptions options, int valueBytes, boolean atOnce,
      String named) throws Exception {
    Path filler = mount.resolve("filler");
    Path topper = mount.resolve("topper");
    FullDiskTest.Bank bank;
    try (EmbeddedDatabase db = EmbeddedDatabase.open(options)) {
      bank = new FullDiskTest.Bank(db, valueBytes);
      bank.start(12);
      FullDiskTest.await(() -> bank.acknowledged.size() > 200, 30, "transfers under way");
      if (atOnce) {
        fillAtOnce(filler);
      } else {
        fillSlowly(filler);
      }
      AtomicBoolean freed = new AtomicBoolean();
      Thread topping = topUp(topper, freed);
      FullDiskTest.fullFor(bank, 2_000, false, () -> {
        String reason = db.commitsHeldBecause().orElse("");
        assertTrue(reason.contains(named), "names the " + named + ": " + reason);
        try {
          freed.set(true);
          topping.join();
          Files.delete(filler);
          Files.delete(topper);
        } catch (IOException | InterruptedException e) {
          throw new AssertionError(e);
        }
      });
      bank.stop();
      FullDiskTest.Bank.check(db, bank);
    }
    String space = spaceOf(mount);
    try (EmbeddedDatabase db = EmbeddedDatabase.open(options)) {
      FullDiskTest.Bank.check(db, bank);
    } catch (RuntimeException e) {
      throw new AssertionError("reopen failed; after the close " + space, e);
    }
  }

  /** The free space of the file system at {@code mount} and the size of every file on it, for a failure's message. */
  private static String spaceOf(Path mount) throws IOException {
    StringBuilder files = new StringBuilder();
    try (var walk = Files.walk(mount)) {
      walk.filter(Files::isRegularFile).forEach(f -> {
        try {
          files.append(' ').append(mount.relativize(f)).append('=').append(Files.size(f) >> 10).append("K");
        } catch (IOException e) {
          files.append(' ').append(f).append("=?");
        }
      });
    }
    return Files.getFileStore(mount).getUsableSpace() / 1024 + " KiB free of "
        + Files.getFileStore(mount).getTotalSpace() / 1024 + " KiB; files:" + files;
  }

  /** The log and the storage on one tmpfs. */
  private static void dataDirectoryFilled(Path root, boolean atOnce) throws Exception {
    Path mount = root.resolve("tmpfs");
    mountTmpfs(mount, 64);
    try {
      fullWhileWriting(mount, EmbeddedOptions.builder().dataDirectory(mount.resolve("data")).minFreeSpaceBytes(0)
          .compactAfterLogBytes(1 << 20).storageWriteBufferBytes(2 << 20).storageCacheBytes(4 << 20).build(), 1000,
          atOnce, "disk space");
    } finally {
      unmount(mount);
    }
  }

  /**
   * The storage alone on a file system filled at once (the log has room): RocksDB's flush behind a log
   * truncation or its write fails with ENOSPC, commits wait for it, and RocksDB resumes by itself once
   * space is freed. Large transfer records: the log rolls, and the storage must flush, every few commits.
   */
  @Test
  void aStorageFileSystemFilledAtOnce(@TempDir Path root) throws Exception {
    Path mount = root.resolve("tmpfs");
    // Room beyond the data (16 kB per transfer): once the filler is gone RocksDB resumes with a burst of
    // flushes and compactions, each of which needs its output's space before its inputs go. With 48 MiB
    // the flush at close ran out of space again twice in about 100 runs, and the reopen failed with it.
    mountTmpfs(mount, 96);
    try {
      fullWhileWriting(mount, EmbeddedOptions.builder().dataDirectory(root.resolve("data"))
          .storageDirectory(mount.resolve("storage")).minFreeSpaceBytes(0).compactAfterLogBytes(256 << 10)
          .storageWriteBufferBytes(2 << 20).storageCacheBytes(4 << 20).build(), 16_000, true, "storage");
    } finally {
      unmount(mount);
    }
  }

  @Test
  void aRealFileSystemFilledAtOnceByFallocate(@TempDir Path root) throws Exception {
    dataDirectoryFilled(root, true);
  }

  @Test
  void aRealFileSystemFilledSlowly(@TempDir Path root) throws Exception {
    dataDirectoryFilled(root, false);
  }
}
