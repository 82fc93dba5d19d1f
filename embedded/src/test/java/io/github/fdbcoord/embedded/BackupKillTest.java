package io.github.fdbcoord.embedded;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A process SIGKILLed while it writes a backup: its child JVM transfers money with 8 writers and backs the
 * database up again and again (into {@code backup-0}, {@code backup-1}, ...); the parent kills it part-way
 * through one. Then the data directory reopens with every acknowledged transfer, each finished backup
 * restores to a bank holding every transfer acknowledged before it started, and the backup the kill cut
 * short is refused at restore as incomplete.
 */
@Timeout(300)
@Tag("slow")
class BackupKillTest {
  private Path root;
  private Path data;
  private Path backups;

  @BeforeEach
  void createDirs() throws IOException {
    root = Files.createTempDirectory("backup-kill-test-");
    data = root.resolve("data");
    backups = Files.createDirectory(root.resolve("backups"));
  }

  @AfterEach
  void removeDirs() throws IOException {
    CrashBank.deleteRecursively(root);
  }

  /** What the child printed, in order: acknowledged transfers, and the start and end of each backup. */
  private static final class Run {
    final Set<String> acked = ConcurrentHashMap.newKeySet();
    /** Backup number to the transfers acknowledged before it started. */
    final Map<Integer, Set<String>> ackedBeforeBackup = new ConcurrentHashMap<>();
    final Set<Integer> finished = ConcurrentHashMap.newKeySet();
  }

  @Test
  void aKillDuringABackupLeavesTheStoreAndTheFinishedBackupsIntactAndThePartialOneRefused() throws Exception {
    Path childTmp = Files.createDirectories(root.resolve("jvm-tmp"));
    Process child = new ProcessBuilder(ChildJvm.command(childTmp, "512m", Child.class, data.toString(),
        backups.toString())).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    Run run = new Run();
    Object progress = new Object();
    Thread reader = new Thread(() -> {
      try (BufferedReader in = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line; (line = in.readLine()) != null; ) {
          if (line.startsWith("ACK ")) {
            run.acked.add(line.substring(4));
          } else if (line.startsWith("BACKUP-START ")) {
            run.ackedBeforeBackup.put(Integer.parseInt(line.substring(13)), new HashSet<>(run.acked));
          } else if (line.startsWith("BACKUP-DONE ")) {
            run.finished.add(Integer.parseInt(line.substring(12)));
          }
          synchronized (progress) {
            progress.notifyAll();
          }
        }
      } catch (IOException | RuntimeException e) {
        // The child died: its output ends.
      }
    }, "child-stdout");
    reader.start();
    try {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(180);
      synchronized (progress) {
        while (!run.ackedBeforeBackup.containsKey(2) && child.isAlive() && System.nanoTime() < deadline) {
          progress.wait(100);
        }
      }
      assertTrue(run.ackedBeforeBackup.containsKey(2), "the child did not start its third backup");
      // Killed once the backup has begun writing: a loaded machine once ran the kill before the backup had made its
      // directory, and a backup that never began is refused as missing, not as incomplete.
      Path third = backups.resolve("backup-2");
      while (!Files.exists(third) && child.isAlive() && System.nanoTime() < deadline) {
        Thread.sleep(1);
      }
      assertTrue(Files.exists(third), "the third backup wrote nothing in 180 s");
      Thread.sleep(new Random().nextInt(20));
      assertTrue(child.isAlive(), () -> "the child died before it was killed: " + child.exitValue());
      ChildJvm.kill(child);
      assertTrue(child.waitFor(60, TimeUnit.SECONDS));
    } finally {
      ChildJvm.kill(child);
    }
    ChildJvm.joinReader(reader);
    int last = run.ackedBeforeBackup.keySet().stream().mapToInt(Integer::intValue).max().orElseThrow();
    System.out.printf("BackupKillTest: %d transfers acknowledged, backups finished %s, killed during backup %d%n",
        run.acked.size(), run.finished, last);
    assertFalse(run.finished.contains(last), "the kill fell between two backups");

    CrashBank.reopenCheckAndContinue(data, "the store after a kill during a backup", new HashSet<>(run.acked), -1);

    for (int n : run.finished) {
      Path restored = root.resolve("restored-" + n);
      EmbeddedDatabase.restore(backups.resolve("backup-" + n), restored);
      try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.durable(restored))) {
        CrashBank.check(db, "finished backup " + n, run.ackedBeforeBackup.get(n), -1);
      }
    }
    IOException refused = assertThrows(IOException.class,
        () -> EmbeddedDatabase.restore(backups.resolve("backup-" + last), root.resolve("restored-partial")));
    assertTrue(refused.getMessage().contains("is incomplete"), refused.getMessage());
  }

  /**
   * The child: {@code args = dataDirectory backupsDirectory}. Loads 20 MB of filler so that a backup
   * takes a while, then 8 writers transfer money (printing "ACK id") while backups follow one another
   * (printing "BACKUP-START n" and "BACKUP-DONE n").
   */
  public static final class Child {
    public static void main(String[] args) throws Exception {
      Path dir = Path.of(args[0]);
      Path backups = Path.of(args[1]);
      EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.builder().dataDirectory(dir)
          .compactAfterLogBytes(256 * 1024).build());
      CrashBank.openAccounts(db);
      byte[] filler = new byte[1000];
      new Random(1).nextBytes(filler);
      for (int batch = 0; batch < 20; batch++) {
        int b = batch;
        db.run(tr -> {
          for (int i = 0; i < 1000; i++) {
            tr.set(CrashBank.bytes(String.format("filler/%02d/%04d", b, i)), filler);
          }
          return null;
        });
      }
      List<Thread> threads = new ArrayList<>();
      for (int w = 0; w < 8; w++) {
        int writer = w;
        threads.add(new Thread(() -> {
          Random random = new Random(writer);
          for (long seq = 0; ; seq++) {
            String id = writer + "/" + seq;
            CrashBank.transfer(db, id, random);
            print("ACK " + id);
          }
        }, "writer-" + w));
      }
      for (Thread t : threads) {
        t.setDaemon(true);
        t.start();
      }
      for (int n = 0; ; n++) {
        Thread.sleep(200);
        print("BACKUP-START " + n);
        db.backup(backups.resolve("backup-" + n)).get(120, TimeUnit.SECONDS);
        print("BACKUP-DONE " + n);
      }
    }

    private static void print(String line) {
      synchronized (System.out) {
        System.out.println(line);
        System.out.flush();
      }
    }
  }
}
