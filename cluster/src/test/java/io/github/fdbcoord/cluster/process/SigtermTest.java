package io.github.fdbcoord.cluster.process;

import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.directory.DirectoryLayer;
import com.apple.foundationdb.directory.DirectorySubspace;
import com.apple.foundationdb.tuple.Tuple;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.store.Store;
import io.github.fdbcoord.store.StoreOptions;
import io.github.fdbcoord.testing.ChildJvm;
import io.github.fdbcoord.testing.SharedFdb;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * SIGTERM of a launcher node on a real FoundationDB, as a service manager, a container runtime or
 * Ctrl-C stops it: Vert.x's shutdown hook closes the node, which leaves the cluster (withdraws its
 * registrations, hands its locks to their next waiters, removes its record) before the store's
 * FoundationDB network stops, then the process exits. Prints the measured times
 * (docs/real-foundationdb.md). Skipped, saying why, where there is no real FoundationDB.
 *
 * <p>The lease is long (30 s) and failure detection is off, so that only the leave itself can hand
 * a lock over within seconds: neither an expired lease nor the peers' eviction of a process whose
 * sockets closed can pass for it.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
@Tag("slow")
class SigtermTest {
  private static final Duration LEASE = Duration.ofSeconds(30);
  private static final Duration ANSWER = Duration.ofSeconds(30);
  /** The launcher waits two minutes for Vert.x to close; a node whose leave cannot finish exits only then. */
  private static final Duration EXIT_BOUND = Duration.ofSeconds(10);
  /** A hand-off is a release's commit and the waiter's watch: milliseconds, a few seconds on two busy cores. */
  private static final Duration HAND_OFF_BOUND = Duration.ofSeconds(10);
  /** Java's exit status after SIGTERM once the shutdown hooks ran (128 + 15); a crash at exit gives another. */
  private static final int SIGTERM_STATUS = 143;

  private static Path clusterFile;
  private static Store store;
  private final List<NodeProcess> nodes = new ArrayList<>();
  private Path options;
  private String run;

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

  @AfterEach
  void stopNodes() throws Exception {
    nodes.forEach(NodeProcess::close);
    if (options != null) {
      Files.deleteIfExists(options);
    }
  }

  @Test
  void aLoneNodeLeavesAndExitsWithinSecondsOfSigterm() throws Exception {
    writeOptions();
    NodeProcess node = start("lone");
    String id = node.awaitReady();
    assertFalse(recordsOf(id).isEmpty(), "the store holds the node's records while it runs");

    long terminated = System.nanoTime();
    node.jvm().terminate();
    ChildJvm.Exit exit = node.jvm().awaitExit(Duration.ofSeconds(150));
    long exitedAfter = millisBetween(terminated, exit.nanoTime());
    System.out.printf("SIGTERM of a lone launcher node: exited in %d ms (status %d)%n", exitedAfter, exit.status());

    assertEquals(SIGTERM_STATUS, exit.status(), "exit status; its last lines:\n" + node.jvm().tail(40));
    assertTrue(exitedAfter < EXIT_BOUND.toMillis(), "the node exited " + exitedAfter + " ms after SIGTERM");
    assertCleanLeave(node, id);
  }

  @Test
  void aHoldersLockGoesToTheWaitingPeerOnSigterm() throws Exception {
    writeOptions();
    NodeProcess holder = start("holder");
    NodeProcess peer = start("peer");
    String holderId = holder.awaitReady();
    String peerId = peer.awaitReady();
    FencingToken first = FencingToken.parse(holder.call("lock term-lock 10000", ANSWER));
    int waiting = peer.send("lock term-lock 120000");
    awaitTrue("the peer queued for the lock",
        () -> recordsIn(lockDirectory(), peerId).stream().anyMatch(r -> r.contains("\"queue\"")));

    long terminated = System.nanoTime();
    holder.jvm().terminate();
    ChildJvm.Line granted = peer.answer(waiting, Duration.ofSeconds(90));
    long grantedAfter = millisBetween(terminated, granted.nanoTime());
    ChildJvm.Exit exit = holder.jvm().awaitExit(Duration.ofSeconds(150));
    long exitedAfter = millisBetween(terminated, exit.nanoTime());
    System.out.printf("SIGTERM of a lock holder with a waiting peer: the peer held the lock %d ms after SIGTERM"
        + " (lease %d ms); the holder exited %d ms after SIGTERM (status %d)%n", grantedAfter, LEASE.toMillis(),
        exitedAfter, exit.status());

    assertTrue(grantedAfter < HAND_OFF_BOUND.toMillis(),
        "the peer got the lock " + grantedAfter + " ms after SIGTERM: handed over by the lease, not by the leave");
    assertTrue(FencingToken.parse(granted.text()).isNewerThan(first), "the new grant's token is newer");
    assertEquals(SIGTERM_STATUS, exit.status(), "exit status; its last lines:\n" + holder.jvm().tail(40));
    assertTrue(exitedAfter < EXIT_BOUND.toMillis(), "the holder exited " + exitedAfter + " ms after SIGTERM");
    assertCleanLeave(holder, holderId);
    awaitTrue("the peer's member list without the holder", () -> peer.call("nodes", ANSWER).equals(peerId));
    assertEquals("released", peer.call("release term-lock", ANSWER));
  }

  /**
   * Nothing of the node is left in the store (with failure detection off and a 30 s lease, only its
   * own leave removes it this soon) and it warned of nothing it could not do. The warning is checked
   * but cannot be relied upon alone: java.util.logging's own shutdown hook closes its handlers, so
   * what a closing node logs may never be printed.
   */
  private void assertCleanLeave(NodeProcess node, String id) throws Exception {
    assertFalse(node.jvm().hasLine(l -> l.contains("could not") || l.contains("Broken promise")),
        "the node warned while closing; its last lines:\n" + node.jvm().tail(40));
    assertEquals(List.of(), recordsOf(id), "the node's records left in the store");
  }

  private NodeProcess start(String name) {
    NodeProcess node = NodeProcess.start(name, options);
    nodes.add(node);
    return node;
  }

  private void writeOptions() throws Exception {
    run = "sigterm-" + UUID.randomUUID();
    options = Files.createTempFile("fdb-cluster-", ".json");
    Files.writeString(options, new JsonObject()
        .put("store", new JsonObject().put("engine", "cluster").put("clusterFile", clusterFile.toString()))
        .put("directory", new JsonArray().add("fdb-coord-test").add(run))
        .put("lockDirectory", new JsonArray().add("fdb-coord-test").add(run + "-locks"))
        .put("nodeLeaseMs", LEASE.toMillis())
        .put("heartbeatIntervalMs", 1000)
        .put("reaperIntervalMs", 250)
        .put("failureDetection", false)
        .encode());
  }

  private List<String> clusterDirectory() {
    return List.of("fdb-coord-test", run);
  }

  private List<String> lockDirectory() {
    return List.of("fdb-coord-test", run + "-locks");
  }

  /**
   * Everything of node {@code id} in the cluster's and the lock directory: node record, info,
   * registrations, lock owner records and queue entries. The logs (membership, registration, lock
   * events) keep history by design and are left out.
   */
  private List<String> recordsOf(String id) throws Exception {
    List<String> records = new ArrayList<>(recordsIn(clusterDirectory(), id));
    records.addAll(recordsIn(lockDirectory(), id));
    return records;
  }

  private List<String> recordsIn(List<String> directory, String id) throws Exception {
    return store.database().readAsync(tr -> DirectoryLayer.getDefault().exists(tr, directory).thenCompose(exists -> {
      if (!exists) {
        return CompletableFuture.completedFuture(List.<String>of());
      }
      return DirectoryLayer.getDefault().open(tr, directory)
          .thenCompose(dir -> tr.getRange(dir.range()).asList().thenApply(kvs -> mentioning(dir, kvs, id)));
    })).get(30, TimeUnit.SECONDS);
  }

  private static List<String> mentioning(DirectorySubspace dir, List<KeyValue> kvs, String id) {
    Set<String> logs = Set.of("ml", "rl", "events");
    List<String> found = new ArrayList<>();
    for (KeyValue kv : kvs) {
      Tuple key = dir.unpack(kv.getKey());
      boolean history = key.getItems().stream().anyMatch(logs::contains);
      if (!history && (bytesContain(kv.getKey(), id) || bytesContain(kv.getValue(), id))) {
        found.add(key.toString());
      }
    }
    return found;
  }

  /** Node ids are ASCII, stored as UTF-8 in tuples: a byte-for-byte search finds them anywhere in a key or value. */
  private static boolean bytesContain(byte[] bytes, String id) {
    return new String(bytes, StandardCharsets.ISO_8859_1).contains(id);
  }

  /** Polls {@code condition} until it holds, for {@link #ANSWER} at most. */
  private static void awaitTrue(String what, Callable<Boolean> condition) throws Exception {
    long deadline = System.nanoTime() + ANSWER.toNanos();
    while (!condition.call()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("not within " + ANSWER.toMillis() + " ms: " + what);
      }
      Thread.sleep(100);
    }
  }

  private static long millisBetween(long start, long end) {
    return TimeUnit.NANOSECONDS.toMillis(end - start);
  }
}
