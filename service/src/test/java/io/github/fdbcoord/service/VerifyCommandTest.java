package io.github.fdbcoord.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.fdbcoord.embedded.DamagedStorage;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.embedded.EmbeddedOptions;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code CoordinationMain verify <dataDirectory>}: each damaged file listed with exit status 1, 0 when intact,
 * 2 for a directory in use or no data directory; and the store's integrity keys of the configuration.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class VerifyCommandTest {
  private record Run(int status, String out, String err) {}

  private static Run verify(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status = CoordinationMain.verify(args, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Run(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  @Test
  void verifyListsEachDamagedFileAndExitsNonZero(@TempDir Path data) throws Exception {
    DamagedStorage.write(data, 20_000);
    Run intact = verify("verify", data.toString());
    assertEquals(0, intact.status(), intact.err());
    assertTrue(intact.out().contains("intact"), intact.out());

    Path table = DamagedStorage.largestTable(data);
    DamagedStorage.damageDataBlocks(table, 256 << 10);
    Run damaged = verify("verify", data.toString());
    assertEquals(1, damaged.status(), damaged.err());
    assertTrue(damaged.out().contains("damaged: " + table) && damaged.out().contains("1 damaged table file"),
        damaged.out());

    try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.durable(data))) {
      Run inUse = verify("verify", data.toString());
      assertEquals(2, inUse.status());
      assertTrue(inUse.err().contains("is in use"), inUse.err());
    }
  }

  @Test
  void verifyRefusesABadCommandLineAndADirectoryThatHoldsNoStore(@TempDir Path empty) {
    Run none = verify("verify");
    assertEquals(2, none.status());
    assertTrue(none.err().contains("the data directory"), none.err());
    Run notData = verify("verify", empty.toString());
    assertEquals(2, notData.status());
    assertTrue(notData.err().contains("not a data directory"), notData.err());
    assertFalse(notData.err().contains("Exception"), notData.err());
  }

  @Test
  void integrityKeysOfTheStoreAreConfigurableAndChecked() {
    var defaults = CoordinationConfig.from(new JsonObject()).store();
    assertFalse(defaults.verifyChecksumsAtOpen());
    assertEquals(Duration.ZERO, defaults.scrubInterval());
    var set = CoordinationConfig.from(new JsonObject().put("store", new JsonObject()
        .put("verifyChecksumsAtOpen", true).put("scrubIntervalMs", 3_600_000).put("scrubBytesPerSecond", 1 << 20)))
        .store();
    assertTrue(set.verifyChecksumsAtOpen());
    assertEquals(Duration.ofHours(1), set.scrubInterval());
    assertEquals(1 << 20, set.scrubBytesPerSecond());
    for (var bad : new Object[][] {{"verifyChecksumsAtOpen", "yes"}, {"scrubIntervalMs", -1},
        {"scrubBytesPerSecond", 0}}) {
      var e = assertThrows(IllegalArgumentException.class, () -> CoordinationConfig.from(new JsonObject()
          .put("store", new JsonObject().put((String) bad[0], bad[1]))));
      assertTrue(e.getMessage().startsWith("store." + bad[0] + " must be"), e.getMessage());
    }
  }
}
