package io.github.fdbcoord.interner;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.directory.DirectoryLayer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/** Shared helpers: a random root directory per test, awaiting futures, reading a namespace back whole. */
final class InternerTestSupport {
  private InternerTestSupport() {}

  static List<String> randomRoot() {
    return List.of("test", UUID.randomUUID().toString());
  }

  static void removeRoot(Database db, List<String> root) {
    await(DirectoryLayer.getDefault().removeIfExists(db, root));
  }

  static <T> T await(CompletableFuture<T> f) {
    try {
      return f.get(60, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      throw e.getCause() instanceof RuntimeException ? (RuntimeException) e.getCause() : new RuntimeException(e.getCause());
    } catch (Exception e) {
      throw new AssertionError("future did not complete", e);
    }
  }

  /** The failure of {@code f}, which must be an InternerException of {@code kind}. */
  static InternerException failure(CompletableFuture<?> f, InternerException.Kind kind) {
    try {
      f.get(60, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      InternerException ie = assertInstanceOf(InternerException.class, e.getCause(), "failure type");
      assertEquals(kind, ie.kind(), ie.getMessage());
      assertNotNull(ie.getMessage());
      return ie;
    } catch (Exception e) {
      throw new AssertionError("future did not complete", e);
    }
    return fail("expected a failure of kind " + kind);
  }

  /** Everything a namespace holds, read in one transaction. */
  record Contents(List<Map.Entry<String, Long>> forward, List<Map.Entry<Long, String>> reverse, Map<Long, Long> counters) {}

  static Contents contents(Database db, StringInterner interner) {
    InternerSchema schema = ((FdbStringInterner) interner).schema();
    return await(db.readAsync(tr -> schema.readAllForward(tr, db.getExecutor())
        .thenCombine(schema.readAllReverse(tr, db.getExecutor()), (f, r) -> new Object[] {f, r})
        .thenCombine(schema.readAllCounters(tr, db.getExecutor()), (fr, c) -> {
          @SuppressWarnings("unchecked")
          List<Map.Entry<String, Long>> f = (List<Map.Entry<String, Long>>) fr[0];
          @SuppressWarnings("unchecked")
          List<Map.Entry<Long, String>> r = (List<Map.Entry<Long, String>>) fr[1];
          return new Contents(f, r, c);
        })));
  }

  /**
   * The namespace's invariants: forward and reverse records are inverse bijections, every id has a
   * non-reserved sequence, and each sequence's counter equals the number of ids taken from it and
   * those ids are exactly counters 0..n-1 (so no retry leaked or reused a counter).
   */
  static Map<String, Long> assertBijection(Database db, StringInterner interner) {
    InternerSchema schema = ((FdbStringInterner) interner).schema();
    Contents c = contents(db, interner);
    Map<String, Long> forward = new HashMap<>();
    for (Map.Entry<String, Long> e : c.forward()) {
      assertTrue(forward.put(e.getKey(), e.getValue()) == null, "string listed twice: " + e.getKey());
    }
    Map<Long, String> reverse = new HashMap<>();
    for (Map.Entry<Long, String> e : c.reverse()) {
      assertTrue(reverse.put(e.getKey(), e.getValue()) == null, "id listed twice");
    }
    if (forward.size() != reverse.size()) {
      Map<Long, List<String>> byId = new HashMap<>();
      forward.forEach((str, id) -> byId.computeIfAbsent(id, k -> new ArrayList<>()).add(str));
      byId.values().removeIf(l -> l.size() < 2);
      List<String> orphans = forward.entrySet().stream().filter(e -> !reverse.containsKey(e.getValue()))
          .map(e -> e.getKey() + "=" + Long.toHexString(e.getValue()) + " point read: "
              + await(db.readAsync(tr -> schema.readReverse(tr, e.getValue()))))
          .limit(5).toList();
      System.out.println("forward records without reverse record: " + orphans);
      fail("forward has " + forward.size() + " records, reverse " + reverse.size() + "; ids shared by several strings: "
          + byId.entrySet().stream().limit(10).map(e -> "seq " + schema.sequenceOf(e.getKey()) + " counter "
              + schema.counterOf(e.getKey()) + " -> " + e.getValue()).toList());
    }
    Map<Long, List<Long>> countersBySequence = new HashMap<>();
    for (Map.Entry<String, Long> e : forward.entrySet()) {
      long id = e.getValue();
      assertEquals(e.getKey(), reverse.get(id), "reverse record of id " + InternerIds.format(id));
      assertTrue(schema.isValidId(id), "id with reserved sequence 0");
      countersBySequence.computeIfAbsent(schema.sequenceOf(id), k -> new ArrayList<>()).add(schema.counterOf(id));
    }
    assertEquals(countersBySequence.keySet(), c.counters().keySet(), "sequences with counters are those with ids");
    countersBySequence.forEach((seq, counters) -> {
      long next = c.counters().get(seq);
      assertEquals(next, counters.size(), "counter of sequence " + seq + " vs ids taken from it");
      counters.sort(Long::compare);
      for (int i = 0; i < counters.size(); i++) {
        assertEquals((long) i, (long) counters.get(i), "ids of sequence " + seq + " are counters 0..n-1");
      }
    });
    return forward;
  }
}
