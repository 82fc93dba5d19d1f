package io.github.fdbcoord.mutex;

import io.github.fdbcoord.api.FencingToken;
import com.apple.foundationdb.tuple.Versionstamp;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The mutual-exclusion checker: many contenders on their own threads, spread over several service
 * instances (as separate processes would be), acquire, work, release, over and over. Each logs
 * (token, enter) and (token, leave) into one shared record in real-time order; the record must show
 * no two critical sections of a mutex overlapping, tokens strictly increasing, and waiters served
 * in the order of their enqueue tickets.
 */
class MutualExclusionTest extends MutexTestSupport {
  private static final int CONTENDERS_PER_MUTEX = 32;
  private static final int MUTEXES = 2;
  private static final int ROUNDS = 50;
  private static final int SERVICES = 4;

  private record Entry(boolean enter, String mutex, String owner, FencingToken token, Versionstamp ticket) {}

  @Test
  void noOverlapIncreasingTokensFifoService() throws Exception {
    List<FdbMutexService> services = new ArrayList<>();
    for (int i = 0; i < SERVICES; i++) {
      // Reapers run with a lease far above any hold time: none may ever expire a live owner.
      services.add(service(MutexOptions.builder()
          .lease(Duration.ofSeconds(10)).heartbeatInterval(Duration.ofMillis(500)).reaperInterval(Duration.ofMillis(100))));
    }
    List<Entry> log = new ArrayList<>(); // guarded by itself: the shared record, in real-time order
    Map<String, int[]> unguardedCounters = new HashMap<>();
    for (int m = 0; m < MUTEXES; m++) {
      unguardedCounters.put("mx-" + m, new int[1]);
    }
    AtomicReference<Throwable> failure = new AtomicReference<>();
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> threads = new ArrayList<>();
    for (int m = 0; m < MUTEXES; m++) {
      String mutex = "mx-" + m;
      for (int c = 0; c < CONTENDERS_PER_MUTEX; c++) {
        String owner = "owner-" + m + "-" + c;
        MutexService svc = services.get(c % SERVICES);
        Thread t = new Thread(() -> {
          try {
            start.await();
            for (int r = 0; r < ROUNDS; r++) {
              MutexHandle h = await(svc.acquire(mutex, owner, Duration.ofSeconds(60)));
              synchronized (log) {
                log.add(new Entry(true, mutex, owner, h.token(), h.ticket().orElse(null)));
              }
              int[] counter = unguardedCounters.get(mutex);
              int v = counter[0];
              Thread.yield();
              counter[0] = v + 1; // lost updates would betray an overlap too
              synchronized (log) {
                log.add(new Entry(false, mutex, owner, h.token(), null));
              }
              await(h.release());
            }
          } catch (Throwable e) {
            failure.compareAndSet(null, e);
          }
        }, "contender-" + owner);
        threads.add(t);
        t.start();
      }
    }
    long t0 = System.nanoTime();
    start.countDown();
    for (Thread t : threads) {
      t.join(120_000);
    }
    long ms = (System.nanoTime() - t0) / 1_000_000;
    if (failure.get() != null) {
      throw new AssertionError("a contender failed", failure.get());
    }
    int sections = MUTEXES * CONTENDERS_PER_MUTEX * ROUNDS;
    System.out.printf("mutual exclusion: %d critical sections, %d contenders, %d ms%n",
        sections, MUTEXES * CONTENDERS_PER_MUTEX, ms);

    assertEquals(2 * sections, log.size());
    for (int m = 0; m < MUTEXES; m++) {
      String mutex = "mx-" + m;
      assertEquals(CONTENDERS_PER_MUTEX * ROUNDS, unguardedCounters.get(mutex)[0], "lost updates on " + mutex);
      check(log.stream().filter(e -> e.mutex.equals(mutex)).toList());
    }
    for (FdbMutexService s : services) {
      assertEquals(0, s.reaper().expiredCount(), "a reaper expired a live owner");
    }
  }

  private static void check(List<Entry> entries) {
    Entry inside = null;
    FencingToken lastToken = null;
    Versionstamp lastTicket = null;
    FencingToken lastFreeGrant = null;
    int queued = 0;
    for (Entry e : entries) {
      if (e.enter) {
        assertNull(inside, () -> "overlap: " + e.owner + " entered while " + "another was inside");
        inside = e;
        if (lastToken != null) {
          assertTrue(e.token.isNewerThan(lastToken), "token " + e.token + " after " + lastToken);
        }
        lastToken = e.token;
        if (e.ticket != null) {
          // Served in enqueue order: each queue-granted owner enqueued after the previous one.
          if (lastTicket != null) {
            assertTrue(e.ticket.compareTo(lastTicket) > 0, "FIFO broken: ticket " + e.ticket + " served after " + lastTicket);
          }
          lastTicket = e.ticket;
          queued++;
          // Nobody overtakes a waiter: a mutex is only free when its queue is empty, so whoever
          // was granted from the queue enqueued after the last grant of a free mutex.
          if (lastFreeGrant != null) {
            assertTrue(MutexSchema.token(e.ticket).isNewerThan(lastFreeGrant),
                "waiter with ticket " + e.ticket + " was overtaken by the free grant " + lastFreeGrant);
          }
        } else {
          lastFreeGrant = e.token;
        }
      } else {
        if (inside == null || !inside.owner.equals(e.owner) || !inside.token.equals(e.token)) {
          fail("leave of " + e.owner + " does not match the enter of " + (inside == null ? "nobody" : inside.owner));
        }
        inside = null;
      }
    }
    assertNull(inside);
    assertTrue(queued > entries.size() / 4, "the test hardly exercised the queue: " + queued + " queue grants");
  }
}
