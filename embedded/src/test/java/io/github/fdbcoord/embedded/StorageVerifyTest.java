package io.github.fdbcoord.embedded;

import static io.github.fdbcoord.embedded.DamagedStorage.BEGIN;
import static io.github.fdbcoord.embedded.DamagedStorage.END;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Damage found before any read needs the data: checksums verified at open, {@link EmbeddedDatabase#verify}
 * of a closed data directory, and the background scrub; each names every damaged file.
 */
@Timeout(60)
class StorageVerifyTest {
  private static final int KEYS = 20_000;

  @TempDir
  static Path pristine;

  @TempDir
  Path dir;

  /** Two table files of data: the keys written before and after a reopen. */
  @BeforeAll
  static void writeOnce() {
    DamagedStorage.write(pristine, 0, KEYS);
    DamagedStorage.write(pristine, KEYS, 2 * KEYS);
  }

  /** Damages every table file holding keys; returns them. */
  private static List<Path> damageEveryTable(Path data) throws IOException {
    List<Path> tables = DamagedStorage.tables(data, 64 << 10);
    assertEquals(2, tables.size(), "two table files of keys: " + tables);
    for (Path t : tables) {
      DamagedStorage.damageDataBlocks(t, 256 << 10);
    }
    return tables;
  }

  private static void assertNamesEvery(String message, List<Path> tables) {
    for (Path t : tables) {
      assertTrue(message.contains(t.getFileName().toString()), "names " + t.getFileName() + ": " + message);
    }
  }

  @Test
  void checksumsVerifiedAtOpenFailTheOpenNamingEveryDamagedFile() throws Exception {
    Path clean = DamagedStorage.copyOf(pristine, dir);
    try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.builder().dataDirectory(clean)
        .verifyChecksumsAtOpen(true).build())) {
      assertEquals(2 * KEYS, db.read(tr -> tr.getRange(BEGIN, END).asList().join()).size());
    }
    List<Path> tables = damageEveryTable(clean);
    UncheckedIOException e = assertThrows(UncheckedIOException.class, () -> EmbeddedDatabase.open(
        EmbeddedOptions.builder().dataDirectory(clean).verifyChecksumsAtOpen(true).build()).close());
    assertTrue(e.getMessage().contains("checksums verified at open"), e.getMessage());
    assertNamesEvery(e.getMessage(), tables);
    // Without the option RocksDB opens it: it checks a data block only when a read needs it.
    EmbeddedDatabase.open(EmbeddedOptions.durable(clean)).close();
  }

  private static Map<String, Long> listing(Path root) throws IOException {
    Map<String, Long> files = new TreeMap<>();
    try (Stream<Path> s = Files.walk(root)) {
      for (Path p : s.filter(Files::isRegularFile).toList()) {
        files.put(root.relativize(p).toString(), Files.size(p));
      }
    }
    return files;
  }

  @Test
  void verifyListsEveryDamagedFileOfAClosedDirectoryAndChangesNothing() throws Exception {
    Path data = DamagedStorage.copyOf(pristine, dir);
    assertEquals(List.of(), EmbeddedDatabase.verify(data));
    List<Path> tables = damageEveryTable(data);
    Map<String, Long> before = listing(data);
    List<String> damaged = EmbeddedDatabase.verify(data);
    assertEquals(2, damaged.size(), damaged.toString());
    assertNamesEvery(String.join("\n", damaged), tables);
    assertTrue(damaged.get(0).contains("checksum mismatch"), damaged.get(0));
    before.remove("LOCK");
    Map<String, Long> after = listing(data);
    after.remove("LOCK");
    assertEquals(before, after, "verify only reads");
  }

  @Test
  void verifyRefusesADirectoryInUseAndOneThatIsNoDataDirectory() throws Exception {
    Path data = DamagedStorage.copyOf(pristine, dir);
    try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.durable(data))) {
      IllegalStateException e = assertThrows(IllegalStateException.class, () -> EmbeddedDatabase.verify(data));
      assertTrue(e.getMessage().contains("is in use"), e.getMessage());
    }
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> EmbeddedDatabase.verify(dir));
    assertTrue(e.getMessage().contains("not a data directory"), e.getMessage());
  }

  private static void awaitTrue(java.util.function.BooleanSupplier condition, String what) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(40).toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("not within 40 s: " + what);
      }
      Thread.sleep(20);
    }
  }

  @Test
  void theBackgroundScrubFindsDamageNoReadHasMetAndReportsItAsAReadWould() throws Exception {
    Path data = DamagedStorage.copyOf(pristine, dir);
    List<Path> tables = damageEveryTable(data);
    try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.builder().dataDirectory(data)
        .scrubInterval(Duration.ofMillis(50)).scrubBytesPerSecond(1L << 30).build())) {
      awaitTrue(() -> db.scrubPasses() >= 1, "a scrub pass");
      String damage = db.storageDamage().orElseThrow(() -> new AssertionError("the scrub found no damage"));
      assertTrue(damage.contains("damaged") && (damage.contains(tables.get(0).getFileName().toString())
          || damage.contains(tables.get(1).getFileName().toString())), damage);
      String status = new String(db.getClientStatus().join(), StandardCharsets.UTF_8);
      assertTrue(status.contains("\"Healthy\":false"), status);
    }
  }

  @Test
  void theBackgroundScrubOfAnIntactStorageReportsNothingWhileCommitsGoOn() throws Exception {
    Path data = DamagedStorage.copyOf(pristine, dir);
    try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.builder().dataDirectory(data)
        .scrubInterval(Duration.ofMillis(50)).scrubBytesPerSecond(1L << 30).build())) {
      int[] written = {0};
      awaitTrue(() -> {
        // Commits and flushes go on while the scrub reads: a table it lists may be compacted away meanwhile.
        int n = written[0]++;
        db.run(tr -> {
          tr.set(DamagedStorage.key(2 * KEYS + n), new byte[100]);
          return null;
        });
        return db.scrubPasses() >= 3;
      }, "three scrub passes");
      assertEquals(java.util.Optional.empty(), db.storageDamage());
      assertEquals(2 * KEYS + written[0], db.read(tr -> tr.getRange(BEGIN, END).asList().join()).size());
    }
  }
}
