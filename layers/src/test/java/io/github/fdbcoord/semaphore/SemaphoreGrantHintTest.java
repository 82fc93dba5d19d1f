package io.github.fdbcoord.semaphore;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.lease.GrantNotifier;
import io.github.fdbcoord.testsupport.GrantHintRouter;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Grant hints: a release that grants a permit to a waiter tells that waiter's process (a wait in the same service
 * directly, one elsewhere through the {@link GrantNotifier}, which calls {@link SemaphoreService#recheck} there), so
 * the waiter does not wait for its watch. Services stand for processes; owners are {@code node/n} and the notifier
 * routes by the node part.
 */
class SemaphoreGrantHintTest extends SemaphoreTestSupport {
  private final GrantHintRouter hints = new GrantHintRouter();

  /**
   * A service whose waits set no watch and heartbeat only every five minutes: within a test, nothing but a hint
   * makes a wait read the semaphore again.
   */
  private FdbSemaphoreService blindNode(String id) {
    FdbSemaphoreService s = service(quiet().lease(Duration.ofMinutes(10)).heartbeatInterval(Duration.ofMinutes(5))
        .grantNotifier(hints.notifier()));
    s.watchesDisabled = true;
    hints.node(id, s::recheck);
    return s;
  }

  private void awaitWaiters(SemaphoreService s, String name, int waiters) {
    eventually(waiters + " waiting on " + name, Duration.ofSeconds(30),
        () -> await(s.state(name)).waiters().size() == waiters);
  }

  @Test
  void aGrantReachesAWaiterElsewhereByTheNotifierAndOneHereDirectly() {
        FdbSemaphoreService a = blindNode("a");
    FdbSemaphoreService b = blindNode("b");
    SemaphoreHandle first = await(a.acquire("pair", 2, "a/0", Duration.ofSeconds(30)));
    SemaphoreHandle second = await(a.acquire("pair", 2, "a/1", Duration.ofSeconds(30)));
    CompletableFuture<SemaphoreHandle> remote = b.acquire("pair", 2, "b/2", null);
    awaitWaiters(a, "pair", 1);
    CompletableFuture<SemaphoreHandle> local = a.acquire("pair", 2, "a/3", null);
    awaitWaiters(a, "pair", 2);

    await(first.release());
    SemaphoreHandle viaNotifier = await(remote);
    assertEquals("b/2", viaNotifier.owner());
    assertTrue(viaNotifier.token().isNewerThan(second.token()));
    assertEquals(List.of(new GrantHintRouter.Hint("pair", "b/2")), hints.sent, "the grant to a wait on another node goes through the notifier");

    await(second.release());
    SemaphoreHandle direct = await(local);
    assertEquals("a/3", direct.owner());
    assertTrue(direct.token().isNewerThan(viaNotifier.token()));
    assertEquals(List.of(new GrantHintRouter.Hint("pair", "b/2")), hints.sent, "a wait on the granting node is woken without the notifier");
    await(viaNotifier.release());
    await(direct.release());
    assertEquals(List.of(), await(a.state("pair")).holders());
  }

  @Test
  void aHintForAnOwnerNotGrantedGrantsNothing() {
    hints.deliver.set(false);
    FdbSemaphoreService a = blindNode("a");
    FdbSemaphoreService b = blindNode("b");
    SemaphoreHandle held = await(a.acquire("forged", 1, "a/1", Duration.ofSeconds(30)));
    CompletableFuture<SemaphoreHandle> waiting = b.acquire("forged", 1, "b/2", null);
    awaitWaiters(a, "forged", 1);
    assertFalse(b.recheck("forged", "b/3"), "no acquire of b/3 waits on b");
    assertFalse(b.recheck("other", "b/2"), "b/2 waits for another semaphore");
    assertFalse(a.recheck("forged", "b/2"), "b/2 waits on b, not on a");
    assertTrue(b.recheck("forged", "b/2"));
    // The wait read again and found a/1 holding: it still waits, in its place.
    eventually("b/2 still queued behind a/1", Duration.ofSeconds(30), () -> {
      SemaphoreService.SemaphoreState state = await(a.state("forged"));
      return state.waiters().equals(List.of("b/2")) && state.holders().size() == 1
          && state.holders().get(0).owner().equals("a/1");
    });
    assertFalse(waiting.isDone(), "a hint is not a grant");
    hints.deliver.set(true);
    await(held.release());
    SemaphoreHandle next = await(waiting);
    assertEquals("b/2", next.owner());
    assertTrue(next.token().isNewerThan(held.token()));
    await(next.release());
  }

  /**
   * 12 contenders on three services and 3 permits, hints delivered and watches set, while a forger hints random
   * owners on every service: never more than 3 holders, every token unique, every acquire served.
   */
  @Test
  void forgedHintsAmongRealOnesKeepThePermitCount() throws Exception {
    List<SemaphoreService> services = new ArrayList<>();
    for (String id : List.of("a", "b", "c")) {
      FdbSemaphoreService s = service(quiet().grantNotifier(hints.notifier()));
      hints.node(id, s::recheck);
      services.add(s);
    }
    int permits = 3;
    int contenders = 12;
    int rounds = 8;
    AtomicInteger holding = new AtomicInteger();
    Set<FencingToken> tokens = ConcurrentHashMap.newKeySet();
    ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
    List<CompletableFuture<Void>> all = new ArrayList<>();
    try (AutoCloseable forger = hints.forge("busy", contenders)) {
      for (int i = 0; i < contenders; i++) {
        SemaphoreService s = services.get(i % 3);
        String owner = List.of("a", "b", "c").get(i % 3) + "/" + i;
        CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
        for (int r = 0; r < rounds; r++) {
          chain = chain.thenCompose(v -> s.acquire("busy", permits, owner, Duration.ofSeconds(120)).thenCompose(h -> {
            if (holding.incrementAndGet() > permits) {
              violations.add(holding.get() + " holders at once");
            }
            if (!tokens.add(h.token())) {
              violations.add("token " + h.token() + " granted twice");
            }
            holding.decrementAndGet();
            return h.release();
          }));
        }
        all.add(chain);
      }
      await(CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)));
    }
    assertEquals(List.of(), List.copyOf(violations));
    assertEquals(contenders * rounds, tokens.size(), "every acquire was served once");
    SemaphoreService.SemaphoreState end = await(services.get(0).state("busy"));
    assertEquals(List.of(), end.holders());
    assertEquals(List.of(), end.waiters());
  }
}
