package io.github.fdbcoord.embedded;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.Range;
import com.apple.foundationdb.Transaction;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Online backups of a durable {@link EmbeddedDatabase} taken while 16 writers transfer money, restored
 * into new data directories; and the backups and targets that backup and restore refuse.
 */
class BackupTest {
  private static final int WRITERS = 16;

  private Path root;
  private Path data;
  private ExecutorService backups;

  @BeforeEach
  void createDirs() throws IOException {
    root = Files.createTempDirectory("backup-test-");
    data = root.resolve("data");
    backups = Executors.newSingleThreadExecutor(r -> new Thread(r, "backup-test"));
  }

  @AfterEach
  void removeDirs() throws IOException {
    backups.shutdownNow();
    CrashBank.deleteRecursively(root);
  }

  /** The whole key space at the database's newest version, or at {@code version}. */
  private static List<KeyValue> everything(EmbeddedDatabase db, long version) {
    try (Transaction tr = db.createTransaction()) {
      if (version > 0) {
        tr.setReadVersion(version);
      }
      return tr.getRange(new byte[0], new byte[] {(byte) 0xff}).asList().join();
    }
  }

  private static void assertSameContents(List<KeyValue> expected, List<KeyValue> actual, String what) {
    assertEquals(expected.size(), actual.size(), what + ": number of keys");
    for (int i = 0; i < expected.size(); i++) {
      assertEquals(new String(expected.get(i).getKey(), StandardCharsets.UTF_8),
          new String(actual.get(i).getKey(), StandardCharsets.UTF_8), what + ": key " + i);
      assertTrue(java.util.Arrays.equals(expected.get(i).getValue(), actual.get(i).getValue()),
          what + ": value of key " + new String(expected.get(i).getKey(), StandardCharsets.UTF_8));
    }
  }

  /**
   * Two backups taken while 16 writers transfer money (and the log is rolled and truncated every 64 kB,
   * so truncations fall inside the backups) restore to exactly the database's state at their version:
   * every transfer acknowledged before the backup started is there, the money is all there, and each
   * account matches the transfers recorded (none half-applied).
   */
  @Test
  void backupsTakenWhileWritersTransferMoneyRestoreEveryTransferAcknowledgedBeforeThem() throws Exception {
    Set<String> acknowledged = ConcurrentHashMap.newKeySet();
    List<Set<String>> acknowledgedBefore = new ArrayList<>();
    List<BackupInfo> infos = new ArrayList<>();
    List<List<KeyValue>> stateAtVersion = new ArrayList<>();
    AtomicBoolean stop = new AtomicBoolean();
    try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.builder().dataDirectory(data)
        .compactAfterLogBytes(64 * 1024).build())) {
      CrashBank.openAccounts(db);
      List<Thread> writers = new ArrayList<>();
      for (int w = 0; w < WRITERS; w++) {
        int writer = w;
        Thread t = new Thread(() -> {
          Random random = new Random(writer);
          for (int seq = 0; !stop.get(); seq++) {
            String id = writer + "/" + seq;
            CrashBank.transfer(db, id, random);
            acknowledged.add(id);
          }
        }, "writer-" + w);
        writers.add(t);
        t.start();
      }
      try {
        for (int b = 0; b < 2; b++) {
          Thread.sleep(1_000);
          acknowledgedBefore.add(new HashSet<>(acknowledged));
          BackupInfo info = db.backup(root.resolve("backup-" + b), backups).get(60, TimeUnit.SECONDS);
          // Read at once: the backup's version is still inside the 5-second window.
          stateAtVersion.add(everything(db, info.version()));
          infos.add(info);
          assertTrue(info.files() > 3 && info.bytes() > 0, info::toString);
        }
      } finally {
        stop.set(true);
        for (Thread t : writers) {
          t.join(60_000);
        }
      }
      assertTrue(acknowledged.size() > acknowledgedBefore.get(1).size(),
          "the writers went on committing during the backups");
    }
    for (int b = 0; b < 2; b++) {
      Path restored = root.resolve("restored-" + b);
      BackupInfo info = EmbeddedDatabase.restore(root.resolve("backup-" + b), restored);
      assertEquals(infos.get(b).version(), info.version());
      try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.durable(restored))) {
        Set<String> present = CrashBank.check(db, "backup " + b, acknowledgedBefore.get(b), -1);
        assertFalse(present.isEmpty());
        assertSameContents(stateAtVersion.get(b), everything(db, 0), "backup " + b + " at version " + info.version());
      }
    }
  }

  private Path backupOfTenKeys() throws Exception {
    try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.durable(data))) {
      db.run(tr -> {
        for (int i = 0; i < 10; i++) {
          tr.set(CrashBank.bytes("k" + i), CrashBank.bytes("v" + i));
        }
        return null;
      });
      // An idle database's read versions move on with the clock, past its last commit: a version
      // without a log record, which the backup's version may be.
      Thread.sleep(10);
      db.read(tr -> tr.get(CrashBank.bytes("k0")).join());
      Path backup = root.resolve("backup");
      db.backup(backup).get(60, TimeUnit.SECONDS);
      return backup;
    }
  }

  private static IOException restoreFails(Path backup, Path target) {
    IOException e = assertThrows(IOException.class, () -> EmbeddedDatabase.restore(backup, target));
    assertTrue(!Files.exists(target) || isEmpty(target), "a refused restore leaves nothing in " + target);
    return e;
  }

  private static boolean isEmpty(Path dir) {
    try (Stream<Path> s = Files.list(dir)) {
      return s.findAny().isEmpty();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static Path aStorageFile(Path backup, String suffix) throws IOException {
    try (Stream<Path> s = Files.list(backup.resolve("storage"))) {
      return s.filter(p -> p.getFileName().toString().endsWith(suffix)).findFirst().orElseThrow();
    }
  }

  @Test
  void aBackupWithoutItsFileListIsRefusedAsIncomplete() throws Exception {
    Path backup = backupOfTenKeys();
    Files.delete(backup.resolve("BACKUP"));
    IOException e = restoreFails(backup, root.resolve("restored"));
    assertTrue(e.getMessage().contains("is incomplete") && e.getMessage().contains("BACKUP"), e.getMessage());
  }

  @Test
  void aDamagedFileOfTheBackupIsRefusedByName() throws Exception {
    Path backup = backupOfTenKeys();
    Path sst = aStorageFile(backup, ".sst");
    try (RandomAccessFile f = new RandomAccessFile(sst.toFile(), "rw")) {
      f.seek(f.length() / 2);
      int b = f.read();
      f.seek(f.length() / 2);
      f.write(b ^ 0x5a);
    }
    IOException e = restoreFails(backup, root.resolve("restored"));
    assertTrue(e.getMessage().contains("is damaged") && e.getMessage().contains("storage/" + sst.getFileName()),
        e.getMessage());
  }

  @Test
  void aMissingOrAddedFileOrADamagedFileListIsRefusedByName() throws Exception {
    Path backup = backupOfTenKeys();
    Path segment;
    try (Stream<Path> s = Files.list(backup)) {
      segment = s.filter(p -> p.getFileName().toString().startsWith("log-")).findFirst().orElseThrow();
    }
    Path moved = root.resolve("moved");
    Files.move(segment, moved);
    IOException missing = restoreFails(backup, root.resolve("restored"));
    assertTrue(missing.getMessage().contains(segment.getFileName() + " is missing"), missing.getMessage());
    Files.move(moved, segment);

    Path extra = backup.resolve("storage").resolve("000999.sst");
    Files.write(extra, new byte[] {1, 2, 3});
    IOException added = restoreFails(backup, root.resolve("restored"));
    assertTrue(added.getMessage().contains("storage/000999.sst"), added.getMessage());
    Files.delete(extra);

    Path list = backup.resolve("BACKUP");
    String text = Files.readString(list);
    Files.writeString(list, text.replaceFirst("version (\\d)", "version 9$1"));
    IOException corrupt = restoreFails(backup, root.resolve("restored"));
    assertTrue(corrupt.getMessage().contains("BACKUP is corrupt: checksum mismatch"), corrupt.getMessage());
    Files.writeString(list, text);

    BackupInfo info = EmbeddedDatabase.restore(backup, root.resolve("restored"));
    try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.durable(info.directory()))) {
      assertEquals(10, everything(db, 0).size(), "the backup, put right, restores");
    }
  }

  @Test
  void backupAndRestoreRefuseTargetsTheyWouldSpoil() throws Exception {
    try (EmbeddedDatabase memory = EmbeddedDatabase.inMemory()) {
      CompletionException e = assertThrows(CompletionException.class,
          () -> memory.backup(root.resolve("b")).join());
      assertTrue(e.getCause() instanceof IllegalStateException && e.getCause().getMessage().contains("in memory"),
          e.getCause().toString());
    }
    Path notEmpty = Files.createDirectories(root.resolve("not-empty"));
    Files.writeString(notEmpty.resolve("something"), "x");
    try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.durable(data))) {
      Path link = Files.createSymbolicLink(root.resolve("link-to-data"), data);
      for (Path bad : List.of(notEmpty, data.resolve("backup"), link.resolve("backup"), root.resolve("x/../data/y"))) {
        CompletionException e = assertThrows(CompletionException.class, () -> db.backup(bad).join());
        assertTrue(e.getCause() instanceof IllegalArgumentException, e.getCause().toString());
        assertTrue(e.getCause().getMessage().contains(bad.equals(notEmpty) ? "is not an empty directory"
            : "is inside the data directory"), e.getCause().getMessage());
      }
      assertFalse(Files.exists(data.resolve("backup")), "nothing was created in the data directory");
    }
    Path backup = backupOfTenKeys();
    IOException e = assertThrows(IOException.class, () -> EmbeddedDatabase.restore(backup, notEmpty));
    assertTrue(e.getMessage().contains("is not an empty directory"), e.getMessage());
    IOException none = assertThrows(IOException.class,
        () -> EmbeddedDatabase.restore(root.resolve("no-such-backup"), root.resolve("r")));
    assertTrue(none.getMessage().contains("no-such-backup"), none.getMessage());
  }
}
