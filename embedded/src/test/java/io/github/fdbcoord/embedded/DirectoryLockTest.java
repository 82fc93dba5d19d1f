package io.github.fdbcoord.embedded;

import io.github.fdbcoord.embedded.log.CommitLog;
import io.github.fdbcoord.embedded.log.LogFormat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A data directory stays locked against other processes for as long as its log is open, whatever
 * else this JVM does with it. The OS lock is a POSIX record lock, owned by the process and dropped
 * when any channel of the lock file closes, so these checks need a second JVM.
 */
@Timeout(120)
class DirectoryLockTest {
  private static final int OPENED = 0;
  private static final int IN_USE = 3;

  @TempDir
  Path dir;

  /** Child JVM: tries to open the log in args[0]; exits OPENED or IN_USE. */
  public static final class Probe {
    public static void main(String[] args) throws IOException {
      try (CommitLog log = CommitLog.open(Path.of(args[0]), new NoReplay())) {
        System.exit(OPENED);
      } catch (IllegalStateException e) {
        System.exit(e.getMessage().contains("in use") ? IN_USE : 1);
      }
    }
  }

  private static final class NoReplay implements CommitLog.Replay {
    @Override
    public void snapshotEntry(byte[] key, byte[] value) {}

    @Override
    public void record(long version, byte[] payload) {}
  }

  @Test
  @Tag("slow")
  void aFailedSecondOpenInThisJvmLeavesTheDirectoryLockedAgainstOtherProcesses() throws Exception {
    try (CommitLog log = CommitLog.open(dir, new NoReplay())) {
      log.append(1, new byte[] {1}).join();
      IllegalStateException e = assertThrows(IllegalStateException.class, () -> CommitLog.open(dir, new NoReplay()));
      assertTrue(e.getMessage().contains("in use"), e.getMessage());
      // The same directory by another spelling is the same directory.
      assertThrows(IllegalStateException.class, () -> CommitLog.open(dir.resolve("..").resolve(dir.getFileName()),
          new NoReplay()));
      assertEquals(IN_USE, probe(dir), "another process opened a directory this JVM has open");
    }
    assertEquals(OPENED, probe(dir), "the directory stays locked after its log closed");
  }

  @Test
  void aDirectoryCanBeReopenedInThisJvmAfterItsLogClosed() throws Exception {
    try (CommitLog log = CommitLog.open(dir, new NoReplay())) {
      log.append(1, new byte[] {1}).join();
    }
    try (CommitLog log = CommitLog.open(dir, new NoReplay())) {
      assertEquals(1, log.recoveredVersion());
    }
  }

  @Test
  void anOpenThatFailsReleasesItsClaimOnTheDirectory() throws Exception {
    Path lockFile = dir.resolve(LogFormat.LOCK_FILE);
    Files.createDirectories(lockFile);
    assertThrows(IOException.class, () -> CommitLog.open(dir, new NoReplay()));
    Files.delete(lockFile);
    try (CommitLog log = CommitLog.open(dir, new NoReplay())) {
      assertEquals(0, log.recoveredVersion());
    }
  }

  private static int probe(Path dir) throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process child = new ProcessBuilder(java, "-Xmx64m", "-cp", System.getProperty("java.class.path"),
        Probe.class.getName(), dir.toString())
        .redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.DISCARD)
        .start();
    if (!child.waitFor(60, TimeUnit.SECONDS)) {
      child.destroyForcibly();
      throw new AssertionError("the probe JVM did not finish in 60 s");
    }
    return child.exitValue();
  }
}
