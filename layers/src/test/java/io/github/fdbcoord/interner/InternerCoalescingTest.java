package io.github.fdbcoord.interner;

import io.github.fdbcoord.coalescing.Coalescer;
import com.apple.foundationdb.Database;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.embedded.EmbeddedOptions;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import static io.github.fdbcoord.interner.InternerTestSupport.assertBijection;
import static io.github.fdbcoord.interner.InternerTestSupport.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Concurrent calls on one namespace handle share transactions (see {@link Coalescer}): the
 * interner's invariants hold across them, and one call's failure stays its own.
 */
class InternerCoalescingTest {
  private static final int CLIENTS = 48;
  private static final int CALLS_PER_CLIENT = 15;

  /**
   * 48 clients of one handle, each interning overlapping batches of a shared universe on a store
   * with commit latency (so calls arrive while transactions run): every string gets one id, every
   * client is told that id, no id is given twice, nothing asked for is lost, and fewer transactions
   * ran than calls were made.
   */
  @Test
  void concurrentCallsShareTransactionsAndKeepTheInvariants() {
    EmbeddedOptions options = EmbeddedOptions.builder().latency(Duration.ofMillis(2)).build();
    try (Database db = EmbeddedDatabase.open(options)) {
      List<String> root = InternerTestSupport.randomRoot();
      try {
        InternerService service = InternerService.create(db, InternerOptions.builder().rootPath(root).build());
        FdbStringInterner handle = (FdbStringInterner) await(service.open("shared"));
        List<String> universe = StringInternerTest.strings("u-", 600);
        Map<String, Map<Long, Integer>> told = new ConcurrentHashMap<>();
        AtomicInteger calls = new AtomicInteger();
        List<CompletableFuture<Void>> clients = new ArrayList<>();
        for (int c = 0; c < CLIENTS; c++) {
          Random random = new Random(c);
          CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
          for (int k = 0; k < CALLS_PER_CLIENT; k++) {
            chain = chain.thenCompose(v -> {
              List<String> batch = new ArrayList<>();
              for (int i = 0; i < 10; i++) {
                batch.add(universe.get(random.nextInt(universe.size())));
              }
              calls.incrementAndGet();
              return handle.intern(batch).thenAccept(ids -> {
                for (int i = 0; i < batch.size(); i++) {
                  told.computeIfAbsent(batch.get(i), s -> new ConcurrentHashMap<>()).merge(ids.get(i), 1, Integer::sum);
                }
              });
            });
          }
          clients.add(chain);
        }
        await(CompletableFuture.allOf(clients.toArray(new CompletableFuture<?>[0])));

        Map<String, Long> stored = assertBijection(db, handle);
        assertEquals(told.keySet(), stored.keySet(), "exactly the strings asked for are stored, none lost");
        Map<Long, String> owners = new HashMap<>();
        told.forEach((s, ids) -> {
          assertEquals(1, ids.size(), "string " + s + " was told several ids: " + ids.keySet());
          long id = ids.keySet().iterator().next();
          assertEquals(stored.get(s), id, "the id told for " + s + " is the stored one");
          String prior = owners.put(id, s);
          assertTrue(prior == null, "id " + id + " given to both " + prior + " and " + s);
        });
        long transactions = handle.interns.transactions.sum();
        assertTrue(transactions < calls.get(), "coalesced: " + transactions + " transactions for "
            + calls.get() + " calls");
        // Lookups of many clients at once, coalesced as well, answer every id with its string.
        List<CompletableFuture<List<Optional<String>>>> lookups = new ArrayList<>();
        List<List<Long>> asked = new ArrayList<>();
        List<Long> allIds = new ArrayList<>(owners.keySet());
        StringInterner fresh = await(InternerService.create(db, InternerOptions.builder().rootPath(root).build())
            .openExisting("shared"));
        for (int c = 0; c < CLIENTS; c++) {
          List<Long> ids = allIds.subList((c * 10) % (allIds.size() - 10), (c * 10) % (allIds.size() - 10) + 10);
          asked.add(ids);
          lookups.add(fresh.lookup(ids));
        }
        for (int c = 0; c < CLIENTS; c++) {
          List<Optional<String>> strings = await(lookups.get(c));
          for (int i = 0; i < 10; i++) {
            assertEquals(Optional.of(owners.get(asked.get(c).get(i))), strings.get(i));
          }
        }
      } finally {
        InternerTestSupport.removeRoot(db, root);
      }
    }
  }

  /**
   * A batch whose shared transaction fails is run again request by request: only the request that
   * caused the failure fails; a failure every request would meet alone is passed on at once.
   */
  @Test
  void oneFailingRequestDoesNotFailItsNeighbours() throws Exception {
    ExecutorService executor = Executors.newSingleThreadExecutor();
    try {
      List<List<String>> transactions = new ArrayList<>();
      CompletableFuture<Void> gate = new CompletableFuture<>();
      Coalescer<String, Integer> coalescer = new Coalescer<>(keys -> {
        synchronized (transactions) {
          transactions.add(keys);
        }
        // The first transaction waits at the gate, so that the next requests queue behind it.
        CompletableFuture<Void> wait = transactions.size() == 1 ? gate : CompletableFuture.completedFuture(null);
        return wait.thenApply(v -> {
          if (keys.contains("bad")) {
            throw InternerException.badRequest("'bad' is refused");
          }
          Map<String, Integer> m = new HashMap<>();
          keys.forEach(k -> m.put(k, k.length()));
          return m;
        });
      }, e -> e instanceof InternerException ie && ie.kind() == InternerException.Kind.NOT_FOUND,
          k -> 1, 100, 1_000, 1, executor);

      CompletableFuture<Map<String, Integer>> first = coalescer.submit(List.of("a"));
      CompletableFuture<Map<String, Integer>> good = coalescer.submit(List.of("bb", "ccc"));
      CompletableFuture<Map<String, Integer>> bad = coalescer.submit(List.of("bad", "dddd"));
      CompletableFuture<Map<String, Integer>> alsoGood = coalescer.submit(List.of("ccc", "eeeee"));
      gate.complete(null);

      assertEquals(1, await(first).get("a"));
      assertEquals(2, await(good).get("bb"));
      assertEquals(3, await(good).get("ccc"));
      assertEquals(5, await(alsoGood).get("eeeee"));
      InternerException e = assertThrows(InternerException.class, () -> await(bad));
      assertEquals(InternerException.Kind.BAD_REQUEST, e.kind());
      synchronized (transactions) {
        // The first alone; the three waiting ones together (keys merged, "ccc" once); then each alone.
        assertEquals(List.of("a"), transactions.get(0));
        assertEquals(List.of("bb", "ccc", "bad", "dddd", "eeeee"), transactions.get(1));
        assertEquals(5, transactions.size());
      }

      // A failure every request would meet alone fails the whole batch without running them again.
      CompletableFuture<Void> gate2 = new CompletableFuture<>();
      AtomicInteger runs = new AtomicInteger();
      Coalescer<String, Integer> gone = new Coalescer<>(keys -> runs.incrementAndGet() == 1
          ? gate2.thenApply(v -> Map.<String, Integer>of())
          : CompletableFuture.failedFuture(new InternerException(InternerException.Kind.NOT_FOUND, "gone")),
          ex -> ex instanceof InternerException ie && ie.kind() == InternerException.Kind.NOT_FOUND,
          k -> 1, 100, 1_000, 1, executor);
      gone.submit(List.of("x"));
      CompletableFuture<Map<String, Integer>> r1 = gone.submit(List.of("y"));
      CompletableFuture<Map<String, Integer>> r2 = gone.submit(List.of("z"));
      gate2.complete(null);
      assertInstanceOf(InternerException.class, assertThrows(RuntimeException.class, () -> await(r1)));
      assertInstanceOf(InternerException.class, assertThrows(RuntimeException.class, () -> await(r2)));
      assertEquals(2, runs.get(), "the shared failure was not run again per request");
    } finally {
      executor.shutdown();
    }
  }

  /** Requests queue behind the transactions in flight, and the next one takes no more than its bounds. */
  @Test
  void batchesStayWithinTheirBounds() {
    ExecutorService executor = Executors.newSingleThreadExecutor();
    try {
      List<Integer> sizes = new ArrayList<>();
      CompletableFuture<Void> gate = new CompletableFuture<>();
      Coalescer<Integer, Integer> coalescer = new Coalescer<>(keys -> {
        synchronized (sizes) {
          sizes.add(keys.size());
        }
        return (sizes.size() == 1 ? gate : CompletableFuture.<Void>completedFuture(null)).thenApply(v -> {
          Map<Integer, Integer> m = new HashMap<>();
          keys.forEach(k -> m.put(k, -k));
          return m;
        });
      }, e -> false, k -> 1, 10, 1_000, 1, executor);
      List<CompletableFuture<Map<Integer, Integer>>> results = new ArrayList<>();
      for (int i = 0; i < 25; i++) {
        results.add(coalescer.submit(List.of(2 * i, 2 * i + 1)));
      }
      gate.complete(null);
      for (int i = 0; i < 25; i++) {
        assertEquals(-2 * i - 1, await(results.get(i)).get(2 * i + 1));
      }
      synchronized (sizes) {
        assertEquals(List.of(2, 10, 10, 10, 10, 8), sizes, "the first alone, then at most 10 keys each");
      }
    } finally {
      executor.shutdown();
    }
  }

  /**
   * Requests that bring the waiting keys to a full batch start a transaction at once past the
   * coalescing limit, up to their own limit; small requests still wait and share.
   */
  @Test
  void fullBatchesStartAtOnceUpToTheirLimit() {
    ExecutorService executor = Executors.newSingleThreadExecutor();
    try {
      List<List<Integer>> started = new ArrayList<>();
      CompletableFuture<Void> gate = new CompletableFuture<>();
      Coalescer<Integer, Integer> coalescer = new Coalescer<>(keys -> {
        synchronized (started) {
          started.add(keys);
        }
        return gate.thenApply(v -> {
          Map<Integer, Integer> m = new HashMap<>();
          keys.forEach(k -> m.put(k, -k));
          return m;
        });
      }, e -> false, k -> 1, 1_000, 1_000_000, 1, 10, 3, executor, null);
      List<Integer> full1 = range(100, 10);
      List<Integer> full2 = range(200, 10);
      List<Integer> full3 = range(300, 10);
      List<CompletableFuture<Map<Integer, Integer>>> results = new ArrayList<>();
      results.add(coalescer.submit(List.of(0)));  // starts: nothing runs
      results.add(coalescer.submit(List.of(1)));  // waits: one runs, 1 key waiting
      results.add(coalescer.submit(full1));       // 11 keys waiting: starts, taking the small one along
      results.add(coalescer.submit(full2));       // starts: the third in flight
      results.add(coalescer.submit(full3));       // waits: three in flight, the limit of full batches
      results.add(coalescer.submit(List.of(2)));  // waits
      synchronized (started) {
        assertEquals(3, started.size());
        assertEquals(List.of(0), started.get(0));
        List<Integer> second = new ArrayList<>(List.of(1));
        second.addAll(full1);
        assertEquals(second, started.get(1));
        assertEquals(full2, started.get(2));
      }
      gate.complete(null);
      List<List<Integer>> asked = List.of(List.of(0), List.of(1), full1, full2, full3, List.of(2));
      for (int i = 0; i < asked.size(); i++) {
        Map<Integer, Integer> answers = await(results.get(i));
        for (int k : asked.get(i)) {
          assertEquals(-k, answers.get(k));
        }
      }
      synchronized (started) {
        List<Integer> last = new ArrayList<>(full3);
        last.add(2);
        assertEquals(List.of(last), started.subList(3, started.size()), "the two waiting requests shared the fourth");
      }
    } finally {
      executor.shutdown();
    }
  }

  @Test
  void maxTransactionsInFlightDefaultsTo64AndRefusesLessThanOne() {
    assertEquals(64, InternerOptions.defaults().maxTransactionsInFlight());
    assertEquals(4, InternerOptions.builder().maxTransactionsInFlight(4).build().maxTransactionsInFlight());
    assertThrows(IllegalArgumentException.class, () -> InternerOptions.builder().maxTransactionsInFlight(0));
  }

  private static List<Integer> range(int from, int n) {
    List<Integer> keys = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      keys.add(from + i);
    }
    return keys;
  }

  /**
   * On the in-memory engine without latency every transaction completes before it returns, so
   * calls made one after another on one thread (an event loop serving 32 HTTP requests it read
   * together) never find one running and each ran its own. With a batch window that queues the
   * start behind the thread's current task, as the service's event loops do, those calls share one
   * transaction, each is told its own strings' ids, and a bad call among them fails alone.
   */
  @Test
  void aBatchWindowLetsCallsMadeTogetherOnOneThreadShareATransaction() throws Exception {
    ExecutorService loop = Executors.newSingleThreadExecutor(); // stands for an event loop
    try (Database db = EmbeddedDatabase.inMemory()) {
      List<String> root = InternerTestSupport.randomRoot();
      try {
        FdbStringInterner windowed = (FdbStringInterner) await(InternerService.create(db, InternerOptions.builder()
            .rootPath(root).batchWindow(loop).build()).open("together"));
        FdbStringInterner atOnce = (FdbStringInterner) await(InternerService.create(db, InternerOptions.builder()
            .rootPath(root).build()).open("together"));
        List<List<String>> batches = new ArrayList<>();
        for (int c = 0; c < 32; c++) {
          batches.add(StringInternerTest.strings("w" + c + "-", 10));
        }
        List<CompletableFuture<List<Long>>> calls = loop.submit(() -> {
          List<CompletableFuture<List<Long>>> made = new ArrayList<>();
          batches.forEach(b -> made.add(windowed.intern(b)));
          made.add(windowed.intern(List.of("fine", "unpaired \uD800")));
          return made;
        }).get();
        InternerTestSupport.failure(calls.remove(calls.size() - 1), InternerException.Kind.BAD_REQUEST);
        Map<Long, String> owners = new HashMap<>();
        for (int c = 0; c < batches.size(); c++) {
          List<Long> ids = await(calls.get(c));
          for (int i = 0; i < 10; i++) {
            String prior = owners.put(ids.get(i), batches.get(c).get(i));
            assertTrue(prior == null, "id " + ids.get(i) + " told for " + prior + " and " + batches.get(c).get(i));
          }
        }
        assertEquals(320, owners.size());
        assertEquals(1, windowed.interns.transactions.sum(), "the 32 calls shared one transaction");
        for (int c = 0; c < batches.size(); c++) {
          List<Long> ids = new ArrayList<>(await(calls.get(c)));
          assertEquals(ids, await(atOnce.intern(batches.get(c))), "the store holds the ids the calls were told");
        }

        List<CompletableFuture<List<Long>>> alone = loop.submit(() -> {
          List<CompletableFuture<List<Long>>> made = new ArrayList<>();
          for (int c = 0; c < 32; c++) {
            made.add(atOnce.intern(StringInternerTest.strings("a" + c + "-", 10)));
          }
          return made;
        }).get();
        alone.forEach(InternerTestSupport::await);
        long withoutWindow = atOnce.interns.transactions.sum() - 32; // the 32 read-backs above ran first
        assertEquals(32, withoutWindow, "without a window each call on the thread ran its own transaction");
      } finally {
        InternerTestSupport.removeRoot(db, root);
      }
    } finally {
      loop.shutdown();
    }
  }
}
