package io.github.fdbcoord.rwlock;

import com.apple.foundationdb.tuple.Versionstamp;
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
 * Grant hints of the read-write lock: a release that lets waiters in tells each of them (one in the same service
 * directly, one elsewhere through the {@link GrantNotifier}, which calls {@link ReadWriteLockService#recheck} there),
 * so they do not wait for their watch. Services stand for processes; owners are {@code node/n}.
 */
class ReadWriteLockGrantHintTest extends ReadWriteLockTestSupport {
  private final GrantHintRouter hints = new GrantHintRouter();

  /** Waits set no watch and renew every five minutes: within a test, only a hint makes a wait read again. */
  private FdbReadWriteLockService blindNode(String id) {
    FdbReadWriteLockService s = service(quiet().lease(Duration.ofMinutes(10)).heartbeatInterval(Duration.ofMinutes(5))
        .grantNotifier(hints.notifier()));
    s.watchesDisabled = true;
    hints.node(id, s::recheck);
    return s;
  }

  @Test
  void aWritersReleaseHintsEveryReaderItLetsIn() {
        FdbReadWriteLockService a = blindNode("a");
    FdbReadWriteLockService b = blindNode("b");
    ReadWriteLockHandle writer = await(a.acquire("doc", "a/w", LockMode.WRITE, Duration.ofSeconds(30)));
    CompletableFuture<ReadWriteLockHandle> r1 = b.acquire("doc", "b/r1", LockMode.READ, null);
    CompletableFuture<ReadWriteLockHandle> r2 = b.acquire("doc", "b/r2", LockMode.READ, null);
    CompletableFuture<ReadWriteLockHandle> r3 = a.acquire("doc", "a/r3", LockMode.READ, null);
    eventually("three readers queued", Duration.ofSeconds(30), () -> queue(a, "doc").size() == 3);
    CompletableFuture<ReadWriteLockHandle> w2 = b.acquire("doc", "b/w2", LockMode.WRITE, null);
    eventually("the second writer queued", Duration.ofSeconds(30), () -> queue(a, "doc").size() == 4);

    await(writer.release());
    List<ReadWriteLockHandle> readers = List.of(await(r1), await(r2), await(r3));
    for (ReadWriteLockHandle r : readers) {
      assertEquals(LockMode.READ, r.mode());
      assertTrue(r.token().compareTo(writer.token()) > 0, r.owner() + "'s token is newer than the writer's");
    }
    assertEquals(Set.of(new GrantHintRouter.Hint("doc", "b/r1"), new GrantHintRouter.Hint("doc", "b/r2")), Set.copyOf(hints.sent),
        "the readers on b were told through the notifier, the one on a directly");
    assertEquals(List.of("b/w2"), queue(a, "doc"));

    for (ReadWriteLockHandle r : readers) {
      await(r.release());
    }
    ReadWriteLockHandle next = await(w2);
    assertEquals("b/w2", next.owner());
    assertTrue(readers.stream().allMatch(r -> next.token().compareTo(r.token()) > 0));
    assertEquals(new GrantHintRouter.Hint("doc", "b/w2"), hints.sent.get(hints.sent.size() - 1));
    await(next.release());
  }

  @Test
  void aHintForAnOwnerNotGrantedGrantsNothing() {
    hints.deliver.set(false);
    FdbReadWriteLockService a = blindNode("a");
    FdbReadWriteLockService b = blindNode("b");
    ReadWriteLockHandle held = await(a.acquire("forged", "a/1", LockMode.WRITE, Duration.ofSeconds(30)));
    CompletableFuture<ReadWriteLockHandle> waiting = b.acquire("forged", "b/2", LockMode.READ, null);
    eventually("b/2 queued", Duration.ofSeconds(30), () -> queue(a, "forged").equals(List.of("b/2")));
    assertFalse(b.recheck("forged", "b/3"), "no acquire of b/3 waits on b");
    assertFalse(a.recheck("forged", "b/2"), "b/2 waits on b, not on a");
    assertTrue(b.recheck("forged", "b/2"));
    eventually("b/2 still queued behind a/1", Duration.ofSeconds(30),
        () -> queue(a, "forged").equals(List.of("b/2")) && holders(a, "forged").equals(List.of("a/1")));
    assertFalse(waiting.isDone(), "a hint is not a grant");
    hints.deliver.set(true);
    await(held.release());
    ReadWriteLockHandle next = await(waiting);
    assertEquals("b/2", next.owner());
    await(next.release());
  }

  /**
   * Readers and writers on three services, hints delivered and watches set, while a forger hints random owners:
   * never a writer beside another holder, every grant's token unique, every acquire served.
   */
  @Test
  void forgedHintsAmongRealOnesKeepWritersAlone() throws Exception {
        List<ReadWriteLockService> services = new ArrayList<>();
    for (String id : List.of("a", "b", "c")) {
      FdbReadWriteLockService s = service(quiet().grantNotifier(hints.notifier()));
      hints.node(id, s::recheck);
      services.add(s);
    }
    int contenders = 12;
    int rounds = 6;
    AtomicInteger readers = new AtomicInteger();
    AtomicInteger writers = new AtomicInteger();
    Set<Versionstamp> tokens = ConcurrentHashMap.newKeySet();
    ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
    List<CompletableFuture<Void>> all = new ArrayList<>();
    try (AutoCloseable forger = hints.forge("busy", contenders)) {
      for (int i = 0; i < contenders; i++) {
        ReadWriteLockService s = services.get(i % 3);
        String owner = List.of("a", "b", "c").get(i % 3) + "/" + i;
        LockMode mode = i % 4 == 0 ? LockMode.WRITE : LockMode.READ;
        CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
        for (int r = 0; r < rounds; r++) {
          chain = chain.thenCompose(v -> s.acquire("busy", owner, mode, Duration.ofSeconds(120)).thenCompose(h -> {
            if (mode == LockMode.WRITE) {
              if (writers.incrementAndGet() > 1 || readers.get() > 0) {
                violations.add(owner + " writes beside " + writers.get() + " writers and " + readers.get() + " readers");
              }
            } else if (readers.incrementAndGet() > 0 && writers.get() > 0) {
              violations.add(owner + " reads while a writer holds");
            }
            if (!tokens.add(h.token())) {
              violations.add("token " + h.token() + " granted twice");
            }
            (mode == LockMode.WRITE ? writers : readers).decrementAndGet();
            return h.release();
          }));
        }
        all.add(chain);
      }
      await(CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)));
    }
    assertEquals(List.of(), List.copyOf(violations));
    assertEquals(contenders * rounds, tokens.size(), "every acquire was served once");
    assertEquals(List.of(), holders(services.get(0), "busy"));
    assertEquals(List.of(), queue(services.get(0), "busy"));
  }
}
