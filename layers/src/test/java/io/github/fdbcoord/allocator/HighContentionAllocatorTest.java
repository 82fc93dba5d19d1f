package io.github.fdbcoord.allocator;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.async.AsyncUtil;
import com.apple.foundationdb.directory.DirectoryLayer;
import com.apple.foundationdb.directory.DirectorySubspace;
import com.apple.foundationdb.subspace.Subspace;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.embedded.EmbeddedOptions;
import io.github.fdbcoord.fdb.FdbErrors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HighContentionAllocatorTest {
  private static Database db;
  private DirectorySubspace dir;
  private AllocatorService service;

  @BeforeAll
  static void openDatabase() {
    // A millisecond per read and commit, as a network would add: without it transactions finish
    // too fast to overlap much, and a missing conflict would go unnoticed.
    db = EmbeddedDatabase.open(EmbeddedOptions.builder().latency(Duration.ofMillis(1)).build());
  }

  @AfterAll
  static void closeDatabase() {
    db.close();
  }

  @BeforeEach
  void createDirectory() throws Exception {
    dir = DirectoryLayer.getDefault()
        .createOrOpen(db, List.of("test", UUID.randomUUID().toString())).get(10, TimeUnit.SECONDS);
    service = AllocatorService.create(db, AllocatorServiceOptions.builder().root(dir).build());
  }

  @AfterEach
  void removeDirectory() throws Exception {
    DirectoryLayer.getDefault().removeIfExists(db, dir.getPath()).get(10, TimeUnit.SECONDS);
  }

  @Test
  void sequentialAllocationsAreDistinctAndStartSmall() throws Exception {
    HighContentionAllocator a = service.allocator("seq");
    Set<Long> seen = new HashSet<>();
    for (int i = 0; i < 40; i++) {
      long v = a.allocate().get(10, TimeUnit.SECONDS);
      assertTrue(seen.add(v), "value handed out twice: " + v);
      assertTrue(v >= 0 && v < 128, "the first 40 values lie in the first two 64-wide windows: " + v);
    }
  }

  @Test
  void sixtyFourConcurrentAllocatorsAcrossWindowAdvancesNeverRepeat() throws Exception {
    HighContentionAllocator a = service.allocator("hot");
    List<Long> values = allocateConcurrently(64, 40, a::allocate);
    assertEquals(64 * 40, values.size());
    assertEquals(values.size(), new HashSet<>(values).size(), "a value was handed out twice");
    long max = values.stream().mapToLong(Long::longValue).max().orElseThrow();
    assertTrue(max >= 1280, "2560 allocations must have advanced into 1024-wide windows, max " + max);
  }

  @Test
  void retriedTransactionsNeverRepeatValues() throws Exception {
    HighContentionAllocator a = service.allocator("retried");
    AtomicInteger attempts = new AtomicInteger();
    // Each allocation's transaction fails after allocating, about a third of the time, with a
    // retryable conflict: the retry loop must throw that allocation away and allocate again.
    Supplier<CompletableFuture<Long>> flaky = () -> db.runAsync(tr -> {
      attempts.incrementAndGet();
      return a.allocateOnce(tr).thenApply(v -> failSometimes(v));
    }, db.getExecutor());
    List<Long> values = allocateConcurrently(64, 15, flaky);
    assertEquals(64 * 15, values.size());
    assertEquals(values.size(), new HashSet<>(values).size(), "a value was handed out twice");
    assertTrue(attempts.get() > values.size(), "retries must have happened: " + attempts.get());
  }

  private static long failSometimes(long value) {
    if (ThreadLocalRandom.current().nextInt(3) == 0) {
      throw FdbErrors.error(FdbErrors.NOT_COMMITTED);
    }
    return value;
  }

  @Test
  void twoServicesOnTheSameSubspaceNeverCollide() throws Exception {
    AllocatorService other = AllocatorService.create(db, AllocatorServiceOptions.builder().root(dir).build());
    HighContentionAllocator first = service.allocator("shared");
    HighContentionAllocator second = other.allocator("shared");
    AtomicInteger turn = new AtomicInteger();
    List<Long> values = allocateConcurrently(64, 20,
        () -> (turn.incrementAndGet() % 2 == 0 ? first : second).allocate());
    assertEquals(values.size(), new HashSet<>(values).size(), "two allocator instances collided");
  }

  @Test
  void allocationsInOpenTransactionsProceedConcurrently() throws Exception {
    HighContentionAllocator a = service.allocator("open-tx");
    try (Transaction t1 = db.createTransaction(); Transaction t2 = db.createTransaction()) {
      long v1 = a.allocate(t1).get(10, TimeUnit.SECONDS);
      // With a JVM-wide lock held for t1's allocation this would wait for t1 to finish.
      long v2 = a.allocate(t2).get(10, TimeUnit.SECONDS);
      t1.commit().get(10, TimeUnit.SECONDS);
      try {
        t2.commit().get(10, TimeUnit.SECONDS);
        assertTrue(v1 != v2, "both committed with " + v1);
      } catch (Exception e) {
        assertEquals(FdbErrors.NOT_COMMITTED, FdbErrors.codeOf(e), "only a conflict may stop t2");
        assertEquals(v1, v2, "t2 may only conflict when it picked t1's candidate");
      }
    }
  }

  @Test
  void valueAllocatedInAnAbortedTransactionIsNotKept() throws Exception {
    HighContentionAllocator a = service.allocator("aborted");
    AllocatorSchema schema = new AllocatorSchema(service.subspaceOf("aborted"));
    long v;
    try (Transaction tr = db.createTransaction()) {
      v = a.allocate(tr).get(10, TimeUnit.SECONDS);
      // closed without commit
    }
    byte[] reservation = db.readAsync(tr -> tr.get(schema.packReservationKey(v))).get(10, TimeUnit.SECONDS);
    assertEquals(null, reservation);
  }

  @Test
  void windowAdvanceClearsThePreviousWindow() throws Exception {
    HighContentionAllocator a = service.allocator("advance");
    Subspace sub = service.subspaceOf("advance");
    AllocatorSchema schema = new AllocatorSchema(sub);
    // Contended first: an allocation whose snapshot predates a concurrent advance still commits
    // its slot and reservation in the window that advance cleared (seed 000 and fdb-java alike:
    // harmless, below every later window). The next advance clears those, so one advance made
    // with nothing in flight must leave only its own window behind.
    List<Long> values = new ArrayList<>(allocateConcurrently(8, 100, a::allocate));
    long contendedStart = latestWindowStart(schema);
    while (latestWindowStart(schema) == contendedStart) {
      values.add(a.allocate().get(10, TimeUnit.SECONDS));
    }
    assertEquals(values.size(), new HashSet<>(values).size(), "a value was handed out twice");
    List<KeyValue> counters = db.readAsync(tr -> tr.getRange(sub.get(0).range()).asList()).get(10, TimeUnit.SECONDS);
    assertEquals(1, counters.size(), "only the newest window's counter survives");
    long start = schema.unpackCounterKey(counters.get(0).getKey());
    List<KeyValue> reservations = db.readAsync(tr -> tr.getRange(sub.get(1).range()).asList()).get(10, TimeUnit.SECONDS);
    for (KeyValue kv : reservations) {
      long r = schema.unpackReservationKey(kv.getKey());
      assertTrue(r >= start, "reservation " + r + " of a cleared window survived (window starts at " + start + ")");
    }
    long inWindow = values.stream().filter(v -> v >= start).count();
    assertEquals(inWindow, reservations.size(), "each value of the current window has its reservation");
  }

  private static long latestWindowStart(AllocatorSchema schema) throws Exception {
    return db.readAsync(tr -> schema.latestWindowStart(tr.snapshot())).get(10, TimeUnit.SECONDS);
  }

  @Test
  void prefixesAreTheCompactEncodingOfDistinctValues() throws Exception {
    HighContentionAllocator a = service.allocator("prefix");
    Set<Long> seen = new HashSet<>();
    for (int i = 0; i < 20; i++) {
      byte[] p = a.allocatePrefix().get(10, TimeUnit.SECONDS);
      assertTrue(seen.add(AllocatorSchema.unpackPrefix(p)));
    }
  }

  @Test
  void namedAllocatorsAreIndependent() throws Exception {
    assertTrue(!service.subspaceOf("a").equals(service.subspaceOf("b")));
    long a = service.allocate("a").get(10, TimeUnit.SECONDS);
    long b = service.allocate("b").get(10, TimeUnit.SECONDS);
    assertTrue(a < 64 && b < 64);
  }

  /** Runs {@code loops} asynchronous loops at once, each allocating {@code each} values in turn. */
  static List<Long> allocateConcurrently(int loops, int each, Supplier<CompletableFuture<Long>> allocate)
      throws Exception {
    return allocateConcurrently(db.getExecutor(), loops, each, allocate);
  }

  static List<Long> allocateConcurrently(Executor executor, int loops, int each,
                                         Supplier<CompletableFuture<Long>> allocate) throws Exception {
    ConcurrentLinkedQueue<Long> values = new ConcurrentLinkedQueue<>();
    List<CompletableFuture<Void>> running = new ArrayList<>();
    for (int i = 0; i < loops; i++) {
      AtomicInteger done = new AtomicInteger();
      running.add(AsyncUtil.whileTrue(() -> allocate.get()
          .thenApply(v -> values.add(v) && done.incrementAndGet() < each), executor));
    }
    CompletableFuture.allOf(running.toArray(new CompletableFuture<?>[0])).get(60, TimeUnit.SECONDS);
    return new ArrayList<>(values);
  }
}
