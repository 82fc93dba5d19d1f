package io.github.fdbcoord.service.eventbus;

import io.vertx.core.Vertx;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The leased-watch bookkeeping both publishers share, alone: a name whose subscription fails is forgotten, so the next
 * watch subscribes again, including a subscription that failed before it was even returned (a closed layer answers
 * so). Before, that case was removed inside the map's own computation, which the map refuses: the failed
 * subscription stayed, and every watch of the name failed until its watchers' lease ran out.
 */
class LeasedWatchesTest {
  private final Vertx vertx = Vertx.vertx();
  private final StoreWorkers workers = new StoreWorkers(2);

  /** A subscription as the publishers make them: open or failed from the start. */
  private record Opened(CompletableFuture<?> opened, List<String> closed, String name)
      implements LeasedWatches.Subscription {
    @Override
    public void close() {
      closed.add(name);
    }
  }

  @AfterEach
  void close() throws Exception {
    workers.close();
    vertx.close().await(30, TimeUnit.SECONDS);
  }

  @Test
  void aSubscriptionFailedAtOnceIsForgottenAndTheNextWatchSubscribesAgain() throws Exception {
    AtomicInteger subscribed = new AtomicInteger();
    List<String> closed = new CopyOnWriteArrayList<>();
    LeasedWatches<Opened> watches = new LeasedWatches<>(vertx, 4, Duration.ofMinutes(1), workers, "too many",
        name -> subscribed.incrementAndGet() == 1
            ? new Opened(CompletableFuture.failedFuture(new IllegalStateException("layer closed")), closed, name)
            : new Opened(CompletableFuture.completedFuture(null), closed, name));

    ExecutionException first = assertThrows(ExecutionException.class, () -> watch(watches, "m", "w1"));
    assertTrue(first.getCause().getMessage().contains("layer closed"), first.getCause().toString());
    assertEquals(0, watches.count(), "the failed name is forgotten");

    assertEquals("open", watch(watches, "m", "w2"));
    assertEquals(2, subscribed.get(), "the second watch subscribed again");
    assertEquals(1, watches.count());

    assertTrue(watches.unwatch("m", "w2"));
    assertEquals(List.of("m"), closed, "the last watcher ended the subscription");
    assertEquals(0, watches.count());
  }

  @Test
  void manyWatchersOfOneNameShareOneSubscriptionAndTheLimitCountsNames() throws Exception {
    AtomicInteger subscribed = new AtomicInteger();
    List<String> closed = new CopyOnWriteArrayList<>();
    LeasedWatches<Opened> watches = new LeasedWatches<>(vertx, 2, Duration.ofMinutes(1), workers, "two at most",
        name -> {
          subscribed.incrementAndGet();
          return new Opened(CompletableFuture.completedFuture(null), closed, name);
        });
    List<CompletableFuture<String>> all = new CopyOnWriteArrayList<>();
    for (int i = 0; i < 32; i++) {
      all.add(watches.watch(i % 2 == 0 ? "a" : "b", "w" + i, s -> s.opened().thenApply(v -> "open"))
          .toCompletionStage().toCompletableFuture());
    }
    for (CompletableFuture<String> f : all) {
      assertEquals("open", f.get(30, TimeUnit.SECONDS));
    }
    assertEquals(2, subscribed.get(), "one subscription per name, however many watchers");
    ExecutionException third = assertThrows(ExecutionException.class, () -> watch(watches, "c", "w"));
    assertTrue(third.getCause().getMessage().contains("two at most"), third.getCause().toString());
    for (int i = 0; i < 32; i += 2) {
      assertTrue(watches.unwatch("a", "w" + i));
    }
    assertEquals(List.of("a"), closed);
    assertEquals("open", watch(watches, "c", "w"), "the slot a freed is taken");
  }

  private static String watch(LeasedWatches<Opened> watches, String name, String watcher) throws Exception {
    return watches.watch(name, watcher, s -> s.opened().thenApply(v -> "open"))
        .toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }
}
