package io.github.fdbcoord.cluster.process;

import com.apple.foundationdb.tuple.Tuple;
import io.github.fdbcoord.store.Store;
import io.github.fdbcoord.store.StoreOptions;
import io.github.fdbcoord.testing.ChildJvm;
import io.github.fdbcoord.testing.SharedFdb;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A JVM exiting with a real-cluster store open: the FoundationDB network must stop before the
 * process ends (fdb_c's static destructors run at exit; a network thread still running then crashed
 * once in libfdb_c, SIGSEGV, failing a test JVM that had left a store open), yet not while another
 * shutdown hook still uses the store. Skipped, saying why, where there is no real FoundationDB.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@Tag("slow")
class StoreAtExitTest {
  /** The store's grace (10 s) and a JVM's start and exit on two busy cores. */
  private static final Duration EXIT_BOUND = Duration.ofSeconds(90);
  private static final String LEFT_OPEN = "still open";

  private static Path clusterFile;
  private static Store store;

  @TempDir
  Path dir;

  @BeforeAll
  static void openStore() {
    clusterFile = SharedFdb.clusterFileOrAbort();
    store = Store.open(StoreOptions.cluster(clusterFile));
  }

  @AfterAll
  static void closeStore() {
    if (store != null) {
      store.close();
    }
  }

  @Test
  void aStoreNeverClosedHasItsNetworkStoppedAndTheProcessExitsCleanly() throws Exception {
    String run = UUID.randomUUID().toString();
    try (ChildJvm child = start("left-open", run)) {
      child.awaitLine(l -> l.equals("WROTE"), EXIT_BOUND);
      ChildJvm.Exit exit = child.awaitExit(EXIT_BOUND);
      assertEquals(0, exit.status(), "the JVM exited normally, not by a crash in fdb_c; its last lines:\n" + child.tail(30));
      assertTrue(child.hasLine(l -> l.contains("1 FoundationDB store(s) " + LEFT_OPEN)),
          "the exit says a store was left open; its last lines:\n" + child.tail(30));
      assertNoCrashReport();
      assertArrayEquals(run.getBytes(StandardCharsets.UTF_8), read(run, "main"), "the child's write committed");
    }
  }

  @Test
  void aStoreAnotherShutdownHookStillUsesKeepsTheNetworkUntilItCloses() throws Exception {
    String run = UUID.randomUUID().toString();
    try (ChildJvm child = start("closed-in-hook", run)) {
      child.awaitLine(l -> l.equals("WROTE"), EXIT_BOUND);
      ChildJvm.Exit exit = child.awaitExit(EXIT_BOUND);
      assertEquals(0, exit.status(), "its last lines:\n" + child.tail(30));
      assertTrue(child.hasLine(l -> l.equals("HOOK WROTE")), "the hook's transaction committed during the exit; its last lines:\n"
          + child.tail(30));
      assertFalse(child.hasLine(l -> l.contains(LEFT_OPEN)), "the hook closed the store itself; its last lines:\n" + child.tail(30));
      assertNoCrashReport();
      assertArrayEquals(run.getBytes(StandardCharsets.UTF_8), read(run, "hook"), "the hook's write is in the store");
    }
  }

  private ChildJvm start(String mode, String run) {
    return ChildJvm.start("store-" + mode, List.of("-Xmx128m", "-XX:TieredStopAtLevel=1",
            "-XX:ErrorFile=" + dir.resolve("hs_err_%p.log")),
        entry -> entry.contains("hazelcast"), ExitingStoreUser.class.getName(), List.of(mode, clusterFile.toString(), run));
  }

  private void assertNoCrashReport() throws Exception {
    try (Stream<Path> files = Files.list(dir)) {
      assertEquals(List.of(), files.filter(f -> f.getFileName().toString().startsWith("hs_err")).toList(),
          "no JVM crash report");
    }
  }

  private static byte[] read(String run, String who) {
    return store.database().read(tr -> tr.get(ExitingStoreUser.key(run, who))).join();
  }

  /** The child: writes one key, then ends its main thread with the store open or closed by a hook. */
  public static final class ExitingStoreUser {
    static byte[] key(String run, String who) {
      return Tuple.from("store-at-exit-test", run, who).pack();
    }

    public static void main(String[] args) {
      String mode = args[0];
      String run = args[2];
      Store store = Store.open(StoreOptions.cluster(Path.of(args[1])));
      byte[] value = run.getBytes(StandardCharsets.UTF_8);
      store.database().run(tr -> {
        tr.set(key(run, "main"), value);
        return null;
      });
      if (mode.equals("closed-in-hook")) {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
          store.database().run(tr -> {
            tr.set(key(run, "hook"), value);
            return null;
          });
          System.out.println("HOOK WROTE");
          store.close();
        }));
      }
      System.out.println("WROTE");
    }
  }
}
