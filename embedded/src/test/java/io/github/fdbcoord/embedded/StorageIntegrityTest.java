package io.github.fdbcoord.embedded;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.apple.foundationdb.Database;
import io.github.fdbcoord.embedded.log.Manifest;
import io.github.fdbcoord.embedded.log.NonDurableFileLayer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The durable engine refuses a data directory whose log and storage no longer fit together, naming
 * what is missing, instead of opening it with commits silently lost.
 */
@Timeout(120)
class StorageIntegrityTest {
  private static final int KEYS = 200;

  @TempDir
  Path dir;

  private static byte[] key(int i) {
    return ("integrity/" + i).getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] value(int i) {
    return ("value-" + i).getBytes(StandardCharsets.UTF_8);
  }

  /** Writes KEYS keys in several commits and closes cleanly (everything moves into the storage). */
  private void writeAndClose() {
    try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.durable(dir))) {
      for (int i = 0; i < KEYS; i += 20) {
        int from = i;
        db.run(tr -> {
          for (int k = from; k < from + 20; k++) {
            tr.set(key(k), value(k));
          }
          return null;
        });
      }
    }
  }

  private static void assertAllThere(Database db) {
    db.read(tr -> {
      for (int i = 0; i < KEYS; i++) {
        assertArrayEquals(value(i), tr.get(key(i)).join(), "key " + i);
      }
      return null;
    });
  }

  private static void deleteTree(Path root) throws IOException {
    try (Stream<Path> s = Files.walk(root)) {
      for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }

  private UncheckedIOException openFails() {
    return assertThrows(UncheckedIOException.class, () -> EmbeddedDatabase.open(EmbeddedOptions.durable(dir)).close());
  }

  @Test
  void aDeletedManifestFailsTheOpenOnceTheStorageKnowsTheLogKeptOne() throws IOException {
    writeAndClose();
    Files.delete(dir.resolve(Manifest.FILE));
    UncheckedIOException e = openFails();
    assertTrue(e.getMessage().contains("has no MANIFEST"), e.getMessage());
    assertTrue(e.getMessage().contains(dir.toString()), e.getMessage());
  }

  @Test
  void aStorageLostAfterTheLogWasTruncatedFailsTheOpen() throws IOException {
    writeAndClose();
    // The clean close moved everything into the storage and truncated the log behind it.
    deleteTree(dir.resolve("storage"));
    UncheckedIOException e = openFails();
    assertTrue(e.getMessage().contains("storage holds versions through 0"), e.getMessage());
    assertTrue(e.getMessage().contains("are in neither"), e.getMessage());
  }

  @Test
  void aStorageLostBeforeAnyTruncationIsRebuiltFromTheLog(@TempDir Path storage) throws IOException {
    Path simulated = Path.of("/simulated/integrity");
    NonDurableFileLayer disk = new NonDurableFileLayer();
    EmbeddedOptions.Builder options = EmbeddedOptions.builder().dataDirectory(simulated).storageDirectory(storage);
    try (EmbeddedDatabase db = EmbeddedDatabase.open(options.files(disk).build())) {
      for (int i = 0; i < KEYS; i++) {
        int k = i;
        db.run(tr -> {
          tr.set(key(k), value(k));
          return null;
        });
      }
      // The machine dies at the next fsync: nothing was old enough to leave the log for the storage.
      disk.powerLossAtForce(disk.forces() + 1);
      assertThrows(RuntimeException.class, () -> db.run(tr -> {
        tr.set(key(KEYS), value(KEYS));
        return null;
      }));
    }
    deleteTree(storage);
    try (EmbeddedDatabase reopened = EmbeddedDatabase.open(
        options.files(disk.afterPowerLoss(new java.util.Random(7), NonDurableFileLayer.Loss.NOTHING)).build())) {
      assertAllThere(reopened);
    }
  }
}
