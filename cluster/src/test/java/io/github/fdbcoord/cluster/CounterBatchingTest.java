package io.github.fdbcoord.cluster;

import io.github.fdbcoord.cluster.impl.StoreProbe;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.embedded.EmbeddedOptions;
import io.github.fdbcoord.fdb.FdbErrors;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.shareddata.Counter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Counter writes made together on one node share one transaction, and the counter stays exact and
 * linearizable: across nodes (whose batches conflict), with every kind of write mixed, and when a
 * batch fails.
 */
class CounterBatchingTest {
  private static final Duration LEASE = Duration.ofMillis(1000);

  private final List<EmbeddedDatabase> databases = new ArrayList<>();
  private final List<FdbClusterManager> managers = new ArrayList<>();
  private Vertx vertx = Vertx.vertx();

  @AfterEach
  void tearDown() throws Exception {
    for (FdbClusterManager m : managers) {
      Promise<Void> p = Promise.promise();
      m.leave(p);
      try {
        p.future().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
      } catch (ExecutionException storeClosedByTheTest) {
        // A node whose store a test closed cannot leave it; its Vert.x closes below all the same.
      }
    }
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    databases.forEach(EmbeddedDatabase::close);
  }

  private EmbeddedDatabase database(EmbeddedOptions options) {
    EmbeddedDatabase db = EmbeddedDatabase.open(options);
    databases.add(db);
    return db;
  }

  private FdbClusterManager join(EmbeddedDatabase db) throws Exception {
    FdbClusterManager m = TestNodes.join(vertx, TestNodes.options(db, LEASE));
    managers.add(m);
    return m;
  }

  private static Counter counter(FdbClusterManager m, String name) throws Exception {
    Promise<Counter> p = Promise.promise();
    m.getCounter(name, p);
    return await(p.future());
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  private static <T> CompletableFuture<T> cf(Future<T> f) {
    return f.toCompletionStage().toCompletableFuture();
  }

  /**
   * Makes the node's next counter attempt wait at its commit until {@code gate} completes;
   * {@code entered} counts down once it waits there.
   */
  private static void holdNextCommit(FdbClusterManager m, CountDownLatch entered, CompletableFuture<Void> gate) {
    AtomicBoolean held = new AtomicBoolean();
    StoreProbe.beforeCounterCommit(m.store(), tr -> {
      if (held.compareAndSet(false, true)) {
        entered.countDown();
        return gate;
      }
      return CompletableFuture.completedFuture(null);
    });
  }

  /** One call as a client saw it: when it was made, when it was answered, what it answered. */
  private record Observed(long invoked, long answered, long value) {}

  @Test
  void callsQueuedBehindARunningTransactionShareTheNextOneAndAreAnsweredInTheirOrder() throws Exception {
    FdbClusterManager m = join(database(EmbeddedOptions.inMemory()));
    Counter c = counter(m, "queued");
    CountDownLatch entered = new CountDownLatch(1);
    CompletableFuture<Void> gate = new CompletableFuture<>();
    holdNextCommit(m, entered, gate);

    CompletableFuture<Long> first = cf(c.incrementAndGet());
    assertTrue(entered.await(10, TimeUnit.SECONDS), "the first transaction reached its commit");
    List<CompletableFuture<Long>> queued = new ArrayList<>();
    for (int i = 0; i < 9; i++) {
      queued.add(cf(c.incrementAndGet()));
    }
    long[] before = StoreProbe.counterCommitsAndAttempts(m.store());
    gate.complete(null);

    assertEquals(1L, first.get(10, TimeUnit.SECONDS));
    for (int i = 0; i < 9; i++) {
      assertEquals(i + 2L, queued.get(i).get(10, TimeUnit.SECONDS), "answered in the order the calls were made");
    }
    long[] after = StoreProbe.counterCommitsAndAttempts(m.store());
    assertEquals(before[0] + 2, after[0], "the held transaction and one more for the nine queued calls");
    assertEquals(10L, await(c.get()));
  }

  @Test
  void mixedWritesMadeWithoutWaitingBehaveAsIfEachRanAloneInTheirOrder() throws Exception {
    FdbClusterManager m = join(database(EmbeddedOptions.inMemory()));
    Counter c = counter(m, "mixed");
    CountDownLatch entered = new CountDownLatch(1);
    CompletableFuture<Void> gate = new CompletableFuture<>();
    holdNextCommit(m, entered, gate);
    CompletableFuture<Long> opening = cf(c.addAndGet(5));
    assertTrue(entered.await(10, TimeUnit.SECONDS));

    // All of these wait behind the held transaction, then run in one: each sees the ones before it.
    CompletableFuture<Long> getAndAdd = cf(c.getAndAdd(3));
    CompletableFuture<Boolean> casMatching = cf(c.compareAndSet(8, 100));
    CompletableFuture<Boolean> casStale = cf(c.compareAndSet(8, 200));
    CompletableFuture<Long> decrement = cf(c.decrementAndGet());
    CompletableFuture<Long> getAndIncrement = cf(c.getAndIncrement());
    CompletableFuture<Long> subtract = cf(c.addAndGet(-50));
    CompletableFuture<Boolean> casNoChange = cf(c.compareAndSet(50, 50));
    gate.complete(null);

    assertEquals(5L, opening.get(10, TimeUnit.SECONDS));
    assertEquals(5L, getAndAdd.get(10, TimeUnit.SECONDS));
    assertTrue(casMatching.get(10, TimeUnit.SECONDS));
    assertFalse(casStale.get(10, TimeUnit.SECONDS));
    assertEquals(99L, decrement.get(10, TimeUnit.SECONDS));
    assertEquals(99L, getAndIncrement.get(10, TimeUnit.SECONDS));
    assertEquals(50L, subtract.get(10, TimeUnit.SECONDS));
    assertTrue(casNoChange.get(10, TimeUnit.SECONDS));
    assertEquals(50L, await(c.get()));
    assertEquals(2L, StoreProbe.counterCommitsAndAttempts(m.store())[0]);
  }

  /**
   * Increments-only histories are linearizable exactly when the values are 1..N and a call answered
   * before another was made got the smaller value. Three nodes (whose batches conflict on the one
   * key) and four callers per node, each making its next call when the last is answered; the
   * engine's commit latency lets calls pile up behind a running transaction as on a real server.
   */
  @Test
  void incrementsFromSeveralNodesAndCallersAreDistinctExactAndLinearizable() throws Exception {
    EmbeddedDatabase db = database(EmbeddedOptions.builder().commitLatency(Duration.ofMillis(2)).build());
    int nodes = 3;
    int callersPerNode = 4;
    int callsPerCaller = 40;
    List<Counter> counters = new ArrayList<>();
    for (int i = 0; i < nodes; i++) {
      counters.add(counter(join(db), "hits"));
    }
    List<Observed> observed = java.util.Collections.synchronizedList(new ArrayList<>());
    List<CompletableFuture<Void>> callers = new ArrayList<>();
    for (int n = 0; n < nodes; n++) {
      for (int k = 0; k < callersPerNode; k++) {
        callers.add(chain(counters.get(n), callsPerCaller, observed));
      }
    }
    CompletableFuture.allOf(callers.toArray(new CompletableFuture[0])).get(60, TimeUnit.SECONDS);

    int total = nodes * callersPerNode * callsPerCaller;
    List<Observed> byValue = new ArrayList<>(observed);
    byValue.sort(Comparator.comparingLong(Observed::value));
    for (int i = 0; i < total; i++) {
      assertEquals(i + 1L, byValue.get(i).value(), "values are 1.." + total + ", each once");
    }
    // Walking down the values, no call may have been made after a call with a larger value was answered.
    long earliestAnswerAbove = Long.MAX_VALUE;
    for (int i = total - 1; i >= 0; i--) {
      Observed o = byValue.get(i);
      if (o.invoked() > earliestAnswerAbove) {
        fail("value " + o.value() + " was handed to a call made after a larger value had been answered");
      }
      earliestAnswerAbove = Math.min(earliestAnswerAbove, o.answered());
    }
    assertEquals((long) total, await(counters.get(0).get()));
    long commits = 0;
    for (FdbClusterManager m : managers) {
      commits += StoreProbe.counterCommitsAndAttempts(m.store())[0];
    }
    assertTrue(commits < total, "calls shared transactions: " + commits + " commits for " + total + " increments");
  }

  private static CompletableFuture<Void> chain(Counter c, int remaining, List<Observed> observed) {
    if (remaining == 0) {
      return CompletableFuture.completedFuture(null);
    }
    long invoked = System.nanoTime();
    return cf(c.incrementAndGet()).thenCompose(v -> {
      observed.add(new Observed(invoked, System.nanoTime(), v));
      return chain(c, remaining - 1, observed);
    });
  }

  /**
   * Adds of positive amounts (addAndGet, getAndAdd) and compare-and-set increments from three nodes:
   * every effective call names the value before and after it, so ordering them by the value after
   * must give one chain from 0 to the final value with no gap and no overlap.
   */
  @Test
  void mixedAddsAndCompareAndSetsFromSeveralNodesFormOneSerialHistory() throws Exception {
    EmbeddedDatabase db = database(EmbeddedOptions.builder().commitLatency(Duration.ofMillis(1)).build());
    List<Counter> counters = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      counters.add(counter(join(db), "mixed"));
    }
    List<long[]> steps = java.util.Collections.synchronizedList(new ArrayList<>());
    List<CompletableFuture<?>> calls = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      Counter c = counters.get(i % 3);
      long delta = 1 + i % 7;
      if (i % 3 == 0) {
        calls.add(cf(c.addAndGet(delta)).thenAccept(after -> steps.add(new long[] {after - delta, after})));
      } else if (i % 3 == 1) {
        calls.add(cf(c.getAndAdd(delta)).thenAccept(before -> steps.add(new long[] {before, before + delta})));
      } else {
        calls.add(casIncrement(c, steps));
      }
    }
    CompletableFuture.allOf(calls.toArray(new CompletableFuture[0])).get(60, TimeUnit.SECONDS);

    List<long[]> chain = new ArrayList<>(steps);
    chain.sort(Comparator.comparingLong(s -> s[1]));
    long value = 0;
    for (long[] s : chain) {
      assertArrayEquals(new long[] {value, s[1]}, s, "each call starts where the one before it ended");
      value = s[1];
    }
    assertEquals(value, await(counters.get(1).get()));
    assertEquals(300, chain.size(), "every add and every compare-and-set increment took effect once");
  }

  /** get, then compareAndSet(v, v + 1) until it matches: the retry loop users write. */
  private static CompletableFuture<Void> casIncrement(Counter c, List<long[]> steps) {
    return cf(c.get()).thenCompose(v -> cf(c.compareAndSet(v, v + 1)).thenCompose(matched -> {
      if (matched) {
        steps.add(new long[] {v, v + 1});
        return CompletableFuture.<Void>completedFuture(null);
      }
      return casIncrement(c, steps);
    }));
  }

  @Test
  void aBatchThatMayHaveCommittedFailsEveryCallerAndIsNeverAppliedTwice() throws Exception {
    FdbClusterManager m = join(database(EmbeddedOptions.inMemory()));
    Counter c = counter(m, "unknown");
    assertEquals(3L, await(c.addAndGet(3)));
    CountDownLatch entered = new CountDownLatch(1);
    CompletableFuture<Void> gate = new CompletableFuture<>();
    holdNextCommit(m, entered, gate);
    CompletableFuture<Long> first = cf(c.incrementAndGet());
    assertTrue(entered.await(10, TimeUnit.SECONDS));
    // The held attempt's batch is the first call alone; these queue for the next transaction.
    List<CompletableFuture<Long>> queued = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      queued.add(cf(c.incrementAndGet()));
    }
    StoreProbe.beforeCounterCommit(m.store(), tr -> CompletableFuture.failedFuture(FdbErrors.error(FdbErrors.COMMIT_UNKNOWN_RESULT)));
    gate.completeExceptionally(FdbErrors.error(FdbErrors.COMMIT_UNKNOWN_RESULT));

    for (CompletableFuture<Long> call : concat(first, queued)) {
      ExecutionException e = assertThrows(ExecutionException.class, () -> call.get(10, TimeUnit.SECONDS));
      assertEquals(FdbErrors.COMMIT_UNKNOWN_RESULT, FdbErrors.codeOf(e), "the caller learns the outcome is unknown");
    }
    long[] counts = StoreProbe.counterCommitsAndAttempts(m.store());
    assertEquals(counts[1] - 2, counts[0], "neither failed batch was retried");
    StoreProbe.beforeCounterCommit(m.store(), null);
    assertEquals(4L, await(c.incrementAndGet()), "nothing of the failed batches was applied, nothing lost");
  }

  @Test
  void aConflictRetriesTheBatchAtOnceWithTheCallsThatArrivedMeanwhile() throws Exception {
    FdbClusterManager m = join(database(EmbeddedOptions.inMemory()));
    Counter c = counter(m, "conflict");
    CountDownLatch entered = new CountDownLatch(1);
    CompletableFuture<Void> gate = new CompletableFuture<>();
    holdNextCommit(m, entered, gate);
    CompletableFuture<Long> first = cf(c.incrementAndGet());
    assertTrue(entered.await(10, TimeUnit.SECONDS));
    List<CompletableFuture<Long>> queued = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      queued.add(cf(c.incrementAndGet()));
    }
    gate.completeExceptionally(FdbErrors.error(FdbErrors.NOT_COMMITTED));

    List<CompletableFuture<Long>> all = concat(first, queued);
    for (int i = 0; i < all.size(); i++) {
      assertEquals(i + 1L, all.get(i).get(10, TimeUnit.SECONDS));
    }
    assertArrayEquals(new long[] {1, 2}, StoreProbe.counterCommitsAndAttempts(m.store()),
        "the retry took the five newcomers into the one committed transaction");
  }

  /**
   * The store closes while a batch waits at its commit: every caller of that batch (and of the
   * queue behind it) fails, and on the reopened store the counter holds exactly the increments that
   * were answered, no more, no fewer.
   */
  @Test
  void theStoreClosingUnderABatchFailsItsCallersAndLosesOrDoublesNothing(@TempDir Path dir) throws Exception {
    EmbeddedDatabase db = database(EmbeddedOptions.durable(dir));
    FdbClusterManager m = join(db);
    Counter c = counter(m, "durable");
    for (int i = 1; i <= 5; i++) {
      assertEquals((long) i, await(c.incrementAndGet()));
    }
    CountDownLatch entered = new CountDownLatch(1);
    CompletableFuture<Void> gate = new CompletableFuture<>();
    holdNextCommit(m, entered, gate);
    CompletableFuture<Long> held = cf(c.addAndGet(10));
    assertTrue(entered.await(10, TimeUnit.SECONDS));
    List<CompletableFuture<Long>> queued = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      queued.add(cf(c.incrementAndGet()));
    }
    db.close();
    gate.complete(null);
    for (CompletableFuture<Long> call : concat(held, queued)) {
      assertThrows(ExecutionException.class, () -> call.get(30, TimeUnit.SECONDS));
    }

    managers.clear(); // its store is closed: it cannot leave, and its Vert.x goes with this one
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    vertx = Vertx.vertx();
    Counter reopened = counter(join(database(EmbeddedOptions.durable(dir))), "durable");
    assertEquals(5L, await(reopened.get()));
    assertEquals(6L, await(reopened.incrementAndGet()));
  }

  private static <T> List<CompletableFuture<T>> concat(CompletableFuture<T> first, List<CompletableFuture<T>> rest) {
    List<CompletableFuture<T>> all = new ArrayList<>();
    all.add(first);
    all.addAll(rest);
    return all;
  }
}
