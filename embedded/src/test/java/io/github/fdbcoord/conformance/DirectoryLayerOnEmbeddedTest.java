package io.github.fdbcoord.conformance;

import com.apple.foundationdb.directory.DirectoryAlreadyExistsException;
import com.apple.foundationdb.directory.DirectoryLayer;
import com.apple.foundationdb.directory.DirectoryMoveException;
import com.apple.foundationdb.directory.DirectorySubspace;
import com.apple.foundationdb.directory.MismatchedLayerException;
import com.apple.foundationdb.directory.NoSuchDirectoryException;
import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.ByteArrayUtil;
import com.apple.foundationdb.tuple.Tuple;
import org.junit.jupiter.api.TestTemplate;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

import static io.github.fdbcoord.conformance.FdbAssertions.await;
import static io.github.fdbcoord.conformance.Fixture.bytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * fdb-java's own DirectoryLayer running unchanged on the engine, with its node and content
 * subspaces under the test's random prefix.
 */
@ExtendWith(EngineExtension.class)
class DirectoryLayerOnEmbeddedTest {

  private static DirectoryLayer directories(Fixture f) {
    return new DirectoryLayer(new Subspace(f.key("nodes/")), new Subspace(f.key("content/")));
  }

  private static DirectoryLayer directoriesWithManualPrefixes(Fixture f) {
    return new DirectoryLayer(new Subspace(f.key("nodes/")), new Subspace(f.key("content/")), true);
  }

  @TestTemplate
  void createThenOpenGivesTheSamePrefix(Fixture f) {
    DirectoryLayer dl = directories(f);
    DirectorySubspace created = await(dl.create(f.db(), List.of("app", "users")));
    DirectorySubspace opened = await(dl.open(f.db(), List.of("app", "users")));
    assertArrayEquals(created.getKey(), opened.getKey());
    assertEquals(List.of("app", "users"), opened.getPath());
    assertTrue(ByteArrayUtil.startsWith(created.getKey(), f.key("content/")), "prefixes come from the content subspace");
  }

  @TestTemplate
  void createOrOpenCreatesOnceAndOpensAfterwards(Fixture f) {
    DirectoryLayer dl = directories(f);
    DirectorySubspace first = await(dl.createOrOpen(f.db(), List.of("a")));
    DirectorySubspace second = await(dl.createOrOpen(f.db(), List.of("a")));
    assertArrayEquals(first.getKey(), second.getKey());
  }

  @TestTemplate
  void directoryPrefixHoldsData(Fixture f) {
    DirectoryLayer dl = directories(f);
    DirectorySubspace dir = await(dl.createOrOpen(f.db(), List.of("data")));
    f.db().run(tr -> {
      tr.set(dir.pack(Tuple.from("k")), bytes("v"));
      return null;
    });
    DirectorySubspace reopened = await(dl.open(f.db(), List.of("data")));
    assertArrayEquals(bytes("v"), f.read(reopened.pack(Tuple.from("k"))));
  }

  @TestTemplate
  void errorsForMissingAndExistingDirectories(Fixture f) {
    DirectoryLayer dl = directories(f);
    assertThrows(NoSuchDirectoryException.class, () -> await(dl.open(f.db(), List.of("missing"))));
    await(dl.create(f.db(), List.of("x")));
    assertThrows(DirectoryAlreadyExistsException.class, () -> await(dl.create(f.db(), List.of("x"))));
    assertThrows(NoSuchDirectoryException.class, () -> await(dl.remove(f.db(), List.of("missing"))));
    assertThrows(NoSuchDirectoryException.class, () -> await(dl.move(f.db(), List.of("missing"), List.of("y"))));
  }

  @TestTemplate
  void layerMismatchIsReported(Fixture f) {
    DirectoryLayer dl = directories(f);
    await(dl.create(f.db(), List.of("typed"), bytes("layer-a")));
    assertThrows(MismatchedLayerException.class, () -> await(dl.open(f.db(), List.of("typed"), bytes("layer-b"))));
    assertArrayEquals(bytes("layer-a"), await(dl.open(f.db(), List.of("typed"), bytes("layer-a"))).getLayer());
  }

  @TestTemplate
  void listShowsDirectChildrenInOrder(Fixture f) {
    DirectoryLayer dl = directories(f);
    for (String name : List.of("c", "a", "b")) {
      await(dl.create(f.db(), List.of("root", name)));
    }
    await(dl.create(f.db(), List.of("root", "a", "deep")));
    assertEquals(List.of("a", "b", "c"), await(dl.list(f.db(), List.of("root"))));
    assertEquals(List.of("root"), await(dl.list(f.db())));
    assertThrows(NoSuchDirectoryException.class, () -> await(dl.list(f.db(), List.of("nope"))));
  }

  @TestTemplate
  void existsReflectsCreateAndRemove(Fixture f) {
    DirectoryLayer dl = directories(f);
    assertFalse(await(dl.exists(f.db(), List.of("e"))));
    await(dl.create(f.db(), List.of("e", "child")));
    assertTrue(await(dl.exists(f.db(), List.of("e"))));
    assertTrue(await(dl.exists(f.db(), List.of("e", "child"))));
    await(dl.remove(f.db(), List.of("e")));
    assertFalse(await(dl.exists(f.db(), List.of("e"))));
    assertFalse(await(dl.exists(f.db(), List.of("e", "child"))));
    assertFalse(await(dl.removeIfExists(f.db(), List.of("e"))));
  }

  /**
   * fdb-java's removeRecursive creates the iterator over a node's subdirectories and then clears
   * the node; the subdirectories' contents are only removed if that iterator's first read was
   * issued (and so fixed) when it was created, as fdb-java's RangeQuery does.
   */
  @TestTemplate
  void removeDeletesTheContents(Fixture f) {
    DirectoryLayer dl = directories(f);
    DirectorySubspace dir = await(dl.create(f.db(), List.of("gone")));
    DirectorySubspace child = await(dl.create(f.db(), List.of("gone", "child")));
    f.db().run(tr -> {
      tr.set(dir.pack(Tuple.from(1)), bytes("v"));
      tr.set(child.pack(Tuple.from(2)), bytes("v"));
      return null;
    });
    await(dl.remove(f.db(), List.of("gone")));
    assertTrue(f.db().read(tr -> tr.getRange(dir.range()).asList().join()).isEmpty());
    assertTrue(f.db().read(tr -> tr.getRange(child.range()).asList().join()).isEmpty());
  }

  @TestTemplate
  void moveKeepsThePrefixAndChildren(Fixture f) {
    DirectoryLayer dl = directories(f);
    DirectorySubspace dir = await(dl.create(f.db(), List.of("old")));
    await(dl.create(f.db(), List.of("old", "child")));
    await(dl.create(f.db(), List.of("dest")));
    DirectorySubspace moved = await(dl.move(f.db(), List.of("old"), List.of("dest", "new")));
    assertArrayEquals(dir.getKey(), moved.getKey());
    assertEquals(List.of("dest", "new"), moved.getPath());
    assertFalse(await(dl.exists(f.db(), List.of("old"))));
    assertTrue(await(dl.exists(f.db(), List.of("dest", "new", "child"))));
    await(dl.create(f.db(), List.of("other")));
    assertThrows(DirectoryAlreadyExistsException.class,
        () -> await(dl.move(f.db(), List.of("other"), List.of("dest", "new"))));
    assertThrows(NoSuchDirectoryException.class,
        () -> await(dl.move(f.db(), List.of("other"), List.of("absent-parent", "x"))));
  }

  @TestTemplate
  void movingIntoItsOwnSubtreeFails(Fixture f) {
    DirectoryLayer dl = directories(f);
    await(dl.create(f.db(), List.of("p")));
    assertThrows(DirectoryMoveException.class, () -> await(dl.move(f.db(), List.of("p"), List.of("p", "q"))));
  }

  @TestTemplate
  void partitionsNestTheirDirectoriesUnderTheirPrefix(Fixture f) {
    DirectoryLayer dl = directories(f);
    DirectorySubspace partition = await(dl.create(f.db(), List.of("part"), DirectoryLayer.PARTITION_LAYER));
    assertArrayEquals(DirectoryLayer.PARTITION_LAYER, partition.getLayer());
    DirectorySubspace inside = await(dl.createOrOpen(f.db(), List.of("part", "inner")));
    DirectorySubspace inside2 = await(dl.createOrOpen(f.db(), List.of("part", "inner2")));
    DirectorySubspace outside = await(dl.createOrOpen(f.db(), List.of("outer")));
    // A partition's directories get prefixes inside the partition's own prefix, which is longer
    // than the content subspace's prefix; directories outside it do not share that prefix.
    byte[] a = inside.getKey();
    byte[] b = inside2.getKey();
    int common = 0;
    while (common < Math.min(a.length, b.length) && a[common] == b[common]) {
      common++;
    }
    byte[] partitionPrefix = Arrays.copyOf(a, common);
    assertTrue(common > f.key("content/").length, "directories in a partition share the partition's prefix");
    assertTrue(ByteArrayUtil.startsWith(partitionPrefix, f.key("content/")));
    assertFalse(ByteArrayUtil.startsWith(outside.getKey(), partitionPrefix));
    assertEquals(List.of("inner", "inner2"), await(dl.list(f.db(), List.of("part"))));
    assertThrows(UnsupportedOperationException.class, partition::getKey);
    assertThrows(DirectoryMoveException.class, () -> await(dl.move(f.db(), List.of("part", "inner"), List.of("moved"))));
  }

  @TestTemplate
  void manualPrefixesAreRefusedUnlessAllowed(Fixture f) {
    DirectoryLayer dl = directories(f);
    assertThrows(IllegalArgumentException.class,
        () -> await(dl.create(f.db(), List.of("manual"), new byte[0], f.key("content/manual"))));
    DirectoryLayer manual = directoriesWithManualPrefixes(f);
    DirectorySubspace dir = await(manual.create(f.db(), List.of("manual"), new byte[0], f.key("manual-prefix/")));
    assertArrayEquals(f.key("manual-prefix/"), dir.getKey());
  }

  @TestTemplate
  void concurrentCreatesOfDistinctPathsGetDisjointPrefixes(Fixture f) {
    DirectoryLayer dl = directories(f);
    int n = 48;
    List<CompletableFuture<DirectorySubspace>> futures = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      futures.add(dl.createOrOpen(f.db(), List.of("many", "dir" + i)));
    }
    List<byte[]> prefixes = new ArrayList<>();
    for (CompletableFuture<DirectorySubspace> future : futures) {
      prefixes.add(await(future).getKey());
    }
    Set<String> distinct = new HashSet<>();
    for (byte[] p : prefixes) {
      distinct.add(Arrays.toString(p));
    }
    assertEquals(n, distinct.size(), "every directory has its own prefix");
    for (int i = 0; i < n; i++) {
      for (int j = 0; j < n; j++) {
        if (i != j) {
          assertFalse(ByteArrayUtil.startsWith(prefixes.get(i), prefixes.get(j)),
              "prefix of dir" + j + " is a prefix of dir" + i + "'s");
        }
      }
    }
    assertEquals(n, await(dl.list(f.db(), List.of("many"))).size());
  }

  @TestTemplate
  void concurrentCreateOrOpenOfOnePathAgreesOnOnePrefix(Fixture f) {
    DirectoryLayer dl = directories(f);
    List<CompletableFuture<DirectorySubspace>> futures = new ArrayList<>();
    for (int i = 0; i < 16; i++) {
      futures.add(dl.createOrOpen(f.db(), List.of("shared")));
    }
    byte[] first = await(futures.get(0)).getKey();
    for (CompletableFuture<DirectorySubspace> future : futures) {
      assertArrayEquals(first, await(future).getKey());
    }
  }

  @TestTemplate
  void directorySubspaceMethodsWorkRelativeToIt(Fixture f) {
    DirectoryLayer dl = directories(f);
    DirectorySubspace app = await(dl.createOrOpen(f.db(), List.of("app")));
    DirectorySubspace child = await(app.createOrOpen(f.db(), List.of("child")));
    assertEquals(List.of("app", "child"), child.getPath());
    assertEquals(List.of("child"), await(app.list(f.db())));
    assertTrue(await(app.exists(f.db(), List.of("child"))));
    assertArrayEquals(child.getKey(), await(app.open(f.db(), List.of("child"))).getKey());
    DirectorySubspace moved = await(child.moveTo(f.db(), List.of("top")));
    assertEquals(List.of("top"), moved.getPath());
    assertArrayEquals(child.getKey(), moved.getKey());
    assertTrue(await(dl.exists(f.db(), List.of("top"))));
    assertFalse(await(app.exists(f.db(), List.of("child"))));
    await(moved.remove(f.db()));
    assertFalse(await(dl.exists(f.db(), List.of("top"))));
    assertTrue(await(app.removeIfExists(f.db())));
    assertFalse(await(dl.exists(f.db(), List.of("app"))));
  }

  @TestTemplate
  void directoryOperationsComposeInOneTransaction(Fixture f) {
    DirectoryLayer dl = directories(f);
    f.db().run(tr -> {
      DirectorySubspace a = dl.create(tr, List.of("tx", "a")).join();
      DirectorySubspace b = dl.create(tr, List.of("tx", "b")).join();
      tr.set(a.pack(Tuple.from(1)), bytes("a"));
      tr.set(b.pack(Tuple.from(1)), bytes("b"));
      assertEquals(List.of("a", "b"), dl.list(tr, List.of("tx")).join());
      return null;
    });
    assertEquals(List.of("a", "b"), await(dl.list(f.db(), List.of("tx"))));
  }
}
