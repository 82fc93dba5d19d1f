package io.github.fdbcoord.testing;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Starts real fdbserver processes (skipped where no binaries are found) and talks to them through
 * fdbcli, so that this module's tests need neither fdb-java nor the native client.
 */
@Tag("slow")
class FdbTestServerTest {
  private static FdbBinaries binaries;

  @BeforeAll
  static void findBinaries() {
    binaries = FdbBinaries.find();
    Assumptions.assumeTrue(binaries != null, "no fdbserver found: looked at " + FdbBinaries.searched());
  }

  @Test
  void singleProcessServesWritesAndLeavesNothingBehind() {
    Path folder;
    try (FdbTestServer server = FdbTestServer.startSingle(binaries, StorageEngine.MEMORY)) {
      folder = server.clusterFile().getParent();
      assertTrue(server.cli().databaseAvailable());
      assertTrue(Files.readString(server.clusterFile()).contains("@127.0.0.1:"), "loopback only");
      FdbCli.Result write = server.cli().exec("writemode on; set hello world", Duration.ofSeconds(10));
      assertTrue(write.succeeded(), write.output());
      FdbCli.Result read = server.cli().exec("get hello", Duration.ofSeconds(10));
      assertTrue(read.output().contains("`hello' is `world'"), read.output());
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    assertFalse(Files.exists(folder), "the server's folder is removed on close");
  }

  @Test
  void threeProcessesKeepCommittingAfterOneIsKilledAndTakeItBack() {
    try (FdbTestServer server = FdbTestServer.startTriple(binaries)) {
      assertTrue(server.cli().exec("writemode on; set before kill", Duration.ofSeconds(10)).succeeded());

      server.killProcess(1);
      assertFalse(server.isProcessAlive(1));
      // Recovery after losing a transaction log takes seconds (BUILD.md measured 6.6 s): retry until a write commits.
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      FdbCli.Result write;
      do {
        write = server.cli().exec("writemode on; set after kill", Duration.ofSeconds(5));
      } while (!write.succeeded() && System.nanoTime() < deadline);
      assertTrue(write.succeeded(), "no write committed within 60 s of the kill: " + write.output());
      assertTrue(server.cli().exec("get before", Duration.ofSeconds(10)).output().contains("is `kill'"),
          "the write from before the kill survives (two copies)");

      server.restartProcess(1);
      assertTrue(server.isProcessAlive(1));
      server.awaitAvailable(Duration.ofSeconds(60));
      assertTrue(server.cli().exec("get after", Duration.ofSeconds(10)).output().contains("is `kill'"));
    }
  }
}
