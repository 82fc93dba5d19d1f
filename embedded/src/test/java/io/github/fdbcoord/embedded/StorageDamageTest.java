package io.github.fdbcoord.embedded;

import static io.github.fdbcoord.embedded.DamagedStorage.BEGIN;
import static io.github.fdbcoord.embedded.DamagedStorage.END;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.apple.foundationdb.FDBException;
import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.async.AsyncIterator;
import io.github.fdbcoord.fdb.FdbErrors;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Damage to the storage's RocksDB files, as the audit of issue 23 made it: reads over damaged data fail with
 * 1522 naming the file (never a short result), and every open that meets damage says what is damaged,
 * never that the directory is in use.
 */
@Timeout(60)
class StorageDamageTest {
  private static final int KEYS = 100_000;

  @TempDir
  static Path pristine;

  @TempDir
  Path dir;

  @BeforeAll
  static void writeOnce() {
    DamagedStorage.write(pristine, KEYS);
  }

  private static FDBException fdbError(Throwable thrown) {
    FDBException e = FdbErrors.fdbException(thrown);
    if (e == null) {
      throw new AssertionError("expected an FDBException, got " + thrown, thrown);
    }
    return e;
  }

  private static void assertDamageNamed(FDBException e, Path table) {
    assertEquals(FdbErrors.FILE_CORRUPT, e.getCode(), e.getMessage());
    assertTrue(e.getMessage().contains(table.getFileName().toString()), e.getMessage());
    assertTrue(e.getMessage().contains("damaged"), e.getMessage());
  }

  @Test
  void rangeReadsOverDamagedDataBlocksFailNamingTheFileAndTheStoreReportsItselfUnhealthy() throws Exception {
    Path data = DamagedStorage.copyOf(pristine, dir);
    Path table = DamagedStorage.largestTable(data);
    DamagedStorage.damageDataBlocks(table, 1 << 20);
    List<LogRecord> logged = new ArrayList<>();
    Logger storageLog = Logger.getLogger("io.github.fdbcoord.embedded.storage.RocksStorage");
    Handler capture = new Handler() {
      @Override
      public void publish(LogRecord r) {
        synchronized (logged) {
          logged.add(r);
        }
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    };
    storageLog.addHandler(capture);
    try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.durable(data))) {
      // A whole range at once, as fdb-java's asList() reads it.
      Throwable asList = assertThrows(RuntimeException.class,
          () -> db.read(tr -> tr.getRange(BEGIN, END).asList().join()));
      assertDamageNamed(fdbError(asList), table);
      // Batch by batch through the iterator: it fails where the damage is, after the rows before it.
      Throwable iterated = assertThrows(RuntimeException.class, () -> db.read(tr -> {
        AsyncIterator<KeyValue> it = tr.getRange(BEGIN, END).iterator();
        int n = 0;
        while (it.hasNext()) {
          it.next();
          n++;
        }
        return n;
      }));
      assertDamageNamed(fdbError(iterated), table);
      Throwable reverse = assertThrows(RuntimeException.class,
          () -> db.read(tr -> tr.getRange(BEGIN, END, 0, true).asList().join()));
      assertDamageNamed(fdbError(reverse), table);
      String status = new String(db.getClientStatus().join(), StandardCharsets.UTF_8);
      assertTrue(status.contains("\"Healthy\":false") && status.contains(table.getFileName().toString()), status);
      // The retry loop gives up at once: the error is not retryable.
      assertFalse(FdbErrors.isRetryable(FdbErrors.FILE_CORRUPT));
    } finally {
      storageLog.removeHandler(capture);
    }
    long reports = logged.stream().filter(r -> r.getMessage().contains("is damaged")).count();
    assertEquals(1, reports, "the damage is logged once, not once per read: " + logged.size() + " records");
  }

  @Test
  void aRangeClearOverDamagedStorageFailsItsCommitInsteadOfClearingPartOfTheRange() throws Exception {
    Path data = DamagedStorage.copyOf(pristine, dir);
    Path table = DamagedStorage.largestTable(data);
    // Every 16 KiB: every data block is damaged, so the clear meets damage wherever it starts.
    DamagedStorage.damageDataBlocks(table, 16 << 10);
    try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.durable(data))) {
      Throwable cleared = assertThrows(RuntimeException.class, () -> db.run(tr -> {
        tr.clear(DamagedStorage.key(50_000), DamagedStorage.key(50_100));
        return null;
      }));
      assertDamageNamed(fdbError(cleared), table);
      // The engine stopped rather than serve a window holding part of a commit the log does not have.
      Throwable after = assertThrows(RuntimeException.class,
          () -> db.read(tr -> tr.getRange(BEGIN, END).asList().join()));
      assertTrue(fdbError(after).getMessage().contains(table.getFileName().toString()), after.toString());
    }
  }

  private UncheckedIOException openFails(Path data) {
    return assertThrows(UncheckedIOException.class, () -> EmbeddedDatabase.open(EmbeddedOptions.durable(data)).close());
  }

  @Test
  void aTableDamagedNearItsEndFailsTheOpenAsDamageNamingTheTableNeverAsInUse() throws Exception {
    Path data = DamagedStorage.copyOf(pristine, dir);
    Path table = DamagedStorage.largestTable(data);
    long length = Files.size(table);
    DamagedStorage.flip(table, length - 3000, length - 2000, 100);
    UncheckedIOException e = openFails(data);
    String m = e.getMessage();
    assertTrue(m.contains("is damaged") && m.contains(table.getFileName().toString()), m);
    assertFalse(m.contains("in use"), m);
  }

  @Test
  void aManifestCutInHalfFailsTheOpenNamingTheManifestAndKeepsTheTablesItNoLongerLists() throws Exception {
    Path data = DamagedStorage.copyOf(pristine, dir);
    Path table = DamagedStorage.largestTable(data);
    Path manifest;
    try (var files = Files.list(data.resolve("storage"))) {
      manifest = files.filter(p -> p.getFileName().toString().startsWith("MANIFEST-")).findFirst().orElseThrow();
    }
    byte[] bytes = Files.readAllBytes(manifest);
    Files.write(manifest, java.util.Arrays.copyOf(bytes, bytes.length / 2));
    String m = openFails(data).getMessage();
    assertTrue(m.contains("MANIFEST did not list") && m.contains(table.getFileName().toString())
        && m.contains("MANIFEST was damaged"), m);
    Path kept = data.resolve("storage-unlisted").resolve(table.getFileName());
    assertTrue(Files.exists(kept), "RocksDB deleted the table its MANIFEST lost; a copy is kept at " + kept);
    assertEquals(Files.size(pristine.resolve("storage").resolve(table.getFileName())), Files.size(kept));
  }

  @Test
  void aDeletedCurrentFailsTheOpenNamingItAndLeavesTheStorageAsItWas() throws Exception {
    Path data = DamagedStorage.copyOf(pristine, dir);
    Path table = DamagedStorage.largestTable(data);
    Files.delete(data.resolve("storage").resolve("CURRENT"));
    for (int attempt = 0; attempt < 2; attempt++) {
      String m = openFails(data).getMessage();
      assertTrue(m.contains("CURRENT file is missing"), m);
      assertFalse(m.contains("wal_dir"), m);
    }
    // RocksDB was not let to start an empty database over the old one's files.
    assertTrue(Files.exists(table));
    assertFalse(Files.exists(data.resolve("storage").resolve("CURRENT")));
  }

  @Test
  void aStorageOpenInThisProcessIsStillReportedInUse() throws Exception {
    Path data = DamagedStorage.copyOf(pristine, dir);
    try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.durable(data))) {
      IllegalStateException e = assertThrows(IllegalStateException.class,
          () -> EmbeddedDatabase.open(EmbeddedOptions.durable(data)).close());
      assertTrue(e.getMessage().contains("is in use"), e.getMessage());
      assertEquals(KEYS, db.read(tr -> tr.getRange(BEGIN, END).asList().join()).size());
    }
  }
}
