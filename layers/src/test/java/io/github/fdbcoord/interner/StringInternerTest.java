package io.github.fdbcoord.interner;

import com.apple.foundationdb.Database;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

import static io.github.fdbcoord.interner.InternerTestSupport.assertBijection;
import static io.github.fdbcoord.interner.InternerTestSupport.await;
import static io.github.fdbcoord.interner.InternerTestSupport.failure;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class StringInternerTest {
  private static Database db;
  private List<String> root;
  private InternerService service;
  private StringInterner interner;

  @BeforeAll
  static void openDatabase() {
    db = EmbeddedDatabase.inMemory();
  }

  @AfterAll
  static void closeDatabase() {
    db.close();
  }

  @BeforeEach
  void openNamespace() {
    root = InternerTestSupport.randomRoot();
    service = InternerService.create(db, InternerOptions.builder().rootPath(root).build());
    interner = await(service.open("words"));
  }

  @AfterEach
  void removeRoot() {
    InternerTestSupport.removeRoot(db, root);
  }

  private InternerService uncachedService(InternerOptions.Builder b) {
    return InternerService.create(db, b.rootPath(root).cacheMaxBytes(0).build());
  }

  @Test
  void sameStringSameIdAcrossCallsAndClients() {
    long a = await(interner.intern("alpha"));
    assertEquals(a, await(interner.intern("alpha")));
    StringInterner other = await(uncachedService(InternerOptions.builder()).open("words"));
    assertEquals(a, await(other.intern("alpha")), "another client without cache sees the same id");
    assertNotEquals(a, await(interner.intern("beta")));
    assertTrue(a != 0 && ((FdbStringInterner) interner).schema().isValidId(a));
  }

  @Test
  void batchKeepsOrderAndDuplicatesShareIds() {
    List<String> batch = List.of("c", "a", "b", "a", "", "c", "nul\u0000x", "日本");
    List<Long> ids = await(interner.intern(batch));
    assertEquals(batch.size(), ids.size());
    assertEquals(ids.get(1), ids.get(3));
    assertEquals(ids.get(0), ids.get(5));
    assertEquals(6, new HashSet<>(ids).size());
    List<Optional<String>> back = await(interner.lookup(ids));
    for (int i = 0; i < batch.size(); i++) {
      assertEquals(Optional.of(batch.get(i)), back.get(i));
    }
    // A later batch mixing known and new strings keeps the known ids.
    List<Long> again = await(interner.intern(List.of("new1", "a", "new2", "c")));
    assertEquals(ids.get(1), again.get(1));
    assertEquals(ids.get(0), again.get(3));
    assertBijection(db, interner);
  }

  @Test
  void emptyBatches() {
    assertEquals(List.of(), await(interner.intern(List.of())));
    assertEquals(List.of(), await(interner.lookup(List.of())));
    assertEquals(List.of(), await(interner.resolve(List.of())));
  }

  @Test
  void lookupAndResolveDoNotCreate() {
    StringInterner fresh = await(uncachedService(InternerOptions.builder()).open("words"));
    long id = await(interner.intern("present"));
    List<OptionalLong> resolved = await(fresh.resolve(List.of("absent", "present", "absent")));
    assertEquals(List.of(OptionalLong.empty(), OptionalLong.of(id), OptionalLong.empty()), resolved);
    assertEquals(OptionalLong.empty(), await(fresh.resolve("absent")), "resolve created nothing");
    assertEquals(Optional.of("present"), await(fresh.lookup(id)));
    long unknown = ((FdbStringInterner) fresh).schema().packId(12345, 67);
    assertEquals(List.of(Optional.of("present"), Optional.empty()), await(fresh.lookup(List.of(id, unknown))));
    assertEquals(1, InternerTestSupport.contents(db, interner).forward().size());
  }

  @Test
  void absentResultsAreNotCached() {
    assertEquals(OptionalLong.empty(), await(interner.resolve("later")));
    long id = await(uncachedService(InternerOptions.builder()).open("words").thenCompose(i -> i.intern("later")));
    assertEquals(OptionalLong.of(id), await(interner.resolve("later")));
    assertEquals(Optional.of("later"), await(interner.lookup(id)));
  }

  private void assertNothingWritten() {
    assertEquals(0, InternerTestSupport.contents(db, interner).forward().size(), "a refused batch writes nothing");
  }

  @Test
  void aNullBatchIsRefused() {
    failure(interner.intern((List<String>) null), InternerException.Kind.BAD_REQUEST);
    assertNothingWritten();
  }

  @Test
  void aNullStringInABatchIsRefusedWithItsIndexAndTheRestIsNotWritten() {
    InternerException nul = failure(interner.intern(Arrays.asList("ok", null)), InternerException.Kind.BAD_REQUEST);
    assertTrue(nul.getMessage().contains("index 1"), nul.getMessage());
    assertNothingWritten();
  }

  @Test
  void aNullStringIsRefused() {
    failure(interner.intern((String) null), InternerException.Kind.BAD_REQUEST);
    assertNothingWritten();
  }

  @Test
  void aNullStringToResolveIsRefused() {
    failure(interner.resolve(Arrays.asList((String) null)), InternerException.Kind.BAD_REQUEST);
  }

  @Test
  void aNullIdToLookUpIsRefused() {
    failure(interner.lookup(Arrays.asList(1L << 60, null)), InternerException.Kind.BAD_REQUEST);
  }

  @Test
  void theReservedIdZeroIsRefused() {
    InternerException zero = failure(interner.lookup(0), InternerException.Kind.BAD_REQUEST);
    assertTrue(zero.getMessage().contains("reserved"), zero.getMessage());
  }

  @Test
  void anIdOfNoNamespaceIsRefused() {
    failure(interner.lookup(42), InternerException.Kind.BAD_REQUEST);
  }

  @Test
  void aStringThatIsNotValidUnicodeIsRefused() {
    failure(interner.intern("lone \uD800 surrogate"), InternerException.Kind.BAD_REQUEST);
    assertNothingWritten();
  }

  @Test
  void anEmptyNamespaceNameIsRefused() {
    failure(service.open(""), InternerException.Kind.BAD_REQUEST);
  }

  @Test
  void aNullNamespaceNameIsRefused() {
    failure(service.open(null), InternerException.Kind.BAD_REQUEST);
  }

  @Test
  void aTooLongNamespaceNameIsRefused() {
    failure(service.open("n".repeat(300)), InternerException.Kind.BAD_REQUEST);
  }

  @Test
  void tooLongStringsAreRefusedWithTheLimit() {
    int max = ((FdbStringInterner) interner).schema().maxStringBytes();
    String longest = "x".repeat(max);
    long id = await(interner.intern(longest));
    assertEquals(Optional.of(longest), await(interner.lookup(id)));
    InternerException e = failure(interner.intern(List.of("fine", longest + "x")), InternerException.Kind.BAD_REQUEST);
    assertTrue(e.getMessage().contains("10000") && e.getMessage().contains("index 1")
        && e.getMessage().contains(String.valueOf(max + 1)), e.getMessage());
    // Multi-byte characters count in UTF-8 bytes, not chars.
    failure(interner.intern("é".repeat(max / 2 + 1)), InternerException.Kind.BAD_REQUEST);
    // At the edges of the UTF-8 lengths: U+0080 is the first 2-byte character, U+0800 the first 3-byte one.
    // Refused by the interner's own check, which says what the limit is (not by the store's key limit).
    for (String tooLong : List.of("\u0080".repeat(max / 2 + 1), "\u0800".repeat(max / 3 + 1))) {
      InternerException refused = failure(interner.intern(tooLong), InternerException.Kind.BAD_REQUEST);
      assertTrue(refused.getMessage().contains("is too long") && refused.getMessage().contains(String.valueOf(max)),
          refused.getMessage());
    }
    String twoByteLongest = "\u0080".repeat(max / 2);
    assertEquals(Optional.of(twoByteLongest), await(interner.lookup(await(interner.intern(twoByteLongest)))));
    failure(interner.resolve(longest + "x"), InternerException.Kind.BAD_REQUEST);
    failure(interner.intern("x".repeat(1_000_000)), InternerException.Kind.BAD_REQUEST);
  }

  @Test
  void batchLimit() {
    InternerService small = InternerService.create(db, InternerOptions.builder().rootPath(root).maxBatchSize(3).build());
    StringInterner i = await(small.open("words"));
    assertEquals(3, await(i.intern(List.of("a", "b", "c"))).size());
    InternerException e = failure(i.intern(List.of("a", "b", "c", "d")), InternerException.Kind.BAD_REQUEST);
    assertTrue(e.getMessage().contains("limit of 3"), e.getMessage());
    // The same limit for reverse lookups and resolves, which write nothing but still bound a transaction.
    List<Long> ids = await(i.intern(List.of("a", "b", "c")));
    assertEquals(3, await(i.lookup(ids)).size());
    e = failure(i.lookup(List.of(ids.get(0), ids.get(1), ids.get(2), ids.get(0))), InternerException.Kind.BAD_REQUEST);
    assertTrue(e.getMessage().contains("limit of 3"), e.getMessage());
    assertEquals(3, await(i.resolve(List.of("a", "b", "x"))).size());
    e = failure(i.resolve(List.of("a", "b", "c", "d")), InternerException.Kind.BAD_REQUEST);
    assertTrue(e.getMessage().contains("limit of 3"), e.getMessage());
  }

  @Test
  void customSplitIsRecordedAndKept() {
    InternerService wide = InternerService.create(db, InternerOptions.builder().rootPath(root).sequenceBits(20).build());
    StringInterner twenty = await(wide.open("split20"));
    assertEquals(20, twenty.sequenceBits());
    long id = await(twenty.intern("s"));
    assertTrue(Long.compareUnsigned(id, 1L << 44) >= 0, "sequence part is non-zero");
    assertEquals(0, ((FdbStringInterner) twenty).schema().counterOf(id), "first id of a fresh sequence");
    // Opened later with other options, the namespace keeps the split it was created with.
    StringInterner reopened = await(uncachedService(InternerOptions.builder().sequenceBits(8)).open("split20"));
    assertEquals(20, reopened.sequenceBits());
    assertEquals(id, await(reopened.intern("s")));
    assertEquals(16, interner.sequenceBits());
  }

  @Test
  void exhaustedSequencesAreSkipped() {
    // 60 sequence bits leave 16 counters per sequence. The picker offers sequence 7 first, which is
    // filled up by the first batch, then 7 again (now exhausted), then fresh ones.
    Deque<Long> picks = new ArrayDeque<>(List.of(7L, 7L, 7L, 9L, 7L, 11L));
    InternerService tiny = InternerService.create(db, InternerOptions.builder().rootPath(root).sequenceBits(60)
        .sequencePicker(bits -> picks.isEmpty() ? InternerOptions.RANDOM_SEQUENCE.pick(bits) : picks.poll()).build());
    StringInterner i = await(tiny.open("tiny"));
    InternerSchema schema = ((FdbStringInterner) i).schema();
    List<String> first = strings("a", 20);
    List<Long> ids = await(i.intern(first)); // 16 from sequence 7, then 7 is exhausted, 4 from 9
    for (int k = 0; k < 16; k++) {
      assertEquals(schema.packId(7, k), ids.get(k));
    }
    for (int k = 16; k < 20; k++) {
      assertEquals(schema.packId(9, k - 16), ids.get(k));
    }
    List<Long> more = await(i.intern(strings("b", 3))); // 7 is exhausted and skipped, 11 serves
    assertEquals(List.of(schema.packId(11, 0), schema.packId(11, 1), schema.packId(11, 2)), more);
    Map<String, Long> all = assertBijection(db, i);
    assertEquals(23, all.size());
    assertEquals(23, new HashSet<>(all.values()).size());
  }

  @Test
  void tooManyExhaustedSequencesFailClearly() {
    InternerService tiny = InternerService.create(db, InternerOptions.builder().rootPath(root).sequenceBits(60)
        .maxSequenceTries(3).sequencePicker(bits -> 5L).build());
    StringInterner i = await(tiny.open("full"));
    assertEquals(16, await(i.intern(strings("a", 16))).size());
    InternerException e = failure(i.intern("one more"), InternerException.Kind.EXHAUSTED);
    assertTrue(e.getMessage().contains("exhausted"), e.getMessage());
    assertEquals(OptionalLong.empty(), await(i.resolve("one more")), "the failed batch wrote nothing");
    assertBijection(db, i);
  }

  @Test
  void largestSplitsWork() {
    for (int bits : new int[] {1, 63}) {
      InternerService s = InternerService.create(db, InternerOptions.builder().rootPath(root).sequenceBits(bits).build());
      StringInterner i = await(s.open("bits" + bits));
      List<String> batch = strings("s", 40);
      List<Long> ids = await(i.intern(batch));
      assertEquals(40, new HashSet<>(ids).size());
      assertEquals(batch, await(i.lookup(ids)).stream().map(Optional::get).toList());
      assertBijection(db, i);
    }
  }

  @Test
  void namespacesAreIsolatedListedAndRemovable() {
    StringInterner other = await(service.open("other"));
    long a = await(interner.intern("shared"));
    long b = await(other.intern("shared"));
    assertEquals(Optional.of("shared"), await(other.lookup(b)));
    assertEquals(OptionalLong.empty(), await(other.resolve("only-in-words")));
    assertEquals(List.of("other", "words"), await(service.listNamespaces()));
    assertSame(interner, await(service.open("words")), "opened handles are kept");
    assertSame(interner, await(service.openExisting("words")));

    assertTrue(await(service.removeNamespace("other")));
    assertEquals(List.of("words"), await(service.listNamespaces()));
    failure(other.intern("x"), InternerException.Kind.NOT_FOUND);
    failure(service.openExisting("other"), InternerException.Kind.NOT_FOUND);
    assertEquals(Optional.empty(), await(other.lookup(b)), "cache entries of a removed namespace are dropped");
    assertTrue(!await(service.removeNamespace("other")));
    StringInterner recreated = await(service.open("other"));
    assertEquals(OptionalLong.empty(), await(recreated.resolve("shared")));
    assertEquals(OptionalLong.of(a), await(interner.resolve("shared")));
  }

  @Test
  void removalByAnotherClientIsNoticed() {
    InternerService elsewhere = InternerService.create(db, InternerOptions.builder().rootPath(root).build());
    await(interner.intern("before"));
    assertTrue(await(elsewhere.removeNamespace("words")));
    failure(interner.intern("after"), InternerException.Kind.NOT_FOUND);
    StringInterner reopened = await(service.open("words"));
    assertTrue(reopened != interner, "the service forgot the stale handle");
    assertEquals(OptionalLong.empty(), await(reopened.resolve("before")));
    assertEquals(1, await(reopened.intern(List.of("after"))).size());
  }

  @Test
  void directoryOfAnotherLayerIsRefused() {
    List<String> path = new ArrayList<>(root);
    path.add("foreign");
    await(com.apple.foundationdb.directory.DirectoryLayer.getDefault()
        .create(db, path, "someone.else".getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    InternerException e = failure(service.open("foreign"), InternerException.Kind.BAD_REQUEST);
    assertTrue(e.getMessage().contains("layer"), e.getMessage());
    failure(service.openExisting("foreign"), InternerException.Kind.BAD_REQUEST);
  }

  @Test
  void batchTooLargeForOneTransactionIsABadRequest() {
    // 1,200 strings of 9,000 bytes: forward keys and reverse values alone pass FoundationDB's 10 MB limit.
    List<String> huge = new ArrayList<>();
    for (int k = 0; k < 1200; k++) {
      huge.add(k + "-" + "z".repeat(9000));
    }
    InternerException e = failure(interner.intern(huge), InternerException.Kind.BAD_REQUEST);
    assertEquals(io.github.fdbcoord.fdb.FdbErrors.TRANSACTION_TOO_LARGE, e.fdbCode());
    assertEquals(0, InternerTestSupport.contents(db, interner).forward().size());
  }

  @Test
  void idsSurviveARestartOfADurableStore(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) {
    List<String> durableRoot = InternerTestSupport.randomRoot();
    InternerOptions options = InternerOptions.builder().rootPath(durableRoot).sequenceBits(60)
        .sequencePicker(bits -> 3L).maxSequenceTries(1000).build();
    List<Long> before;
    try (Database durable = EmbeddedDatabase.open(io.github.fdbcoord.embedded.EmbeddedOptions.durable(dir))) {
      before = await(InternerService.create(durable, options).open("kept").thenCompose(i -> i.intern(strings("d", 10))));
    }
    try (Database durable = EmbeddedDatabase.open(io.github.fdbcoord.embedded.EmbeddedOptions.durable(dir))) {
      InternerService again = InternerService.create(durable, InternerOptions.builder().rootPath(durableRoot)
          .sequenceBits(60).sequencePicker(bits -> 3L).build());
      StringInterner kept = await(again.openExisting("kept"));
      assertEquals(before, await(kept.resolve(strings("d", 10))).stream().map(OptionalLong::getAsLong).toList());
      // Sequence 3 continues where it stopped before the restart: no id is handed out twice.
      List<Long> after = await(kept.intern(strings("e", 3)));
      InternerSchema schema = ((FdbStringInterner) kept).schema();
      assertEquals(List.of(schema.packId(3, 10), schema.packId(3, 11), schema.packId(3, 12)), after);
      assertBijection(durable, kept);
    }
  }

  @Test
  void slowStoreTimesOut() {
    try (Database slow = EmbeddedDatabase.open(io.github.fdbcoord.embedded.EmbeddedOptions.builder()
        .latency(java.time.Duration.ofMillis(100)).build())) {
      List<String> slowRoot = InternerTestSupport.randomRoot();
      StringInterner i = await(InternerService.create(slow, InternerOptions.builder().rootPath(slowRoot).build()).open("t"));
      InternerService hasty = InternerService.create(slow, InternerOptions.builder().rootPath(slowRoot)
          .transactionTimeout(java.time.Duration.ofMillis(50)).build());
      StringInterner h = ((FdbInternerService) hasty).newHandleForTest(i);
      InternerException e = failure(h.intern("late"), InternerException.Kind.TIMEOUT);
      assertEquals(io.github.fdbcoord.fdb.FdbErrors.TRANSACTION_TIMED_OUT, e.fdbCode());
      assertEquals(OptionalLong.empty(), await(i.resolve("late")), "a timed-out intern wrote nothing");
      InternerTestSupport.removeRoot(slow, slowRoot);
    }
  }

  @Test
  void listingWithoutNamespaces() {
    InternerService empty = InternerService.create(db, InternerOptions.builder().rootPath(InternerTestSupport.randomRoot()).build());
    assertEquals(List.of(), await(empty.listNamespaces()));
    failure(empty.openExisting("nothing"), InternerException.Kind.NOT_FOUND);
  }

  @Test
  void randomBatchesRoundTrip() {
    Set<String> all = new HashSet<>();
    for (int round = 0; round < 20; round++) {
      List<String> batch = new ArrayList<>();
      for (int k = 0; k < 30; k++) {
        batch.add("r" + ThreadLocalRandom.current().nextInt(200));
      }
      all.addAll(batch);
      List<Long> ids = await(interner.intern(batch));
      assertEquals(batch, await(interner.lookup(ids)).stream().map(Optional::get).toList());
      assertEquals(ids, await(interner.resolve(batch)).stream().map(OptionalLong::getAsLong).toList());
    }
    assertEquals(all, assertBijection(db, interner).keySet());
  }

  static List<String> strings(String prefix, int n) {
    List<String> out = new ArrayList<>(n);
    for (int k = 0; k < n; k++) {
      out.add(prefix + k);
    }
    return Collections.unmodifiableList(out);
  }
}
