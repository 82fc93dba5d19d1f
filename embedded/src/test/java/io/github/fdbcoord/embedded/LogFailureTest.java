package io.github.fdbcoord.embedded;

import io.github.fdbcoord.embedded.log.NonDurableFileLayer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.apple.foundationdb.FDBException;
import io.github.fdbcoord.fdb.FdbErrors;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A commit log that fails while a commit is being written: that commit's caller learns its outcome is
 * unknown (1021), through the retry loops too, since it may be on disk; later callers get an error that
 * says the engine stopped and why; the commit, if it reached the disk, is there after a reopen.
 */
class LogFailureTest {
  private static final Path DIR = Path.of("/simulated/log-failure");

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static EmbeddedDatabase open(NonDurableFileLayer disk, Path storage) {
    return EmbeddedDatabase.open(EmbeddedOptions.builder().dataDirectory(DIR).files(disk).storageDirectory(storage).build());
  }

  private static FDBException fdbError(Throwable t) {
    return assertInstanceOf(FDBException.class, FdbErrors.unwrap(t), () -> "an FDBException, got " + t);
  }

  @Test
  void aCommitWhoseLogWriteFailsAnswersCommitUnknownResultThroughRunAndRunAsync(@TempDir Path storage) {
    NonDurableFileLayer disk = new NonDurableFileLayer();
    try (EmbeddedDatabase db = open(disk, storage)) {
      db.run(tr -> {
        tr.set(bytes("before"), bytes("1"));
        return null;
      });
      // The next fsync fails: the commit being written has an unknown outcome.
      disk.powerLossAtForce(disk.forces() + 1);
      FDBException sync = fdbError(assertThrows(RuntimeException.class, () -> db.run(tr -> {
        tr.set(bytes("during"), bytes("2"));
        return null;
      })));
      assertEquals(FdbErrors.COMMIT_UNKNOWN_RESULT, sync.getCode(), sync.getMessage());
      assertTrue(sync.getMessage().contains("commit log failed"), sync.getMessage());

      FDBException later = fdbError(assertThrows(RuntimeException.class, () -> db.runAsync(tr -> {
        tr.set(bytes("after"), bytes("3"));
        return java.util.concurrent.CompletableFuture.completedFuture(null);
      }).join()));
      assertEquals(FdbErrors.INTERNAL_ERROR, later.getCode(), "a commit after the failure is refused outright");
      assertTrue(later.getMessage().contains("commit log failed"), later.getMessage());
    }
    // Nothing of the failed write was lost in this model: the first commit is there, the refused one is not.
    try (EmbeddedDatabase db = open(disk.afterPowerLoss(new Random(1), NonDurableFileLayer.Loss.NOTHING), storage)) {
      assertArrayEquals(bytes("1"), db.read(tr -> tr.get(bytes("before")).join()));
      assertNull(db.read(tr -> tr.get(bytes("after")).join()));
    }
  }
}
