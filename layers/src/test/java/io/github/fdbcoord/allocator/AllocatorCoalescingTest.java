package io.github.fdbcoord.allocator;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.tuple.Tuple;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.embedded.EmbeddedOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Concurrent {@link AllocatorService#allocate} calls share transactions: on a store with commit
 * latency (so calls arrive while transactions run), many contenders on two allocators are each
 * answered, no value is given twice by one allocator, fewer transactions run than calls were made,
 * and a call that fails inside a shared transaction fails alone.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AllocatorCoalescingTest {
  private static final int CLIENTS = 64;
  private static final int CALLS_PER_CLIENT = 20;

  private static EmbeddedOptions withCommitLatency() {
    return EmbeddedOptions.builder().latency(Duration.ofMillis(2)).build();
  }

  @Test
  void concurrentCallsShareTransactionsAndNoValueIsGivenTwice() {
    try (Database db = EmbeddedDatabase.open(withCommitLatency())) {
      AllocatorService allocators = AllocatorService.create(db);
      Map<String, Set<Long>> given = Map.of("a", ConcurrentHashMap.newKeySet(), "b", ConcurrentHashMap.newKeySet());
      AtomicInteger duplicates = new AtomicInteger();
      AtomicInteger calls = new AtomicInteger();
      List<CompletableFuture<Void>> clients = new ArrayList<>();
      for (int c = 0; c < CLIENTS; c++) {
        String name = c % 2 == 0 ? "a" : "b";
        CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
        for (int k = 0; k < CALLS_PER_CLIENT; k++) {
          chain = chain.thenCompose(v -> {
            calls.incrementAndGet();
            return allocators.allocate(name).thenAccept(value -> {
              if (!given.get(name).add(value)) {
                duplicates.incrementAndGet();
              }
            });
          });
        }
        clients.add(chain);
      }
      CompletableFuture.allOf(clients.toArray(CompletableFuture[]::new)).join();

      assertEquals(0, duplicates.get(), "values given twice by one allocator");
      assertEquals(CLIENTS * CALLS_PER_CLIENT, calls.get());
      assertEquals(CLIENTS * CALLS_PER_CLIENT / 2, given.get("a").size(), "every call to 'a' answered with its own value");
      assertEquals(CLIENTS * CALLS_PER_CLIENT / 2, given.get("b").size(), "every call to 'b' answered with its own value");
      long transactions = allocators.allocations.transactions.sum();
      assertTrue(transactions < calls.get(), "coalesced: " + transactions + " transactions for " + calls.get() + " calls");
      // A later allocator over the same data continues without handing out any value again.
      AllocatorService again = AllocatorService.create(db);
      for (int i = 0; i < 100; i++) {
        long value = again.allocate("a").join();
        assertTrue(given.get("a").add(value), "value " + value + " of 'a' given again after the concurrent run");
      }
    }
  }

  /**
   * An allocator whose window counters hold a key no allocator writes fails every allocation; calls
   * to it that share transactions with calls to a sound allocator fail alone, with their own error,
   * and the sound calls are all answered with distinct values. A bad name fails alone, before any
   * transaction.
   */
  @Test
  void aCallThatFailsInASharedTransactionFailsAlone() {
    try (Database db = EmbeddedDatabase.open(withCommitLatency())) {
      AllocatorService allocators = AllocatorService.create(db);
      // S[0][<not an integer>]: the newest window's key cannot be read as a window start.
      byte[] foreign = allocators.subspaceOf("broken").pack(Tuple.from(0L, true));
      db.run(tr -> {
        tr.set(foreign, new byte[8]);
        return null;
      });
      assertInstanceOf(ClassCastException.class, unwrap(allocators.allocate("broken")),
          "the broken allocator fails on its own");

      Set<Long> sound = ConcurrentHashMap.newKeySet();
      AtomicInteger soundCalls = new AtomicInteger();
      AtomicInteger brokenFailures = new AtomicInteger();
      AtomicInteger badNames = new AtomicInteger();
      List<Throwable> unexpected = new java.util.concurrent.CopyOnWriteArrayList<>();
      List<CompletableFuture<Void>> clients = new ArrayList<>();
      for (int c = 0; c < 48; c++) {
        int client = c;
        CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
        for (int k = 0; k < 10; k++) {
          int call = k;
          chain = chain.thenCompose(v -> {
            String name = (client + call) % 8 == 0 ? "broken" : (client + call) % 8 == 1 ? "" : "sound";
            return allocators.allocate(name).handle((value, error) -> {
              Throwable cause = error == null ? null : error instanceof CompletionException && error.getCause() != null
                  ? error.getCause() : error;
              switch (name) {
                case "sound" -> {
                  soundCalls.incrementAndGet();
                  if (cause != null) {
                    unexpected.add(cause);
                  } else if (!sound.add(value)) {
                    unexpected.add(new AssertionError("value " + value + " given twice"));
                  }
                }
                case "broken" -> {
                  if (cause instanceof ClassCastException) {
                    brokenFailures.incrementAndGet();
                  } else {
                    unexpected.add(new AssertionError("broken allocator answered " + value + " / " + cause));
                  }
                }
                default -> {
                  if (cause instanceof AllocatorException e && e.kind() == AllocatorException.Kind.BAD_REQUEST) {
                    badNames.incrementAndGet();
                  } else {
                    unexpected.add(new AssertionError("empty name answered " + value + " / " + cause));
                  }
                }
              }
              return null;
            });
          });
        }
        clients.add(chain);
      }
      CompletableFuture.allOf(clients.toArray(CompletableFuture[]::new)).join();

      assertEquals(List.of(), unexpected);
      assertEquals(soundCalls.get(), sound.size(), "every sound call answered with its own value");
      assertEquals(60, brokenFailures.get(), "every call to the broken allocator failed with its own error");
      assertEquals(60, badNames.get(), "every bad name refused");
      assertTrue(allocators.allocations.transactions.sum() < soundCalls.get() + 2L * brokenFailures.get(),
          "the calls shared transactions (" + allocators.allocations.transactions.sum() + ")");
    }
  }

  private static Throwable unwrap(CompletableFuture<?> f) {
    try {
      f.join();
      throw new AssertionError("did not fail");
    } catch (CompletionException e) {
      return e.getCause();
    }
  }

  /**
   * On the in-memory engine without latency a transaction completes before it returns, so calls made
   * one after another on one thread (an event loop serving requests it read together) never find one
   * running and each ran its own. With a batch window that queues the start behind the thread's
   * current task, as the service's event loops do, they share one transaction, every call gets a value
   * of its own, and a bad name among them fails alone.
   */
  @Test
  void aBatchWindowLetsCallsMadeTogetherOnOneThreadShareATransaction() throws Exception {
    ExecutorService loop = Executors.newSingleThreadExecutor(); // stands for an event loop
    try (Database db = EmbeddedDatabase.inMemory()) {
      AllocatorService windowed = AllocatorService.create(db, AllocatorServiceOptions.builder()
          .root(new com.apple.foundationdb.subspace.Subspace(Tuple.from("window-test"))).batchWindow(loop).build());
      AllocatorService atOnce = AllocatorService.create(db, AllocatorServiceOptions.builder()
          .root(new com.apple.foundationdb.subspace.Subspace(Tuple.from("window-test"))).build());
      List<CompletableFuture<Long>> calls = loop.submit(() -> {
        List<CompletableFuture<Long>> made = new ArrayList<>();
        for (int c = 0; c < 32; c++) {
          made.add(windowed.allocate("shared"));
        }
        made.add(windowed.allocate(""));
        return made;
      }).get();
      CompletableFuture<Long> bad = calls.remove(calls.size() - 1);
      CompletionException failure = org.junit.jupiter.api.Assertions.assertThrows(CompletionException.class, bad::join);
      assertInstanceOf(AllocatorException.class, failure.getCause());
      Set<Long> values = new java.util.HashSet<>();
      for (CompletableFuture<Long> call : calls) {
        assertTrue(values.add(call.get(30, TimeUnit.SECONDS)), "a value given twice: " + call.join());
      }
      assertEquals(32, values.size());
      assertEquals(1, windowed.allocations.transactions.sum(), "the 32 calls shared one transaction");
      // The store holds them: the same allocator, without a window, gives none of them again.
      for (int c = 0; c < 32; c++) {
        assertTrue(!values.contains(atOnce.allocate("shared").get(30, TimeUnit.SECONDS)), "a value given twice");
      }

      List<CompletableFuture<Long>> alone = loop.submit(() -> {
        List<CompletableFuture<Long>> made = new ArrayList<>();
        for (int c = 0; c < 32; c++) {
          made.add(atOnce.allocate("alone"));
        }
        return made;
      }).get();
      for (CompletableFuture<Long> call : alone) {
        call.get(30, TimeUnit.SECONDS);
      }
      assertEquals(64, atOnce.allocations.transactions.sum(),
          "without a window each call on the thread ran its own transaction (32 read-backs and 32 calls)");
    } finally {
      loop.shutdown();
    }
  }
}
