package io.github.fdbcoord.conformance;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.KeyValue;
import io.github.fdbcoord.embedded.EmbeddedOptions;
import org.junit.jupiter.api.TestTemplate;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * FoundationDB's "cycle" workload: N keys form a ring (each value names the next node); each
 * transaction reads a node r and its next three r2, r3, r4 and swaps r2 and r3 (r -> r3 -> r2 -> r4).
 * Under serializable execution the ring stays one cycle of length N, which a checker verifies in
 * consistent snapshots while the workload runs and once at the end.
 */
@ExtendWith(EngineExtension.class)
class CycleWorkloadTest {
  private static final int NODES = 100;
  private static final int THREADS = 8;
  private static final int TRANSACTIONS_PER_THREAD = 400;

  @TestTemplate
  void ringStaysOneCycle(Fixture f) throws Exception {
    run(f, f.db());
  }

  @TestTemplate
  void ringStaysOneCycleWithLatencyInjection(Fixture f) throws Exception {
    Database db = f.embeddedDatabase(EmbeddedOptions.builder().latency(Duration.ofMillis(1)).build());
    run(f, db);
  }

  private static byte[] node(Fixture f, int i) {
    return f.key(String.format("cycle/%04d", i));
  }

  private static byte[] encode(int i) {
    return ByteBuffer.allocate(4).putInt(i).array();
  }

  private static int decode(byte[] b) {
    if (b == null || b.length != 4) {
      throw new IllegalStateException("ring node has no valid successor: " + FdbAssertions.hex(b));
    }
    return ByteBuffer.wrap(b).getInt();
  }

  private static void run(Fixture f, Database db) throws Exception {
    db.run(tr -> {
      for (int i = 0; i < NODES; i++) {
        tr.set(node(f, i), encode((i + 1) % NODES));
      }
      return null;
    });

    AtomicInteger committed = new AtomicInteger();
    AtomicLong attempts = new AtomicLong();
    AtomicInteger checks = new AtomicInteger();
    List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
    AtomicBoolean done = new AtomicBoolean();

    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < THREADS; t++) {
      Thread worker = new Thread(() -> {
        try {
          for (int i = 0; i < TRANSACTIONS_PER_THREAD && failures.isEmpty(); i++) {
            db.run(tr -> {
              attempts.incrementAndGet();
              int r = ThreadLocalRandom.current().nextInt(NODES);
              int r2 = decode(tr.get(node(f, r)).join());
              int r3 = decode(tr.get(node(f, r2)).join());
              int r4 = decode(tr.get(node(f, r3)).join());
              tr.set(node(f, r), encode(r3));
              tr.set(node(f, r2), encode(r4));
              tr.set(node(f, r3), encode(r2));
              return null;
            });
            committed.incrementAndGet();
          }
        } catch (Throwable e) {
          failures.add(e);
        }
      }, "cycle-" + t);
      workers.add(worker);
    }
    Thread checker = new Thread(() -> {
      try {
        while (!done.get() && failures.isEmpty()) {
          List<KeyValue> ring = db.read(tr -> readRing(f, tr));
          verifyOneCycle(ring);
          checks.incrementAndGet();
          Thread.sleep(20);
        }
      } catch (Throwable e) {
        failures.add(e);
      }
    }, "cycle-checker");

    long start = System.nanoTime();
    workers.forEach(Thread::start);
    checker.start();
    for (Thread w : workers) {
      w.join(60_000);
    }
    done.set(true);
    checker.join(10_000);
    long millis = (System.nanoTime() - start) / 1_000_000;

    assertTrue(failures.isEmpty(), () -> "workload failed: " + failures);
    assertEquals(THREADS * TRANSACTIONS_PER_THREAD, committed.get());
    verifyOneCycle(db.read(tr -> readRing(f, tr)));
    assertTrue(checks.get() > 0, "the checker verified at least one snapshot during the run");
    System.out.printf("cycle workload on %s: %d transactions committed, %d attempts, %d consistent snapshots checked, %d ms%n",
        f.engine(), committed.get(), attempts.get(), checks.get(), millis);
  }

  private static List<KeyValue> readRing(Fixture f, com.apple.foundationdb.ReadTransaction tr) {
    return tr.getRange(com.apple.foundationdb.Range.startsWith(f.key("cycle/"))).asList().join();
  }

  /** Walks the ring from node 0: it must return to 0 after exactly NODES steps, visiting each node once. */
  private static void verifyOneCycle(List<KeyValue> ring) {
    assertEquals(NODES, ring.size(), "ring has lost or gained nodes");
    int[] next = new int[NODES];
    for (int i = 0; i < NODES; i++) {
      next[i] = decode(ring.get(i).getValue());
    }
    boolean[] seen = new boolean[NODES];
    int at = 0;
    for (int step = 0; step < NODES; step++) {
      assertTrue(!seen[at], "node " + at + " visited twice: the ring is broken after " + step + " steps");
      seen[at] = true;
      at = next[at];
    }
    assertEquals(0, at, "after " + NODES + " steps the walk must be back at node 0");
  }
}
