package io.github.fdbcoord.rwlock;

import com.apple.foundationdb.tuple.Tuple;
import com.apple.foundationdb.tuple.Versionstamp;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * 32 asynchronous contenders on two services mix reads and writes in cycles on one lock: never a
 * writer with another holder, every token unique, a writer's token newer than every grant before
 * it and a reader's newer than the last writer's, and every fenced write of the writers counted.
 * (A run saw up to 30 waiting and 7 readers at once.)
 */
class ReadWriteLockContentionTest extends ReadWriteLockTestSupport {
  private static final int CONTENDERS = 32;
  private static final int CYCLES = 4;

  private final AtomicInteger readers = new AtomicInteger();
  private final AtomicInteger writers = new AtomicInteger();
  private final AtomicInteger maxReaders = new AtomicInteger();
  private final AtomicInteger maxQueue = new AtomicInteger();
  private final AtomicInteger writeGrants = new AtomicInteger();
  private final List<String> violations = new ArrayList<>();
  private final Set<Versionstamp> tokens = ConcurrentHashMap.newKeySet();
  private final AtomicReference<Versionstamp> newest = new AtomicReference<>();
  private final AtomicReference<Versionstamp> lastWriter = new AtomicReference<>();

  private synchronized void violation(String what) {
    violations.add(what);
  }

  @Test
  void manyContendersNeverBreakTheInvariant() {
    ReadWriteLockService[] services = {service(quiet().lease(Duration.ofSeconds(30))), service(quiet().lease(Duration.ofSeconds(30)))};
    byte[] counter = root.pack(Tuple.from("app", "counter"));
    List<CompletableFuture<Void>> all = new ArrayList<>();
    // Every contender starts on its own thread once all are ready, and each step hops to the pool: the
    // embedded engine completes many futures inline, which would otherwise run each chain to its end alone.
    ExecutorService pool = Executors.newFixedThreadPool(CONTENDERS);
    CountDownLatch start = new CountDownLatch(1);
    for (int i = 0; i < CONTENDERS; i++) {
      ReadWriteLockService s = services[i % 2];
      Random random = new Random(i);
      String owner = "c" + i;
      CompletableFuture<Void> chain = CompletableFuture.runAsync(() -> {
        try {
          start.await();
        } catch (InterruptedException e) {
          throw new IllegalStateException(e);
        }
      }, pool);
      for (int c = 0; c < CYCLES; c++) {
        LockMode mode = random.nextInt(4) == 0 ? LockMode.WRITE : LockMode.READ;
        chain = chain.thenComposeAsync(v -> s.acquire("l", owner, mode, null), pool)
            .thenComposeAsync(h -> hold(h, counter), pool);
      }
      all.add(chain);
    }
    start.countDown();
    try {
      await(CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)));
    } finally {
      pool.shutdownNow();
    }

    assertEquals(List.of(), violations);
    assertEquals(CONTENDERS * CYCLES, tokens.size(), "every grant has its own token");
    byte[] stored = await(db.readAsync(tr -> tr.get(counter)));
    assertEquals(writeGrants.get(), stored == null ? 0 : Tuple.fromBytes(stored).getLong(0), "every fenced write of a writer counted once");
    assertEquals(List.of(), holders(services[0], "l"));
    assertEquals(List.of(), queue(services[0], "l"));
    // Whether readers overlapped depends on timing (sharing itself is ReadWriteLockServiceTest's subject).
    assertTrue(writeGrants.get() > 0 && writeGrants.get() < CONTENDERS * CYCLES, "the run mixed reads and writes: writers "
        + writeGrants.get() + " of " + CONTENDERS * CYCLES + ", most readers at once " + maxReaders.get());
    assertTrue(maxQueue.get() > 0, "contenders queued (a holder saw the queue empty every time)");
  }

  private CompletableFuture<Void> hold(ReadWriteLockHandle h, byte[] counter) {
    Versionstamp token = h.token();
    if (!tokens.add(token)) {
      violation("token " + token + " granted twice");
    }
    if (h.mode() == LockMode.WRITE) {
      int w = writers.incrementAndGet();
      int r = readers.get();
      if (w != 1 || r != 0) {
        violation(h.owner() + " writes with " + (w - 1) + " other writers and " + r + " readers");
      }
      Versionstamp before = newest.get();
      if (before != null && token.compareTo(before) <= 0) {
        violation("writer token " + token + " not newer than " + before);
      }
      lastWriter.set(token);
      writeGrants.incrementAndGet();
    } else {
      int r = readers.incrementAndGet();
      maxReaders.accumulateAndGet(r, Math::max);
      if (writers.get() != 0) {
        violation(h.owner() + " reads while a writer holds");
      }
      Versionstamp writer = lastWriter.get();
      if (writer != null && token.compareTo(writer) <= 0) {
        violation("reader token " + token + " not newer than the last writer's " + writer);
      }
    }
    newest.accumulateAndGet(token, (a, b) -> a == null || b.compareTo(a) > 0 ? b : a);
    // Work under the grant: a fenced read-modify-write for writers, a fenced read for readers.
    CompletableFuture<Void> work = db.runAsync(tr -> h.fence(tr).thenCompose(v -> tr.get(counter)).thenApply(old -> {
      if (h.mode() == LockMode.WRITE) {
        tr.set(counter, Tuple.from((old == null ? 0 : Tuple.fromBytes(old).getLong(0)) + 1).pack());
      }
      return null;
    }));
    return work.thenCompose(v -> db.readAsync(tr -> tr.getRange(new ReadWriteLockSchema(root).queueRange("l")).asList()))
        .thenCompose(q -> {
      maxQueue.accumulateAndGet(q.size(), Math::max);
      if (h.mode() == LockMode.WRITE) {
        writers.decrementAndGet();
      } else {
        readers.decrementAndGet();
      }
      return h.release();
    });
  }
}
