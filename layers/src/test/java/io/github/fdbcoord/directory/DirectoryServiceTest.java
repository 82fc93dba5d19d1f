package io.github.fdbcoord.directory;

import io.github.fdbcoord.api.DirectoryInfo;
import io.github.fdbcoord.api.DirectoryPage;
import com.apple.foundationdb.Database;
import com.apple.foundationdb.Range;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.directory.DirectoryLayer;
import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.ByteArrayUtil;
import com.apple.foundationdb.tuple.Tuple;
import io.github.fdbcoord.directory.DirectoryServiceException.Kind;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.fdb.FdbErrors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DirectoryServiceTest {
  private static Database db;
  private byte[] root;
  private DirectoryLayer layer;
  private DirectoryServiceOptions options;
  private DirectoryService service;

  @BeforeAll
  static void openDatabase() {
    db = EmbeddedDatabase.inMemory();
  }

  @AfterAll
  static void closeDatabase() {
    db.close();
  }

  @BeforeEach
  void isolate() {
    root = Tuple.from("test", UUID.randomUUID().toString()).pack();
    layer = new DirectoryLayer(new Subspace(ByteArrayUtil.join(root, new byte[] {(byte) 0xfe})), new Subspace(root));
    options = DirectoryServiceOptions.builder()
        .directoryLayer(layer)
        .metadata(new Subspace(ByteArrayUtil.join(root, Tuple.from("meta").pack())))
        .build();
    service = DirectoryService.create(db, options);
  }

  @AfterEach
  void cleanUp() {
    db.run(tr -> {
      tr.clear(Range.startsWith(root));
      return null;
    });
  }

  static <T> T await(CompletableFuture<T> f) throws Exception {
    return f.get(10, TimeUnit.SECONDS);
  }

  static DirectoryServiceException refusal(CompletableFuture<?> f, Kind kind) {
    ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS));
    DirectoryServiceException d = assertInstanceOf(DirectoryServiceException.class, e.getCause());
    assertEquals(kind, d.kind(), d.getMessage());
    return d;
  }

  // ---- basic operations --------------------------------------------------------------------

  @Test
  void createThenOpenReturnsTheSamePrefix() throws Exception {
    DirectoryInfo created = await(service.create(List.of("app", "users")));
    assertEquals(List.of("app", "users"), created.path());
    assertTrue(created.prefix().length > 0);
    assertTrue(ByteArrayUtil.startsWith(created.prefix(), root), "prefix lies in the layer's content subspace");
    assertEquals(created, await(service.open(List.of("app", "users"))));
    assertEquals(created, await(service.createOrOpen(List.of("app", "users"))));
    assertTrue(await(service.exists(List.of("app"))), "create makes missing parents");
    assertEquals(created.prefixHex(), await(service.open(List.of("app", "users"))).toJsonMap().get("prefix"));
  }

  @Test
  void prefixesMatchWhatTheDirectoryLayerStores() throws Exception {
    DirectoryInfo created = await(service.createOrOpen(List.of("a")));
    assertArrayEquals(await(layer.open(db, List.of("a"))).getKey(), created.prefix());
  }

  @Test
  void createOfAnExistingPathIsRefused() throws Exception {
    await(service.create(List.of("dup")));
    DirectoryServiceException e = refusal(service.create(List.of("dup")), Kind.ALREADY_EXISTS);
    assertEquals(List.of("dup"), e.path());
    assertEquals("directory already exists: /dup", e.getMessage());
  }

  @Test
  void openOfAMissingPathIsRefused() {
    DirectoryServiceException e = refusal(service.open(List.of("nope", "deeper")), Kind.NOT_FOUND);
    assertTrue(e.getMessage().startsWith("directory does not exist: /nope"), e.getMessage());
  }

  @Test
  void layerTagsAreStoredAndChecked() throws Exception {
    DirectoryInfo created = await(service.create(List.of("q"), "queue"));
    assertEquals("queue", created.layer());
    assertEquals(created, await(service.open(List.of("q"), "queue")));
    assertEquals(created, await(service.open(List.of("q"))));
    // Refused both when the answer comes from the cache and when it comes from the node tree.
    DirectoryServiceException cached = refusal(service.open(List.of("q"), "stack"), Kind.LAYER_MISMATCH);
    assertEquals("directory /q has layer 'queue', not 'stack'", cached.getMessage());
    DirectoryService uncached = DirectoryService.create(db, options);
    DirectoryServiceException fresh = refusal(uncached.open(List.of("q"), "stack"), Kind.LAYER_MISMATCH);
    assertEquals(cached.getMessage(), fresh.getMessage());
    refusal(service.createOrOpen(List.of("q"), "stack"), Kind.LAYER_MISMATCH);
  }

  @Test
  void badPathsAreRefusedBeforeTouchingTheStore() {
    refusal(service.open(List.of()), Kind.BAD_REQUEST);
    refusal(service.create(List.of()), Kind.BAD_REQUEST);
    refusal(service.remove(List.of()), Kind.BAD_REQUEST);
    refusal(service.move(List.of(), List.of("x")), Kind.BAD_REQUEST);
    @SuppressWarnings("unchecked")
    List<String> polluted = (List<String>) (List<?>) Arrays.asList("a", 7);
    DirectoryServiceException e = refusal(service.createOrOpen(polluted), Kind.BAD_REQUEST);
    assertEquals("path element 1 is not a string: 7 (Integer)", e.getMessage());
    refusal(service.list(List.of(), null, 0), Kind.BAD_REQUEST);
    refusal(service.list(List.of(), null, DirectoryServiceOptions.DEFAULT_MAX_PAGE_SIZE + 1), Kind.BAD_REQUEST);
  }

  // ---- list ----------------------------------------------------------------------------------

  @Test
  void listPagesThroughChildrenInOrder() throws Exception {
    List<String> expected = new ArrayList<>();
    for (int i = 0; i < 25; i++) {
      String name = String.format("child-%02d", i);
      expected.add(name);
      await(service.create(List.of("parent", name)));
    }
    List<String> seen = new ArrayList<>();
    String after = null;
    int pages = 0;
    do {
      DirectoryPage page = await(service.list(List.of("parent"), after, 10));
      seen.addAll(page.names());
      after = page.nextStartAfter();
      pages++;
    } while (after != null);
    assertEquals(expected, seen);
    assertEquals(3, pages);
    assertEquals(List.of("parent"), await(service.list(List.of(), null, 100)).names(), "empty path lists the root");
    assertEquals(List.of(), await(service.list(List.of("parent", "child-00"), null, 5)).names());
    refusal(service.list(List.of("missing"), null, 5), Kind.NOT_FOUND);
  }

  // ---- move, remove ------------------------------------------------------------------------

  @Test
  void moveKeepsThePrefixUnderTheNewPath() throws Exception {
    DirectoryInfo before = await(service.create(List.of("src", "d")));
    await(service.create(List.of("dst")));
    DirectoryInfo moved = await(service.move(List.of("src", "d"), List.of("dst", "d2")));
    assertEquals(List.of("dst", "d2"), moved.path());
    assertArrayEquals(before.prefix(), moved.prefix());
    refusal(service.open(List.of("src", "d")), Kind.NOT_FOUND);
    assertArrayEquals(before.prefix(), await(service.open(List.of("dst", "d2"))).prefix());
  }

  @Test
  void badMovesAreRefused() throws Exception {
    await(service.create(List.of("a", "b")));
    await(service.create(List.of("c")));
    refusal(service.move(List.of("missing"), List.of("x")), Kind.NOT_FOUND);
    DirectoryServiceException noParent = refusal(service.move(List.of("c"), List.of("nowhere", "c")), Kind.NOT_FOUND);
    assertEquals(List.of("nowhere"), noParent.path());
    refusal(service.move(List.of("c"), List.of("a")), Kind.ALREADY_EXISTS);
    refusal(service.move(List.of("a"), List.of("a", "b", "inside")), Kind.BAD_REQUEST);
    assertTrue(await(service.exists(List.of("c"))), "refused moves change nothing");
  }

  @Test
  void partitionsHoldDirectoriesUnderTheirPrefixAndRefuseCrossMoves() throws Exception {
    DirectoryInfo partition = await(service.createPartition(List.of("tenant")));
    assertTrue(partition.isPartition());
    assertEquals("partition", partition.layer());
    DirectoryInfo inside = await(service.create(List.of("tenant", "orders")));
    assertFalse(inside.isPartition());
    assertTrue(ByteArrayUtil.startsWith(inside.prefix(), partition.prefix()),
        inside.prefixHex() + " should start with the partition prefix " + partition.prefixHex());
    assertEquals(partition, await(service.open(List.of("tenant"))));
    assertEquals(inside, await(DirectoryService.create(db, options).open(List.of("tenant", "orders"))));
    await(service.create(List.of("outside")));
    DirectoryServiceException e = refusal(service.move(List.of("outside"), List.of("tenant", "outside")), Kind.BAD_REQUEST);
    assertTrue(e.getMessage().startsWith("cannot move /outside to /tenant/outside"), e.getMessage());
    refusal(service.move(List.of("tenant", "orders"), List.of("orders")), Kind.BAD_REQUEST);
  }

  // Fails on the embedded engine as of 686b3d6: DirectoryLayer.removeRecursive creates a range
  // iterator over the children, then clears the node, then iterates; the engine's iterator only
  // reads when first polled, so it sees the clear and the children's data is left behind
  // (fdb-java's iterator issues its first read when created). Reported to the lead, not worked around.
  @Test
  void removeDeletesTheSubtreeAndItsData() throws Exception {
    DirectoryInfo child = await(service.create(List.of("r", "child")));
    db.run(tr -> {
      tr.set(new Subspace(child.keyPrefix()).pack(Tuple.from("k")), new byte[] {1});
      return null;
    });
    await(service.remove(List.of("r")));
    assertFalse(await(service.exists(List.of("r"))));
    assertFalse(await(service.exists(List.of("r", "child"))));
    assertEquals(0, await(db.readAsync(tr -> tr.getRange(new Subspace(child.keyPrefix()).range()).asList())).size());
    refusal(service.remove(List.of("r")), Kind.NOT_FOUND);
    assertFalse(await(service.removeIfExists(List.of("r"))));
    await(service.create(List.of("r")));
    assertTrue(await(service.removeIfExists(List.of("r"))));
  }

  // ---- cache -------------------------------------------------------------------------------

  @Test
  void aHotOpenIsServedFromTheCache() throws Exception {
    await(service.create(List.of("hot")));
    await(service.open(List.of("hot")));
    DirectoryService.CacheStats before = service.cacheStats();
    for (int i = 0; i < 10; i++) {
      await(service.open(List.of("hot")));
    }
    DirectoryService.CacheStats after = service.cacheStats();
    assertEquals(before.hits() + 10, after.hits());
    assertEquals(before.misses(), after.misses());
  }

  @Test
  void anotherProcessRemovingADirectoryIsSeenAtOnce() throws Exception {
    DirectoryService processB = DirectoryService.create(db, options);
    await(service.create(List.of("shared")));
    await(service.open(List.of("shared")));
    await(service.open(List.of("shared")));
    await(processB.remove(List.of("shared")));
    refusal(service.open(List.of("shared")), Kind.NOT_FOUND);
    assertFalse(await(service.exists(List.of("shared"))));
  }

  @Test
  void anotherProcessMovingADirectoryNeverLeavesAStalePrefix() throws Exception {
    DirectoryService processB = DirectoryService.create(db, options);
    DirectoryInfo original = await(service.create(List.of("x")));
    await(service.open(List.of("x")));
    await(processB.move(List.of("x"), List.of("y")));
    DirectoryInfo recreated = await(processB.create(List.of("x")));
    DirectoryInfo seen = await(service.open(List.of("x")));
    assertArrayEquals(recreated.prefix(), seen.prefix());
    assertFalse(Arrays.equals(original.prefix(), seen.prefix()), "stale prefix returned after a move");
    assertArrayEquals(original.prefix(), await(service.open(List.of("y"))).prefix());
  }

  @Test
  void cachedAnswersStayCorrectAcrossManyMovesByAnotherProcess() throws Exception {
    DirectoryService processB = DirectoryService.create(db, options);
    DirectoryInfo d = await(processB.create(List.of("left")));
    List<String> here = List.of("left");
    List<String> there = List.of("right");
    for (int i = 0; i < 30; i++) {
      assertArrayEquals(d.prefix(), await(service.open(here)).prefix());
      assertArrayEquals(d.prefix(), await(service.open(here)).prefix());
      refusal(service.open(there), Kind.NOT_FOUND);
      await(processB.move(here, there));
      List<String> swap = here;
      here = there;
      there = swap;
    }
  }

  @Test
  void aTransactionThatUsedACachedPrefixConflictsWithAConcurrentRemove() throws Exception {
    DirectoryService processB = DirectoryService.create(db, options);
    DirectoryInfo d = await(service.create(List.of("guarded")));
    await(service.open(List.of("guarded")));
    long hits = service.cacheStats().hits();
    try (Transaction tr = db.createTransaction()) {
      DirectoryInfo opened = await(service.open(tr, List.of("guarded"), null));
      assertEquals(hits + 1, service.cacheStats().hits(), "served from the cache");
      tr.set(new Subspace(opened.keyPrefix()).pack(Tuple.from("row")), new byte[] {1});
      await(processB.remove(List.of("guarded")));
      ExecutionException e = assertThrows(ExecutionException.class, () -> tr.commit().get(10, TimeUnit.SECONDS));
      assertEquals(FdbErrors.NOT_COMMITTED, FdbErrors.codeOf(e));
    }
    assertEquals(0, await(db.readAsync(t -> t.getRange(new Subspace(d.keyPrefix()).range()).asList())).size(),
        "no row was written into the removed directory");
  }

  @Test
  void changesInsideACallersTransactionAreVisibleToItButNeverCached() throws Exception {
    try (Transaction tr = db.createTransaction()) {
      DirectoryInfo created = await(service.create(tr, List.of("tx"), null));
      assertEquals(created, await(service.open(tr, List.of("tx"), null)));
      assertTrue(await(service.exists(tr, List.of("tx"))));
      // never committed
    }
    refusal(service.open(List.of("tx")), Kind.NOT_FOUND);
    try (Transaction tr = db.createTransaction()) {
      DirectoryInfo created = await(service.createOrOpen(tr, List.of("tx2"), "t"));
      assertEquals(created, await(service.open(tr, List.of("tx2"), "t")));
      await(tr.commit());
      assertEquals(created, await(service.open(List.of("tx2"), "t")));
    }
  }

  @Test
  void writesAroundTheServiceAreNotSeenUntilTheCacheIsInvalidated() throws Exception {
    // The documented limitation: a DirectoryLayer change that bypasses the service bumps nothing.
    DirectoryInfo d = await(service.create(List.of("bypassed")));
    await(service.open(List.of("bypassed")));
    await(layer.remove(db, List.of("bypassed")));
    assertEquals(d, await(service.open(List.of("bypassed"))));
    service.invalidateCache();
    refusal(service.open(List.of("bypassed")), Kind.NOT_FOUND);
  }

  @Test
  void concurrentCreateOrOpenOfOnePathAgreesOnOnePrefix() throws Exception {
    List<CompletableFuture<DirectoryInfo>> all = new ArrayList<>();
    for (int i = 0; i < 32; i++) {
      DirectoryService s = i % 2 == 0 ? service : DirectoryService.create(db, options);
      all.add(s.createOrOpen(List.of("race", "dir")));
    }
    DirectoryInfo first = await(all.get(0));
    for (CompletableFuture<DirectoryInfo> f : all) {
      assertEquals(first, await(f));
    }
    assertEquals(List.of("dir"), await(service.list(List.of("race"), null, 10)).names());
  }

  @Test
  void cacheCanBeTurnedOff() throws Exception {
    DirectoryService noCache = DirectoryService.create(db, DirectoryServiceOptions.builder()
        .directoryLayer(layer).metadata(options.metadata()).cacheSize(0).build());
    DirectoryInfo d = await(noCache.create(List.of("nc")));
    assertEquals(d, await(noCache.open(List.of("nc"))));
    assertEquals(d, await(noCache.open(List.of("nc"))));
    assertEquals(0, noCache.cacheStats().hits());
  }

  @Test
  void pathsAreRelativeToTheConfiguredRootPath() throws Exception {
    DirectoryService rooted = DirectoryService.create(db, DirectoryServiceOptions.builder()
        .directoryLayer(layer).metadata(options.metadata()).rootPath(List.of("svc", "dirs")).build());
    assertEquals(List.of(), await(rooted.list(List.of(), null, 10)).names(), "no root yet: nothing listed");
    DirectoryInfo a = await(rooted.create(List.of("a")));
    assertEquals(List.of("a"), a.path());
    assertArrayEquals(await(layer.open(db, List.of("svc", "dirs", "a"))).getKey(), a.prefix());
    assertEquals(a, await(rooted.open(List.of("a"))));
    assertEquals(List.of("a"), await(rooted.list(List.of(), null, 10)).names());
    DirectoryServiceException missing = refusal(rooted.open(List.of("nope")), Kind.NOT_FOUND);
    assertEquals(List.of("nope"), missing.path());
    assertEquals("directory does not exist: /nope", missing.getMessage());
    refusal(rooted.create(List.of("a")), Kind.ALREADY_EXISTS);
    DirectoryServiceException noParent = refusal(rooted.move(List.of("a"), List.of("x", "y")), Kind.NOT_FOUND);
    assertEquals(List.of("x"), noParent.path());
    assertEquals(List.of("b"), await(rooted.move(List.of("a"), List.of("b"))).path());
    assertTrue(await(service.exists(List.of("svc", "dirs", "b"))), "the unrooted service sees the full path");
    assertThrows(DirectoryServiceException.class, () -> DirectoryServiceOptions.builder().rootPath(Arrays.asList("ok", null)));
  }

  @Test
  void optionsAreImmutableAndARefusalNamesTheFieldAndTheBound() {
    DirectoryServiceOptions.Builder builder = DirectoryServiceOptions.builder().cacheSize(5);
    DirectoryServiceOptions built = builder.build();
    builder.cacheSize(7);
    assertEquals(5, built.cacheSize(), "a built options object does not follow its builder");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> builder.maxPageSize(0));
    assertEquals("maxPageSize must be at least 1, got 0", e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> builder.cacheSize(-1));
    assertEquals("cacheSize must be at least 0, got -1", e.getMessage());
  }
}
