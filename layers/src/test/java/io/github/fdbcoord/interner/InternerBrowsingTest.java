package io.github.fdbcoord.interner;

import com.apple.foundationdb.Database;
import io.github.fdbcoord.api.InternedString;
import io.github.fdbcoord.api.InternerStats;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.github.fdbcoord.interner.InternerTestSupport.assertBijection;
import static io.github.fdbcoord.interner.InternerTestSupport.await;
import static io.github.fdbcoord.interner.InternerTestSupport.failure;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The dashboard's queries on a namespace: its stats (strings, sequences in use) and paging through its strings. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class InternerBrowsingTest {
  private static Database db;
  private List<String> root;
  private InternerService service;

  @BeforeAll
  static void openDatabase() {
    db = EmbeddedDatabase.inMemory();
  }

  @AfterAll
  static void closeDatabase() {
    db.close();
  }

  @BeforeEach
  void createService() {
    root = InternerTestSupport.randomRoot();
    // Two sequence bits: sequences 1..3, so ids of sequences 2 and 3 are at or above 2^63 (negative
    // as a Java long) and the unsigned order of pages is exercised.
    service = InternerService.create(db, InternerOptions.builder().rootPath(root).sequenceBits(2)
        .maxBatchSize(500).build());
  }

  @AfterEach
  void removeRoot() {
    InternerTestSupport.removeRoot(db, root);
  }

  @Test
  void statsOfAnEmptyNamespace() {
    StringInterner ns = await(service.open("empty"));
    assertEquals(new InternerStats("empty", 0, 0, 2), await(ns.stats()));
    assertEquals(List.of(), await(ns.list(0, 10)));
  }

  @Test
  void statsCountStringsAndSequencesAfterConcurrentInterning() {
    StringInterner ns = await(service.open("words"));
    // 16 clients intern overlapping batches at once (each string is interned by 4 of them).
    List<CompletableFuture<List<Long>>> calls = new ArrayList<>();
    for (int client = 0; client < 16; client++) {
      List<String> batch = new ArrayList<>();
      for (int i = 0; i < 100; i++) {
        batch.add("w" + ((client % 4) * 100 + i));
      }
      InternerService other = InternerService.create(db, InternerOptions.builder().rootPath(root).cacheMaxBytes(0).build());
      calls.add(other.open("words").thenCompose(h -> h.intern(batch)));
    }
    calls.forEach(InternerTestSupport::await);
    Map<String, Long> forward = assertBijection(db, ns);
    assertEquals(400, forward.size());

    InternerStats stats = await(ns.stats());
    assertEquals(400, stats.strings(), "strings = ids assigned = forward records");
    Set<Long> sequences = new HashSet<>();
    InternerSchema schema = ((FdbStringInterner) ns).schema();
    forward.values().forEach(id -> sequences.add(schema.sequenceOf(id)));
    assertEquals(sequences.size(), stats.sequencesInUse());
    assertEquals(2, stats.sequenceBits());
    assertEquals("words", stats.namespace());
  }

  @Test
  void listPagesThroughEveryStringInUnsignedIdOrder() {
    StringInterner ns = await(service.open("pages"));
    List<String> strings = new ArrayList<>();
    for (int i = 0; i < 257; i++) {
      strings.add("s" + i);
    }
    // Several batches land on several random sequences (1, 2 and 3 are equally likely).
    for (int i = 0; i < strings.size(); i += 20) {
      await(ns.intern(strings.subList(i, Math.min(strings.size(), i + 20))));
    }
    Map<String, Long> forward = assertBijection(db, ns);

    List<InternedString> all = new ArrayList<>();
    long after = 0;
    int pages = 0;
    while (true) {
      List<InternedString> page = await(ns.list(after, 50));
      pages++;
      assertTrue(page.size() <= 50);
      if (page.isEmpty()) {
        break;
      }
      all.addAll(page);
      after = page.get(page.size() - 1).id();
    }
    assertEquals(7, pages, "6 pages of strings (257 = 5 * 50 + 7) and the empty one that ends it");
    assertEquals(strings.size(), all.size());
    Map<String, Long> listed = new HashMap<>();
    for (int i = 0; i < all.size(); i++) {
      InternedString e = all.get(i);
      assertEquals(forward.get(e.string()), e.id(), "id of " + e.string());
      listed.put(e.string(), e.id());
      if (i > 0) {
        assertTrue(Long.compareUnsigned(all.get(i - 1).id(), e.id()) < 0, "unsigned id order at " + i);
      }
    }
    assertEquals(forward, listed);
    // A page starting after an id above 2^63 (if any) holds only larger ids.
    long high = all.get(all.size() - 1).id();
    assertEquals(List.of(), await(ns.list(high, 10)));
  }

  @Test
  void badLimitsAndRemovedNamespaces() {
    StringInterner ns = await(service.open("gone"));
    await(ns.intern(List.of("a", "b")));
    failure(ns.list(0, 0), InternerException.Kind.BAD_REQUEST);
    failure(ns.list(0, 501), InternerException.Kind.BAD_REQUEST);
    assertTrue(await(service.removeNamespace("gone")));
    failure(ns.stats(), InternerException.Kind.NOT_FOUND);
  }
}
