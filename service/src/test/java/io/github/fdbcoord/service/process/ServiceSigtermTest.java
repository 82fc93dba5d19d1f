package io.github.fdbcoord.service.process;

import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.directory.DirectoryLayer;
import com.apple.foundationdb.tuple.Tuple;
import io.github.fdbcoord.store.Store;
import io.github.fdbcoord.store.StoreOptions;
import io.github.fdbcoord.testing.ChildJvm;
import io.github.fdbcoord.testing.SharedFdb;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * SIGTERM of a clustered {@code CoordinationMain} on a real FoundationDB: its shutdown hook closes
 * Vert.x (the node leaves the cluster) and then the store, and only then does the FoundationDB
 * network stop, so the node's records are gone when the process has exited. Skipped, saying why,
 * where there is no real FoundationDB.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
@Tag("slow")
class ServiceSigtermTest {
  private static final Pattern NODE = Pattern.compile("clustered as node (\\S+)");
  /** Java's exit status after SIGTERM once the shutdown hooks ran (128 + 15). */
  private static final int SIGTERM_STATUS = 143;

  @Test
  void aClusteredServiceLeavesAndExitsWithinSecondsOfSigterm() throws Exception {
    Path clusterFile = SharedFdb.clusterFileOrAbort();
    List<String> root = List.of("fdb-coord-test", "service-sigterm-" + UUID.randomUUID());
    // A long lease and no failure detection: nobody but the node itself removes its record this soon.
    JsonObject config = ServiceProcess.clusterConfig(clusterFile, root)
        .put("cluster", new JsonObject().put("enabled", true).put("eventBusHost", "127.0.0.1")
            .put("nodeLeaseMs", 30_000).put("failureDetection", false));
    try (Store store = Store.open(StoreOptions.cluster(clusterFile)); ServiceProcess service = ServiceProcess.start("service", config)) {
      service.awaitReady();
      Matcher m = NODE.matcher(service.jvm().awaitLine(l -> l.contains("clustered as node"), Duration.ofSeconds(5)).text());
      assertTrue(m.find());
      String node = m.group(1);
      List<String> directory = new ArrayList<>(root);
      directory.add("cluster");
      assertFalse(recordsOf(store, directory, node).isEmpty(), "the store holds the node's records while it runs");

      long terminated = System.nanoTime();
      service.jvm().terminate();
      ChildJvm.Exit exit = service.jvm().awaitExit(Duration.ofSeconds(150));
      long exitedAfter = TimeUnit.NANOSECONDS.toMillis(exit.nanoTime() - terminated);
      System.out.printf("SIGTERM of a clustered service: exited in %d ms (status %d)%n", exitedAfter, exit.status());

      assertEquals(SIGTERM_STATUS, exit.status(), "exit status; its last lines:\n" + service.jvm().tail(40));
      assertTrue(exitedAfter < 10_000, "the service exited " + exitedAfter + " ms after SIGTERM");
      assertFalse(service.jvm().hasLine(l -> l.contains("did not complete cleanly") || l.contains("could not")
          || l.contains("Broken promise")), "the service warned while closing; its last lines:\n" + service.jvm().tail(40));
      assertEquals(List.of(), recordsOf(store, directory, node), "the node's records left in the store");
    }
  }

  /** The keys of the cluster directory that name {@code node}, but for the membership and registration logs (history). */
  private static List<String> recordsOf(Store store, List<String> directory, String node) throws Exception {
    return store.database().readAsync(tr -> DirectoryLayer.getDefault().exists(tr, directory).thenCompose(exists -> {
      if (!exists) {
        return CompletableFuture.completedFuture(List.<String>of());
      }
      return DirectoryLayer.getDefault().open(tr, directory).thenCompose(dir -> tr.getRange(dir.range()).asList()
          .thenApply(kvs -> {
            List<String> found = new ArrayList<>();
            for (KeyValue kv : kvs) {
              Tuple key = dir.unpack(kv.getKey());
              boolean history = key.getItems().contains("ml") || key.getItems().contains("rl");
              if (!history && (mentions(kv.getKey(), node) || mentions(kv.getValue(), node))) {
                found.add(key.toString());
              }
            }
            return found;
          }));
    })).get(30, TimeUnit.SECONDS);
  }

  private static boolean mentions(byte[] bytes, String node) {
    return new String(bytes, StandardCharsets.ISO_8859_1).contains(node);
  }
}
