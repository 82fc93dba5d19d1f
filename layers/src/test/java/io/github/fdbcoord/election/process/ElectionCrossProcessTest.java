package io.github.fdbcoord.election.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.Range;
import com.apple.foundationdb.directory.DirectoryLayer;
import com.apple.foundationdb.tuple.Tuple;
import com.apple.foundationdb.tuple.Versionstamp;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.QueueEntry;
import io.github.fdbcoord.election.LeaderElection;
import io.github.fdbcoord.mutex.MutexOptions;
import io.github.fdbcoord.mutex.MutexService;
import io.github.fdbcoord.store.Store;
import io.github.fdbcoord.store.StoreOptions;
import io.github.fdbcoord.testing.ChildJvm;
import io.github.fdbcoord.testing.SharedFdb;
import io.github.fdbcoord.testsupport.LayerTestSupport;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The plain election layer across real processes on a real FoundationDB ({@link SharedFdb}): {@link ElectionProcess}
 * JVMs campaign in one election and write fenced records while they lead. The leader killed with SIGKILL, the next
 * one paused with SIGSTOP past the lease and resumed (it learns it lost and its fenced write is refused), then a
 * hand-over to a named candidate that skips the one in line before it. From the store at the end: in commit order,
 * the records never go back to an older epoch and each epoch's records come from one candidate, in one run (no two
 * epochs interleave). Prints the fail-over times. Skipped, saying why, where there is no real FoundationDB.
 */
@Tag("slow")
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ElectionCrossProcessTest {
  private static final Duration WAIT = Duration.ofSeconds(60);
  /** What a takeover may take beyond the lease on a loaded machine: the reaper's scan, the watch, the JVM. */
  private static final Duration MARGIN = Duration.ofSeconds(8);

  private final List<ChildJvm> children = new ArrayList<>();
  private final Map<String, ChildJvm> byName = new LinkedHashMap<>();
  private Store store;

  private record Record(Versionstamp commit, String candidate, FencingToken epoch) {}

  @AfterEach
  void stop() {
    for (ChildJvm c : children) {
      if (c.isAlive()) {
        try {
          c.send("QUIT");
        } catch (RuntimeException ignored) {
          // it exited meanwhile
        }
      }
    }
    children.forEach(ChildJvm::close);
    if (store != null) {
      store.close();
    }
  }

  private ChildJvm start(String name, Path clusterFile, String run) {
    ChildJvm jvm = ChildJvm.start(name, List.of("-Xmx128m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"),
        entry -> false, ElectionProcess.class.getName(), List.of(name, clusterFile.toString(), run));
    children.add(jvm);
    byName.put(name, jvm);
    return jvm;
  }

  private static List<String[]> lines(ChildJvm jvm, String kind) {
    return jvm.tail(Integer.MAX_VALUE).lines().filter(l -> l.startsWith(kind + " ")).map(l -> l.split(" ", 4))
        .toList();
  }

  private static long wrote(ChildJvm jvm, String epoch) {
    return lines(jvm, "WROTE").stream().filter(w -> w[1].equals(epoch)).count();
  }

  /** The child that leads under an epoch other than those given, with that LEADING line. */
  private Optional<Map.Entry<String, String[]>> leadingOtherThan(List<String> epochs) {
    for (Map.Entry<String, ChildJvm> c : byName.entrySet()) {
      for (String[] l : lines(c.getValue(), "LEADING")) {
        if (!epochs.contains(l[1])) {
          return Optional.of(Map.entry(c.getKey(), l));
        }
      }
    }
    return Optional.empty();
  }

  private static void waitUntil(String what, BooleanSupplier condition) {
    LayerTestSupport.eventually(what, WAIT, condition);
  }

  private Map.Entry<String, String[]> nextLeader(List<String> epochsBefore) {
    waitUntil("a leader other than " + epochsBefore, () -> leadingOtherThan(epochsBefore).isPresent());
    return leadingOtherThan(epochsBefore).orElseThrow();
  }

  private static long millisBetween(long fromNanos, String[] leadingLine) {
    return TimeUnit.NANOSECONDS.toMillis(Long.parseLong(leadingLine[2]) - fromNanos);
  }

  @Test
  void aKilledAPausedAndAHandedOverLeaderAreReplacedAndFencedRecordsNeverGoBackAnEpoch() {
    Path clusterFile = SharedFdb.clusterFileOrAbort();
    String run = "election-" + UUID.randomUUID();
    store = Store.open(StoreOptions.cluster(clusterFile));
    Database db = store.database();
    MutexService mutexes = MutexService.open(db, MutexOptions.builder().directory(ElectionProcess.directory(run))
        .reaperEnabled(false).build()).join();
    try (LeaderElection observer = LeaderElection.over(mutexes)) {
      for (String name : List.of("node-a", "node-b", "node-c")) {
        start(name, clusterFile, run);
      }
      for (ChildJvm c : children) {
        c.awaitLine(l -> l.startsWith("READY "), WAIT);
      }
      long lease = ElectionProcess.LEASE.toMillis();

      // 1. The first leader dies without a word: the next candidate leads once its lease ran out.
      Map.Entry<String, String[]> first = nextLeader(List.of());
      String epoch1 = first.getValue()[1];
      waitUntil("the first leader wrote", () -> wrote(byName.get(first.getKey()), epoch1) >= 5);
      byName.get(first.getKey()).kill();
      long killed = System.nanoTime();
      Map.Entry<String, String[]> second = nextLeader(List.of(epoch1));
      long afterKill = millisBetween(killed, second.getValue());
      System.out.printf("election: %s led %d ms after SIGKILL of the leader (lease %d ms)%n", second.getKey(),
          afterKill, lease);
      assertTrue(afterKill < lease + MARGIN.toMillis(), "took over " + afterKill + " ms after the kill");
      String epoch2 = second.getValue()[1];
      assertTrue(FencingToken.parse(epoch2).isNewerThan(FencingToken.parse(epoch1)));

      // 2. The next leader is paused past its lease: the third leads; resumed, the paused one learns it lost.
      ChildJvm paused = byName.get(second.getKey());
      waitUntil("the second leader wrote", () -> wrote(paused, epoch2) >= 5);
      paused.pause();
      long stopped = System.nanoTime();
      Map.Entry<String, String[]> third = nextLeader(List.of(epoch1, epoch2));
      long afterPause = millisBetween(stopped, third.getValue());
      System.out.printf("election: %s led %d ms after SIGSTOP of the leader%n", third.getKey(), afterPause);
      assertTrue(afterPause < lease + MARGIN.toMillis(), "took over " + afterPause + " ms after the pause");
      String epoch3 = third.getValue()[1];
      paused.resume();
      long resumed = System.nanoTime();
      waitUntil("the paused leader learnt it lost", () -> !lines(paused, "PROBE").isEmpty());
      String[] lost = lines(paused, "LOST").get(0);
      assertEquals(epoch2, lost[1]);
      System.out.printf("election: the paused leader learnt it lost %d ms after it resumed%n",
          TimeUnit.NANOSECONDS.toMillis(Long.parseLong(lost[2]) - resumed));
      String[] probe = lines(paused, "PROBE").get(0);
      assertEquals(epoch2, probe[1]);
      assertTrue(probe[2].equals("refused"), "its fenced write after the loss: " + String.join(" ", probe));

      // 3. A hand-over to a named candidate: node-d, behind the paused one (which campaigns again after its loss).
      String behind = second.getKey();
      waitUntil(behind + " is in line again", () -> line(mutexes).equals(List.of(behind)));
      ChildJvm d = start("node-d", clusterFile, run);
      d.awaitLine(l -> l.startsWith("READY "), WAIT);
      waitUntil("node-d is in line behind " + behind, () -> line(mutexes).equals(List.of(behind, "node-d")));
      ChildJvm leader3 = byName.get(third.getKey());
      leader3.send("HANDOVER nobody");
      String refused = leader3.awaitLine(l -> l.startsWith("HANDOVER-REFUSED nobody "), WAIT).text();
      assertTrue(refused.contains("NotQueuedException") && refused.contains("'nobody'"), refused);
      long before = wrote(leader3, epoch3);
      waitUntil("the leader writes on after the refused hand-over", () -> wrote(leader3, epoch3) >= before + 3);
      assertEquals(epoch3, observer.leader(ElectionProcess.ELECTION).join().orElseThrow().epoch().toString());

      long handOver = System.nanoTime();
      leader3.send("HANDOVER node-d");
      String[] handed = leader3.awaitLine(l -> l.startsWith("HANDED "), WAIT).text().split(" ");
      assertEquals("node-d", handed[1]);
      Map.Entry<String, String[]> fourth = nextLeader(List.of(epoch1, epoch2, epoch3));
      assertEquals("node-d", fourth.getKey(), "the named candidate leads, not the one in line before it");
      String epoch4 = fourth.getValue()[1];
      assertEquals(handed[2], epoch4, "under the epoch the hand-over answered");
      System.out.printf("election: node-d led %d ms after the hand-over was asked for%n",
          millisBetween(handOver, fourth.getValue()));
      assertEquals(List.of(behind), line(mutexes), behind + " keeps its place");
      waitUntil("node-d wrote", () -> wrote(d, epoch4) >= 5);
      assertTrue(lines(leader3, "LOST").isEmpty(), "a hand-over is no loss: " + leader3.tail(5));
      // Quit rather than SIGTERM: the store's shutdown hook would wait for a close that a signal never makes.
      for (ChildJvm c : children) {
        if (c.isAlive()) {
          c.send("QUIT");
        }
      }
      for (ChildJvm c : children) {
        c.awaitExit(WAIT);
      }

      List<Record> records = records(db, run);
      Map<String, String> leaderOf = Map.of(epoch1, first.getKey(), epoch2, second.getKey(), epoch3, third.getKey(),
          epoch4, "node-d");
      List<String> epochsInCommitOrder = new ArrayList<>();
      for (int i = 0; i < records.size(); i++) {
        Record r = records.get(i);
        assertEquals(leaderOf.get(r.epoch().toString()), r.candidate(), "record " + i + " " + r);
        if (i > 0) {
          assertTrue(r.epoch().compareTo(records.get(i - 1).epoch()) >= 0,
              "a record of an older epoch committed after a newer one's: " + records.get(i - 1) + " then " + r);
        }
        if (epochsInCommitOrder.isEmpty() || !epochsInCommitOrder.get(epochsInCommitOrder.size() - 1)
            .equals(r.epoch().toString())) {
          epochsInCommitOrder.add(r.epoch().toString());
        }
      }
      assertEquals(List.of(epoch1, epoch2, epoch3, epoch4), epochsInCommitOrder,
          "each leadership's records in one run, in the order they led");
      for (Map.Entry<String, String> e : leaderOf.entrySet()) {
        long stored = records.stream().filter(r -> r.epoch().toString().equals(e.getKey())).count();
        long acknowledged = wrote(byName.get(e.getValue()), e.getKey());
        assertTrue(stored >= acknowledged, e + ": " + acknowledged + " writes acknowledged, " + stored + " stored");
      }
      assertFalse(records.isEmpty());
    } finally {
      mutexes.close();
      db.run(tr -> {
        tr.clear(Range.startsWith(ElectionProcess.records(run).pack()));
        return null;
      });
      DirectoryLayer.getDefault().removeIfExists(db, List.of("fdb-coord-test", run)).join();
    }
  }

  private static List<String> line(MutexService mutexes) {
    return mutexes.state(ElectionProcess.ELECTION).join().queue().stream().map(QueueEntry::owner).toList();
  }

  /** The records, in key order: the order of their commits (the key is the commit's versionstamp). */
  private static List<Record> records(Database db, String run) {
    Tuple prefix = ElectionProcess.records(run);
    List<KeyValue> kvs = db.readAsync(tr -> tr.getRange(Range.startsWith(prefix.pack())).asList()).join();
    List<Record> out = new ArrayList<>();
    for (KeyValue kv : kvs) {
      Tuple key = Tuple.fromBytes(kv.getKey());
      Tuple value = Tuple.fromBytes(kv.getValue());
      out.add(new Record(key.getVersionstamp(prefix.size()), value.getString(0), FencingToken.of(value.getBytes(1))));
    }
    return out;
  }
}
