package io.github.fdbcoord.interner;

import com.apple.foundationdb.Database;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.embedded.EmbeddedOptions;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import static io.github.fdbcoord.interner.InternerTestSupport.assertBijection;
import static io.github.fdbcoord.interner.InternerTestSupport.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Many clients (each its own service and cache, as separate processes would be) intern random
 * overlapping batches of the same strings at once. Afterwards the namespace must hold a bijection,
 * every client must have been told the id the store holds, and no retry may have leaked a counter.
 */
class InternerConcurrencyTest {
  private static final int CLIENTS = 32;
  private static final int STRINGS = 2000;
  private static final int BATCH = 50;

  @Test
  void overlappingBatchesInMemory() {
    try (Database db = EmbeddedDatabase.inMemory()) {
      run(db, InternerOptions.builder(), 25);
    }
  }

  /**
   * All clients intern the same new strings at the same moment, from sequences spread wide enough that
   * counters never collide: only the forward records' read conflicts can make them agree.
   */
  @Test
  void sameNewStringsAtTheSameMomentConverge() {
    EmbeddedOptions options = EmbeddedOptions.builder().latency(Duration.ofMillis(1)).build();
    try (Database db = EmbeddedDatabase.open(options)) {
      List<String> root = InternerTestSupport.randomRoot();
      try {
        List<FdbInternerService> services = new ArrayList<>();
        List<StringInterner> clients = new ArrayList<>();
        for (int c = 0; c < CLIENTS; c++) {
          FdbInternerService service = (FdbInternerService) InternerService.create(db,
              InternerOptions.builder().rootPath(root).sequenceBits(32).build());
          services.add(service);
          clients.add(await(service.open("same")));
        }
        for (int round = 0; round < 5; round++) {
          List<String> batch = StringInternerTest.strings("round" + round + "-", 20);
          List<CompletableFuture<List<Long>>> results = new ArrayList<>();
          for (StringInterner client : clients) {
            results.add(client.intern(batch));
          }
          List<Long> first = await(results.get(0));
          for (CompletableFuture<List<Long>> r : results) {
            assertEquals(first, await(r), "every client got the same ids for the same strings");
          }
        }
        Map<String, Long> stored = assertBijection(db, clients.get(0));
        assertEquals(100, stored.size());
        long attempts = services.stream().mapToLong(s -> s.internAttempts.sum()).sum();
        long transactions = services.stream().mapToLong(s -> s.internTransactions.sum()).sum();
        assertTrue(attempts > transactions, "clients that all found the strings absent must have conflicted");
      } finally {
        InternerTestSupport.removeRoot(db, root);
      }
    }
  }

  /** With no retries allowed, clients that lose a conflict fail with CONFLICT and leave no trace. */
  @Test
  void retryLimitSurfacesConflicts() {
    EmbeddedOptions options = EmbeddedOptions.builder().latency(Duration.ofMillis(1)).build();
    try (Database db = EmbeddedDatabase.open(options)) {
      List<String> root = InternerTestSupport.randomRoot();
      try {
        List<StringInterner> clients = new ArrayList<>();
        for (int c = 0; c < 16; c++) {
          clients.add(await(InternerService.create(db, InternerOptions.builder().rootPath(root).retryLimit(0).build())
              .open("strict")));
        }
        List<String> batch = StringInternerTest.strings("contested-", 10);
        List<CompletableFuture<List<Long>>> results = new ArrayList<>();
        for (StringInterner client : clients) {
          results.add(client.intern(batch));
        }
        int conflicts = 0;
        List<Long> winner = null;
        for (CompletableFuture<List<Long>> r : results) {
          try {
            List<Long> ids = r.get(60, java.util.concurrent.TimeUnit.SECONDS);
            if (winner != null) {
              assertEquals(winner, ids);
            }
            winner = ids;
          } catch (java.util.concurrent.ExecutionException e) {
            InternerException ie = (InternerException) e.getCause();
            assertEquals(InternerException.Kind.CONFLICT, ie.kind(), ie.getMessage());
            assertEquals(io.github.fdbcoord.fdb.FdbErrors.NOT_COMMITTED, ie.fdbCode());
            conflicts++;
          } catch (Exception e) {
            throw new AssertionError(e);
          }
        }
        assertTrue(conflicts > 0, "16 clients interning the same new strings at once must conflict");
        assertTrue(winner != null, "at least one client committed");
        assertEquals(10, assertBijection(db, clients.get(0)).size());
      } finally {
        InternerTestSupport.removeRoot(db, root);
      }
    }
  }

  /** Few sequences to pick from: clients fight over counters as well as strings, and retry a lot. */
  @Test
  void contendedCountersWithLatency() {
    EmbeddedOptions options = EmbeddedOptions.builder().latency(Duration.ofMillis(1)).build();
    try (Database db = EmbeddedDatabase.open(options)) {
      long retries = run(db, InternerOptions.builder().sequenceBits(40)
          .sequencePicker(bits -> 1 + (long) new Random().nextInt(4)), 10).retries();
      assertTrue(retries > 0, "clients competing for 4 counters must have conflicted and retried");
    }
  }

  /** 16 ids per sequence and 200 sequences for 2000 strings: most picks late in the run hit exhausted sequences. */
  @Test
  void tinySequencesAreExhaustedAndSkippedUnderContention() {
    try (Database db = EmbeddedDatabase.inMemory()) {
      Map<String, Long> all = run(db, InternerOptions.builder().sequenceBits(60).maxSequenceTries(10_000)
          .sequencePicker(bits -> 1 + (long) new Random().nextInt(200)), 10).stored();
      long full = all.values().stream().map(id -> id >>> 4).distinct().count();
      assertTrue(full >= STRINGS / 16, "ids spread over at least " + STRINGS / 16 + " sequences, got " + full);
    }
  }

  private record Outcome(Map<String, Long> stored, long retries) {}

  private Outcome run(Database db, InternerOptions.Builder options, int batchesPerClient) {
    List<String> root = InternerTestSupport.randomRoot();
    try {
      List<String> universe = new ArrayList<>(STRINGS);
      for (int i = 0; i < STRINGS; i++) {
        universe.add("s" + i);
      }
      List<StringInterner> clients = new ArrayList<>();
      List<FdbInternerService> services = new ArrayList<>();
      for (int c = 0; c < CLIENTS; c++) {
        InternerService service = InternerService.create(db, options.rootPath(root).build());
        services.add((FdbInternerService) service);
        clients.add(await(service.open("shared")));
      }
      Map<String, Map<Long, Integer>> told = new ConcurrentHashMap<>();
      AtomicLong calls = new AtomicLong();
      List<CompletableFuture<Void>> runs = new ArrayList<>();
      for (int c = 0; c < CLIENTS; c++) {
        StringInterner client = clients.get(c);
        Random random = new Random(c);
        CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
        for (int b = 0; b < batchesPerClient; b++) {
          // Every client covers the universe in order plus random picks, so batches overlap heavily.
          List<String> batch = new ArrayList<>(BATCH);
          for (int k = 0; k < BATCH; k++) {
            batch.add(k % 2 == 0 ? universe.get((b * BATCH + k) % STRINGS) : universe.get(random.nextInt(STRINGS)));
          }
          chain = chain.thenCompose(v -> client.intern(batch)).thenAccept(ids -> {
            calls.incrementAndGet();
            for (int k = 0; k < batch.size(); k++) {
              told.computeIfAbsent(batch.get(k), s -> new ConcurrentHashMap<>()).merge(ids.get(k), 1, Integer::sum);
            }
          });
        }
        runs.add(chain);
      }
      await(CompletableFuture.allOf(runs.toArray(new CompletableFuture<?>[0])));
      assertEquals((long) CLIENTS * batchesPerClient, calls.get());

      Map<String, Long> stored = assertBijection(db, clients.get(0));
      assertEquals(told.keySet(), stored.keySet(), "exactly the interned strings are stored");
      Map<Long, String> seen = new HashMap<>();
      told.forEach((s, ids) -> {
        assertEquals(1, ids.size(), "string " + s + " was given several ids: " + ids.keySet());
        long id = ids.keySet().iterator().next();
        assertEquals(stored.get(s), id, "id told to clients vs stored id of " + s);
        String prior = seen.put(id, s);
        assertTrue(prior == null, "id " + id + " given to both " + prior + " and " + s);
      });
      for (StringInterner client : clients) {
        List<String> sample = universe.subList(0, 100).stream().filter(stored::containsKey).toList();
        List<Long> ids = await(client.resolve(sample)).stream().map(o -> o.getAsLong()).toList();
        for (int k = 0; k < sample.size(); k++) {
          assertEquals(stored.get(sample.get(k)), ids.get(k));
        }
      }
      long attempts = services.stream().mapToLong(s -> s.internAttempts.sum()).sum();
      long transactions = services.stream().mapToLong(s -> s.internTransactions.sum()).sum();
      System.out.printf("sequenceBits %d: %d intern calls, %d transactions, %d attempts%n",
          options.build().sequenceBits(), calls.get(), transactions, attempts);
      return new Outcome(stored, attempts - transactions);
    } finally {
      InternerTestSupport.removeRoot(db, root);
    }
  }
}
