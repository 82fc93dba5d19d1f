package io.github.fdbcoord.semaphore;

import io.github.fdbcoord.api.FencingToken;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * 32 asynchronous contenders on two services cycle acquire / work / release on a semaphore of 3 permits: never more
 * than 3 hold at once, every token is unique, and every grant's token is newer than that of every grant released
 * before its acquire began.
 */
class SemaphoreContentionTest extends SemaphoreTestSupport {
  private static final int PERMITS = 3;
  private static final int CONTENDERS = 32;
  private static final int CYCLES = 3;

  @Test
  void neverMoreHoldersThanPermits() {
    SemaphoreService[] services = {service(quiet().reaperEnabled(true)), service(quiet().reaperEnabled(true))};
    AtomicInteger holding = new AtomicInteger();
    AtomicInteger most = new AtomicInteger();
    Set<FencingToken> tokens = ConcurrentHashMap.newKeySet();
    AtomicReference<FencingToken> newestReleased = new AtomicReference<>();
    ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
    List<CompletableFuture<Void>> all = new ArrayList<>();
    for (int i = 0; i < CONTENDERS; i++) {
      SemaphoreService s = services[i % 2];
      String owner = "c" + i;
      CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
      for (int cycle = 0; cycle < CYCLES; cycle++) {
        chain = chain.thenCompose(v -> {
          FencingToken floor = newestReleased.get();
          return s.acquire("sem", PERMITS, owner, Duration.ofSeconds(60)).thenCompose(h -> {
            int now = holding.incrementAndGet();
            most.accumulateAndGet(now, Math::max);
            if (now > PERMITS) {
              violations.add(now + " holders at once");
            }
            if (!tokens.add(h.token())) {
              violations.add("token " + h.token() + " granted twice");
            }
            if (floor != null && !h.token().isNewerThan(floor)) {
              violations.add("token " + h.token() + " not newer than released " + floor);
            }
            // The work: a transaction fenced with the grant, writing the owner's counter.
            byte[] key = root.pack(com.apple.foundationdb.tuple.Tuple.from("work", owner));
            return db.runAsync(tr -> h.fence(tr).thenRun(() -> tr.set(key, h.token().bytes()))).thenCompose(w -> {
              holding.decrementAndGet();
              return h.release();
            }).thenRun(() -> newestReleased.accumulateAndGet(h.token(),
                (a, b) -> a == null || b.isNewerThan(a) ? b : a));
          });
        });
      }
      all.add(chain);
    }
    await(CompletableFuture.allOf(all.toArray(new CompletableFuture<?>[0])));
    assertTrue(violations.isEmpty(), violations.toString());
    assertEquals(CONTENDERS * CYCLES, tokens.size());
    assertTrue(most.get() >= 1 && most.get() <= PERMITS);
    SemaphoreService.SemaphoreState state = await(services[0].state("sem"));
    assertTrue(state.holders().isEmpty() && state.waiters().isEmpty(), state.toString());
  }
}
