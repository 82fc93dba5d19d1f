package io.github.fdbcoord.cluster;

import io.github.fdbcoord.store.Store;
import io.github.fdbcoord.store.StoreOptions;
import io.github.fdbcoord.testing.FdbBinaries;
import io.github.fdbcoord.testing.FdbTestServer;
import io.github.fdbcoord.testing.NativeClient;
import io.github.fdbcoord.testing.StorageEngine;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.shareddata.Counter;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Counters on a FoundationDB cluster created a moment ago, on a real fdbserver of its own (the suite's shared one may
 * be older by the time this runs). A new cluster's versions start near 0, so for its first minute the counter log's
 * trim bound (the read version less 60 s of versions) is negative; such a trim cleared the whole log and failed the
 * callers of batches still being answered from it ("answered only after its log entry had been trimmed", found by
 * {@code ClusterManagerBenchmark counter} on a fresh server). The embedded engine's versions start at the wall clock,
 * which is why its counter tests never met it. Skipped where no fdbserver and native client are found.
 */
class CounterFreshClusterTest {
  private static final int NODES = 2;
  private static final int CALLERS_PER_NODE = 16;
  private static final int CALLS_PER_CALLER = 150;
  /** The counter log's shortest retention, in versions (FoundationDB makes about a million a second). */
  private static final long RETENTION_VERSIONS = 60_000_000L;

  @Test
  void everyIncrementOnAClusterYoungerThanTheLogRetentionIsAnsweredWithItsOwnValue() throws Exception {
    String nativeReason = NativeClient.unloadableReason();
    FdbBinaries binaries = FdbBinaries.find();
    Assumptions.assumeTrue(nativeReason == null && binaries != null,
        () -> "needs a real fdbserver and its client: " + (nativeReason != null ? nativeReason
            : "no fdbserver found (looked at " + FdbBinaries.searched() + ")"));
    Vertx vertx = Vertx.vertx();
    List<FdbClusterManager> managers = new ArrayList<>();
    try (FdbTestServer server = FdbTestServer.startSingle(binaries, StorageEngine.MEMORY);
         Store store = Store.open(StoreOptions.cluster(server.clusterFile()))) {
      List<Counter> counters = new ArrayList<>();
      for (int i = 0; i < NODES; i++) {
        FdbClusterManager m = TestNodes.join(vertx, TestNodes.options(store.database(), Duration.ofSeconds(5)));
        managers.add(m);
        Promise<Counter> p = Promise.promise();
        m.getCounter("hits", p);
        counters.add(p.future().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS));
      }

      ConcurrentLinkedQueue<Long> values = new ConcurrentLinkedQueue<>();
      List<CompletableFuture<Void>> callers = new ArrayList<>();
      for (Counter c : counters) {
        for (int k = 0; k < CALLERS_PER_NODE; k++) {
          callers.add(chain(c, CALLS_PER_CALLER, values));
        }
      }
      CompletableFuture.allOf(callers.toArray(new CompletableFuture<?>[0])).get(120, TimeUnit.SECONDS);
      long version = store.database().run(tr -> tr.getReadVersion().join());
      Assumptions.assumeTrue(version < RETENTION_VERSIONS, () -> "the cluster was already at version " + version
          + " when the increments ended: older than the log's retention, so no trim bound was negative");

      int total = NODES * CALLERS_PER_NODE * CALLS_PER_CALLER;
      List<Long> sorted = new ArrayList<>(values);
      sorted.sort(null);
      assertEquals(total, sorted.size(), "every increment answered");
      for (int i = 0; i < total; i++) {
        assertEquals(i + 1L, sorted.get(i), "the values are 1.." + total + ", each once");
      }
      assertEquals((long) total, counters.get(0).get().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS));
    } finally {
      for (FdbClusterManager m : managers) {
        Promise<Void> left = Promise.promise();
        m.leave(left);
        left.future().toCompletionStage().toCompletableFuture().handle((v, e) -> null).get(30, TimeUnit.SECONDS);
      }
      vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  /** {@code remaining} increments one after another; a failed one fails the chain with its cause. */
  private static CompletableFuture<Void> chain(Counter c, int remaining, ConcurrentLinkedQueue<Long> values) {
    if (remaining == 0) {
      return CompletableFuture.completedFuture(null);
    }
    return c.incrementAndGet().toCompletionStage().toCompletableFuture().thenCompose(v -> {
      values.add(v);
      return chain(c, remaining - 1, values);
    });
  }
}
