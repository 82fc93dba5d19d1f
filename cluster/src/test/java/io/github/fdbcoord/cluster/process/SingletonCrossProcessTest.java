package io.github.fdbcoord.cluster.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.cluster.TestNodes;
import io.github.fdbcoord.testing.ChildJvm;
import io.github.fdbcoord.testing.SharedFdb;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
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
 * The cluster singleton across real processes on a real FoundationDB ({@link SharedFdb}): three
 * {@link SingletonProcess} JVMs; the leader killed with SIGKILL, then the next one paused with SIGSTOP past the
 * lease and resumed. Each instance writes every 20 ms in transactions fenced by its leadership: ordered by commit
 * version, the writes of all three processes never go back to an older epoch, and an epoch's writes come from one
 * process. Prints the fail-over times. Skipped, saying why, where there is no real FoundationDB.
 */
@Tag("slow")
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class SingletonCrossProcessTest {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private final List<ChildJvm> children = new ArrayList<>();

  private record Write(String node, FencingToken epoch, long commitVersion) {}

  @AfterEach
  void stop() {
    children.forEach(ChildJvm::close);
  }

  private ChildJvm start(String name, Path clusterFile, String run) {
    ChildJvm jvm = ChildJvm.start(name, List.of("-Xmx256m", "-XX:TieredStopAtLevel=1"),
        entry -> entry.contains("hazelcast") || entry.matches(".*vertx-core-[^/]*-tests\\.jar"),
        SingletonProcess.class.getName(), List.of(name, clusterFile.toString(), run));
    children.add(jvm);
    return jvm;
  }

  private static List<String> lines(ChildJvm jvm, String kind) {
    return jvm.tail(Integer.MAX_VALUE).lines().filter(l -> l.startsWith(kind + " ")).toList();
  }

  private static void waitUntil(String what, BooleanSupplier condition) throws InterruptedException {
    TestNodes.waitUntil(what, condition, WAIT);
  }

  /** The child whose instance started (a STARTED line) under an epoch other than those given. */
  private Optional<ChildJvm> startedOtherThan(List<String> epochs) {
    return children.stream().filter(c -> lines(c, "STARTED").stream()
        .anyMatch(l -> !epochs.contains(l.split(" ")[1]))).findFirst();
  }

  private static String[] lastStart(ChildJvm jvm) {
    List<String> started = lines(jvm, "STARTED");
    return started.get(started.size() - 1).split(" ");
  }

  @Test
  void aKilledAndAPausedLeaderAreReplacedAndNoWriteOfAnOlderEpochCommitsAfterANewerOnes() throws Exception {
    Path clusterFile = SharedFdb.clusterFileOrAbort();
    String run = "singleton-" + UUID.randomUUID();
    for (String name : List.of("node-a", "node-b", "node-c")) {
      start(name, clusterFile, run).awaitLine(l -> l.startsWith("READY "), WAIT);
    }
    waitUntil("an instance started", () -> startedOtherThan(List.of()).isPresent());
    ChildJvm first = startedOtherThan(List.of()).orElseThrow();
    String firstEpoch = lastStart(first)[1];
    waitUntil("the first instance wrote", () -> lines(first, "WROTE").size() >= 5);

    first.kill();
    long killed = System.nanoTime();
    waitUntil("another instance started", () -> startedOtherThan(List.of(firstEpoch)).isPresent());
    ChildJvm second = startedOtherThan(List.of(firstEpoch)).orElseThrow();
    String[] secondStart = lastStart(second);
    System.out.printf("singleton: the next instance started %d ms after SIGKILL of the leader (lease %d ms)%n",
        TimeUnit.NANOSECONDS.toMillis(Long.parseLong(secondStart[2]) - killed), SingletonProcess.LEASE.toMillis());
    assertTrue(second != first);
    waitUntil("the second instance wrote", () -> lines(second, "WROTE").size() >= 5);

    second.pause();
    long paused = System.nanoTime();
    waitUntil("a third instance started", () -> startedOtherThan(List.of(firstEpoch, secondStart[1])).isPresent());
    ChildJvm third = startedOtherThan(List.of(firstEpoch, secondStart[1])).orElseThrow();
    System.out.printf("singleton: the next instance started %d ms after SIGSTOP of the leader%n",
        TimeUnit.NANOSECONDS.toMillis(Long.parseLong(lastStart(third)[2]) - paused));
    second.resume();
    long resumed = System.nanoTime();
    waitUntil("the paused instance stopped", () -> !lines(second, "STOPPED").isEmpty());
    System.out.printf("singleton: the paused leader's instance stopped %d ms after it resumed%n",
        TimeUnit.NANOSECONDS.toMillis(Long.parseLong(lines(second, "STOPPED").get(0).split(" ")[2]) - resumed));
    int before = lines(third, "WROTE").size();
    waitUntil("the third instance wrote on", () -> lines(third, "WROTE").size() >= before + 5);
    for (ChildJvm c : children) {
      c.close();
    }

    List<Write> writes = new ArrayList<>();
    Map<FencingToken, String> nodeOfEpoch = new HashMap<>();
    for (int i = 0; i < children.size(); i++) {
      String node = "node-" + (char) ('a' + i);
      for (String l : lines(children.get(i), "WROTE")) {
        String[] w = l.split(" ");
        Write write = new Write(node, FencingToken.parse(w[1]), Long.parseLong(w[3]));
        writes.add(write);
        String other = nodeOfEpoch.putIfAbsent(write.epoch(), node);
        assertTrue(other == null || other.equals(node), "epoch " + write.epoch() + " wrote from " + other + " and " + node);
      }
    }
    writes.sort(Comparator.comparingLong(Write::commitVersion));
    for (int i = 1; i < writes.size(); i++) {
      assertTrue(writes.get(i).epoch().compareTo(writes.get(i - 1).epoch()) >= 0,
          "a write of an older epoch committed after a newer one's: " + writes.get(i - 1) + " then " + writes.get(i));
    }
    assertEquals(3, nodeOfEpoch.size(), "three epochs wrote, one per instance: " + nodeOfEpoch);
  }
}
