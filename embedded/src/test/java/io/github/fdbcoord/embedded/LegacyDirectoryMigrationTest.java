package io.github.fdbcoord.embedded;

import io.github.fdbcoord.embedded.log.FileLayer;
import io.github.fdbcoord.embedded.log.ForwardingFileLayer;
import io.github.fdbcoord.embedded.log.LogFormat;
import io.github.fdbcoord.embedded.storage.RocksStorage;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.MutationType;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Opens data directories written by earlier releases (src/test/resources/data-directories, see the
 * README there: which commit wrote each one, and the generator) with the current engine, and checks
 * the data set the generator wrote, exactly; then writes more, closes, reopens and checks again.
 *
 * <ul>
 *   <li>{@code snapshot-format-closed}, {@code snapshot-format-halted}: commit 590383d (the whole state on
 *       the heap, {@code log-*.seg} plus {@code snapshot-*.snap}), closed cleanly or halted without close;
 *       both hold a snapshot and log records after it. Opening them migrates them to the storage format.
 *   <li>{@code storage-format-closed}, {@code storage-format-halted}: commit 8008f0f (RocksDB in
 *       {@code storage/} beneath the window, plus the log), closed cleanly (nothing to replay) or
 *       halted with log records past the storage's durable version.
 *   <li>{@code storage-format-interrupted-migration}: {@code snapshot-format-closed} opened by 8008f0f, which
 *       halted after the storage held (and had flushed) everything, before it deleted the old segment and
 *       the snapshot: a storage-format directory that still holds a snapshot file and the segment it covers.
 * </ul>
 *
 * A crash while a snapshot-format directory is migrated must not lose data either: a child JVM opens a
 * copy and halts after open returned, after a few milliseconds from another thread, or just before
 * each write-side file operation of the open; then this JVM opens the copy and checks everything.
 */
@Tag("slow")
class LegacyDirectoryMigrationTest {
  private static final String FIXTURES = "/data-directories/";
  private static final byte[] COUNTER = bytes("fixture/counter");
  /** The exit status of a child that halted where it was told to (not an exception in main, which exits with 1). */
  private static final int HALTED = 77;

  private Path tmp;
  /** RocksDB's native library, extracted once for every child (see {@link ChildJvm#shortLivedOptions}). */
  private static Path nativeLibrary;

  @BeforeAll
  static void extractNativeLibrary() throws IOException {
    nativeLibrary = ChildJvm.extractRocksDbLibrary(Files.createTempDirectory("legacy-migration-native-"));
  }

  @AfterAll
  static void removeNativeLibrary() throws IOException {
    removeTree(nativeLibrary);
  }

  @BeforeEach
  void createDir() throws IOException {
    tmp = Files.createTempDirectory("legacy-migration-test-");
  }

  @AfterEach
  void removeDir() throws IOException {
    removeTree(tmp);
  }

  private static void removeTree(Path root) throws IOException {
    if (root == null) {
      return;
    }
    try (Stream<Path> s = Files.walk(root)) {
      for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // The data set (the same as the README's FixtureGenerator writes)

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static String key(int i) {
    return String.format("fixture/k%05d", i);
  }

  private static String value(int i, int gen) {
    return "gen" + gen + "/" + String.format("%05d", i) + "/" + "x".repeat(i % 17);
  }

  private static byte[] le(long v) {
    return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array();
  }

  private static long counterValue(byte[] v) {
    assertNotNull(v, "fixture/counter is missing");
    assertEquals(8, v.length, "fixture/counter's length");
    return ByteBuffer.wrap(v).order(ByteOrder.LITTLE_ENDIAN).getLong();
  }

  /** The state every fixture holds (all of the generator's commits). Keys are ASCII: String order is byte order. */
  private static TreeMap<String, byte[]> fixtureState() {
    TreeMap<String, byte[]> m = new TreeMap<>();
    for (int i = 0; i < 2000; i++) {
      m.put(key(i), bytes(value(i, 1)));
    }
    for (int i = 0; i < 2000; i++) {
      if (i % 7 == 3) {
        m.put(key(i), bytes(value(i, 2)));
      }
    }
    m.subMap(key(500), key(600)).clear();
    m.remove(key(1234));
    long counter = 0;
    for (int i = 1; i <= 40; i++) {
      counter += i;
    }
    for (int i = 1990; i < 2000; i++) {
      m.put(key(i), bytes(value(i, 3)));
    }
    m.subMap(key(1500), key(1510)).clear();
    counter += 1000 + 5;
    m.put("fixture/counter", le(counter));
    m.put("fixture/tail", bytes("done"));
    return m;
  }

  /** The fixture's counter: 1 + ... + 40 + 1000 + 5. */
  private static final long FIXTURE_COUNTER = 1825;

  /** What the test writes after the first open, applied to the model too. */
  private static void writeMore(EmbeddedDatabase db, TreeMap<String, byte[]> model) {
    db.run(tr -> {
      for (int i = 0; i < 100; i++) {
        tr.set(bytes(key(i)), bytes("after/" + i));
      }
      tr.set(bytes(key(550)), bytes("after/550")); // inside the range the fixture cleared
      tr.clear(bytes(key(1000)), bytes(key(1050)));
      tr.mutate(MutationType.ADD, COUNTER, le(7));
      tr.set(bytes("fixture/after"), bytes("yes"));
      return null;
    });
    for (int i = 0; i < 100; i++) {
      model.put(key(i), bytes("after/" + i));
    }
    model.put(key(550), bytes("after/550"));
    model.subMap(key(1000), key(1050)).clear();
    model.put("fixture/counter", le(FIXTURE_COUNTER + 7));
    model.put("fixture/after", bytes("yes"));
  }

  // ---------------------------------------------------------------------------------------------
  // Checks

  /** Every key's exact value, by one range read and by point reads, and nothing else under fixture/. */
  private static void checkState(EmbeddedDatabase db, NavigableMap<String, byte[]> expected, String when) {
    List<KeyValue> kvs = db.read(tr -> tr.getRange(bytes("fixture/"), bytes("fixture0")).asList().join());
    TreeMap<String, byte[]> actual = new TreeMap<>();
    for (KeyValue kv : kvs) {
      actual.put(new String(kv.getKey(), StandardCharsets.UTF_8), kv.getValue());
    }
    for (Map.Entry<String, byte[]> e : expected.entrySet()) {
      assertTrue(actual.containsKey(e.getKey()), () -> when + ": the range read misses " + e.getKey());
      assertArrayEquals(e.getValue(), actual.get(e.getKey()), () -> when + ": the range read's value of " + e.getKey());
    }
    for (String k : actual.keySet()) {
      assertTrue(expected.containsKey(k), () -> when + ": the range read finds " + k + ", which should not exist");
    }
    assertEquals(expected.size(), kvs.size(), when + ": keys under fixture/ (range read)");
    // Point reads of every key the data set ever wrote, present or not.
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < 2000; i++) {
      keys.add(key(i));
    }
    keys.addAll(List.of("fixture/counter", "fixture/tail", "fixture/after"));
    List<byte[]> values = db.read(tr -> {
      List<java.util.concurrent.CompletableFuture<byte[]>> fs = new ArrayList<>();
      for (String k : keys) {
        fs.add(tr.get(bytes(k)));
      }
      return fs.stream().map(java.util.concurrent.CompletableFuture::join).toList();
    });
    for (int i = 0; i < keys.size(); i++) {
      String k = keys.get(i);
      byte[] want = expected.get(k);
      if (want == null) {
        assertNull(values.get(i), when + ": the point read finds " + k + ", which should not exist");
      } else {
        assertArrayEquals(want, values.get(i), when + ": the point read's value of " + k);
      }
    }
  }

  private static List<KeyValue> range(EmbeddedDatabase db, int from, int to) {
    return db.read(tr -> tr.getRange(bytes(key(from)), bytes(key(to))).asList().join());
  }

  /** What the fixtures hold, with its cleared ranges and counter checked on their own too. */
  private static void checkFixture(EmbeddedDatabase db, String when) {
    checkState(db, fixtureState(), when);
    assertEquals(List.of(), range(db, 500, 600), when + ": the cleared range [k00500, k00600)");
    assertEquals(List.of(), range(db, 1500, 1510), when + ": the cleared range [k01500, k01510)");
    assertNull(db.read(tr -> tr.get(bytes(key(1234))).join()), when + ": the cleared key k01234");
    assertEquals(FIXTURE_COUNTER, counterValue(db.read(tr -> tr.get(COUNTER).join())), when + ": the counter");
    assertArrayEquals(bytes(value(1999, 3)), db.read(tr -> tr.get(bytes(key(1999))).join()), when + ": the tail");
  }

  private static void checkAfterWrites(EmbeddedDatabase db, NavigableMap<String, byte[]> model, String when) {
    checkState(db, model, when);
    assertEquals(List.of(), range(db, 1000, 1050), when + ": the range cleared after the migration");
    assertEquals(1, range(db, 500, 600).size(), when + ": the old cleared range holds only k00550 now");
    assertEquals(FIXTURE_COUNTER + 7, counterValue(db.read(tr -> tr.get(COUNTER).join())), when + ": the counter");
  }

  private static List<String> names(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  private static List<String> snapshots(Path dir) throws IOException {
    return names(dir).stream().filter(n -> n.startsWith("snapshot-")).toList();
  }

  /** A directory in the storage format: no snapshot (or snapshot temp) file, RocksDB files in storage/. */
  private static void assertMigrated(Path dir, String when) throws IOException {
    assertEquals(List.of(), snapshots(dir), when + ": snapshot files left in " + names(dir));
    Path storage = dir.resolve(RocksStorage.DIRECTORY);
    assertTrue(Files.isDirectory(storage), when + ": no storage directory in " + names(dir));
    assertTrue(names(storage).contains("CURRENT"), when + ": storage/ holds no RocksDB database: " + names(storage));
    assertTrue(names(storage).stream().anyMatch(n -> n.endsWith(".sst")),
        when + ": storage/ holds no table file: " + names(storage));
  }

  /**
   * The whole check of one directory: open, check, write, close, check the files, reopen, check. With
   * {@code strict}, the snapshot files must be gone once the first open returned; else they must be gone
   * after close, and those left after the first open are returned.
   */
  private static List<String> openCheckWriteReopen(Path dir, String name, boolean strict) throws IOException {
    TreeMap<String, byte[]> model = fixtureState();
    List<String> leftAfterOpen;
    try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.durable(dir))) {
      checkFixture(db, name + ", first open");
      leftAfterOpen = snapshots(dir);
      if (strict) {
        assertMigrated(dir, name + ", after the first open returned");
      }
      writeMore(db, model);
      checkAfterWrites(db, model, name + ", after writing more");
    }
    assertMigrated(dir, name + ", after close");
    try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.durable(dir))) {
      checkAfterWrites(db, model, name + ", reopened");
    }
    assertMigrated(dir, name + ", after the second close");
    return leftAfterOpen;
  }

  // ---------------------------------------------------------------------------------------------
  // Fixtures

  private static Path fixture(String name) {
    URL url = LegacyDirectoryMigrationTest.class.getResource(FIXTURES + name);
    assertNotNull(url, "fixture " + name + " is not on the test class path");
    try {
      return Path.of(url.toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Copies the fixture into {@code tmp/target}. */
  private static Path copy(Path fixture, Path target) throws IOException {
    try (Stream<Path> s = Files.walk(fixture)) {
      for (Path p : s.sorted().toList()) {
        Path to = target.resolve(fixture.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(to);
        } else {
          Files.copy(p, to, StandardCopyOption.COPY_ATTRIBUTES);
        }
      }
    }
    return target;
  }

  /** Whether any byte of the file after the segment header is not zero (the segment holds a record). */
  private static boolean holdsRecords(Path segment) throws IOException {
    byte[] b = Files.readAllBytes(segment);
    for (int i = LogFormat.SEGMENT_HEADER_SIZE; i < b.length; i++) {
      if (b[i] != 0) {
        return true;
      }
    }
    return false;
  }

  private static long number(String fileName, String prefix, String suffix) {
    return Long.parseLong(fileName.substring(prefix.length(), fileName.length() - suffix.length()));
  }

  /** The fixture is what its name says (so the test does not pass on a directory that tests nothing). */
  private static void checkFixtureLayout(Path dir, String name) throws IOException {
    List<String> files = names(dir);
    List<String> segments = files.stream().filter(n -> n.startsWith("log-") && n.endsWith(".seg")).toList();
    assertFalse(segments.isEmpty(), name + ": no log segment in " + files);
    if (name.startsWith("snapshot-format")) {
      assertFalse(files.contains(RocksStorage.DIRECTORY), name + ": a storage directory in " + files);
      List<String> snaps = snapshots(dir);
      assertEquals(1, snaps.size(), name + ": snapshots in " + files);
      long snapshot = number(snaps.get(0), "snapshot-", ".snap");
      boolean recordsAfter = false;
      for (String s : segments) {
        if (number(s, "log-", ".seg") > snapshot && holdsRecords(dir.resolve(s))) {
          recordsAfter = true;
        }
      }
      assertTrue(recordsAfter, name + ": no log record after the snapshot in " + files);
    } else if (name.equals("storage-format-interrupted-migration")) {
      assertEquals(1, snapshots(dir).size(), name + ": snapshots in " + files);
      assertEquals(2, segments.size(), name + ": segments in " + files);
      Path storage = dir.resolve(RocksStorage.DIRECTORY);
      assertTrue(names(storage).stream().anyMatch(n -> n.endsWith(".sst")), name + ": no table file in storage/");
    } else {
      Path storage = dir.resolve(RocksStorage.DIRECTORY);
      assertTrue(names(storage).stream().anyMatch(n -> n.endsWith(".sst")), name + ": no table file in storage/");
      assertEquals(List.of(), snapshots(dir), name + ": snapshot files in " + files);
      boolean records = false;
      for (String s : segments) {
        records |= holdsRecords(dir.resolve(s));
      }
      assertEquals(name.endsWith("-halted"), records, name + ": whether the log holds records the storage does not");
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"snapshot-format-closed", "snapshot-format-halted", "storage-format-closed",
      "storage-format-halted", "storage-format-interrupted-migration"})
  void opensADirectoryOfAnEarlierRelease(String name) throws IOException {
    Path dir = copy(fixture(name), tmp.resolve(name));
    checkFixtureLayout(dir, name);
    // 8008f0f deletes the snapshot of an interrupted migration whose storage already holds it only at its
    // first log truncation (at the latest, close), not in open.
    openCheckWriteReopen(dir, name, !name.equals("storage-format-interrupted-migration"));
  }

  // ---------------------------------------------------------------------------------------------
  // A crash during the migration

  /**
   * The child process: {@code args = dir mode [n]}. Opens the directory and halts with status 77:
   * <ul>
   *   <li>{@code after-open}: right after open returned, before close;
   *   <li>{@code timer n}: from another thread, n ms after it started opening;
   *   <li>{@code op n}: just before the n-th write-side file operation (1-based) of the data directory's
   *       log (creating or opening a file for writing, write, truncate, force, delete, rename, directory
   *       sync), or right after open returned if open makes fewer; prints "OPS count" then.
   * </ul>
   */
  public static final class Child {
    public static void main(String[] args) throws Exception {
      Path dir = Path.of(args[0]);
      String mode = args[1];
      EmbeddedOptions.Builder options = EmbeddedOptions.builder().dataDirectory(dir);
      HaltingFileLayer files = null;
      if (mode.equals("op")) {
        files = new HaltingFileLayer(FileLayer.NIO, Integer.parseInt(args[2]));
        options.files(files);
      } else if (mode.equals("timer")) {
        long millis = Long.parseLong(args[2]);
        Thread halter = new Thread(() -> {
          try {
            Thread.sleep(millis);
          } catch (InterruptedException e) {
            // halt anyway
          }
          Runtime.getRuntime().halt(HALTED);
        }, "halter");
        halter.setDaemon(true);
        halter.start();
      } else if (!mode.equals("after-open")) {
        throw new IllegalArgumentException(mode);
      }
      EmbeddedDatabase db = EmbeddedDatabase.open(options.build());
      if (files != null) {
        System.out.println("OPS " + files.count.get());
      }
      System.out.println("OPENED");
      System.out.flush();
      if (mode.equals("timer")) {
        Thread.sleep(60_000); // the halter ends it
      }
      Runtime.getRuntime().halt(HALTED);
      db.close(); // not reached
    }
  }

  /** Delegates to another file layer, and halts the JVM just before its n-th write-side operation. */
  static final class HaltingFileLayer extends ForwardingFileLayer {
    final AtomicInteger count = new AtomicInteger();
    private final int haltAt;

    HaltingFileLayer(FileLayer delegate, int haltAt) {
      super(delegate);
      this.haltAt = haltAt;
    }

    private void writeSide(String op, Path file) {
      int n = count.incrementAndGet();
      if (n == haltAt) {
        System.out.println("HALT before " + op + " " + file.getFileName() + " on " + Thread.currentThread().getName());
        System.out.flush();
        Runtime.getRuntime().halt(HALTED);
      }
    }

    @Override
    public OpenFile open(Path file, Mode mode) throws IOException {
      if (mode != Mode.READ) {
        writeSide("open(" + mode + ")", file);
      }
      return new ForwardingOpenFile(delegate.open(file, mode)) {
        @Override
        public void write(ByteBuffer src, long position) throws IOException {
          writeSide("write", file);
          super.write(src, position);
        }

        @Override
        public void truncate(long size) throws IOException {
          writeSide("truncate", file);
          super.truncate(size);
        }

        @Override
        public void force(boolean metadata) throws IOException {
          writeSide("force", file);
          super.force(metadata);
        }
      };
    }

    @Override
    public void createDirectories(Path dir) throws IOException {
      writeSide("createDirectories", dir);
      delegate.createDirectories(dir);
    }

    @Override
    public boolean deleteIfExists(Path file) throws IOException {
      writeSide("delete", file);
      return delegate.deleteIfExists(file);
    }

    @Override
    public void rename(Path from, Path to) throws IOException {
      writeSide("rename to " + to.getFileName(), from);
      delegate.rename(from, to);
    }

    @Override
    public void syncDirectory(Path dir) throws IOException {
      writeSide("syncDirectory", dir);
      delegate.syncDirectory(dir);
    }
  }

  private record ChildResult(int exit, String out, List<String> snapshotsLeftAfterNextOpen) {
    String halt() {
      return out.lines().filter(l -> l.startsWith("HALT ")).findFirst().orElse(out.contains("OPENED")
          ? "halted after open returned" : "halted inside open");
    }
  }

  private static ChildResult runChild(Path dir, String... args) throws Exception {
    List<String> childArgs = new ArrayList<>(List.of(dir.toString()));
    childArgs.addAll(List.of(args));
    Path childTmp = Files.createDirectories(dir.resolveSibling(dir.getFileName() + "-jvm"));
    List<String> command = ChildJvm.command(childTmp, "256m", ChildJvm.shortLivedOptions(nativeLibrary), Child.class,
        childArgs.toArray(String[]::new));
    Process child = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    // The output is read to its end (the child's exit closes the pipe) before the process is touched:
    // destroyForcibly also closes the parent's end of the pipe, even of a child that already exited, so a
    // reader that a busy machine had not yet scheduled lost the child's last lines (its "OPENED").
    CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> {
      try (InputStream in = child.getInputStream()) {
        return new String(in.readAllBytes(), StandardCharsets.UTF_8);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }, runnable -> new Thread(runnable, "child-output").start());
    // Bounds for a hung child only: such a child opens a small directory in about a second when the
    // machine is idle.
    if (!child.waitFor(120, TimeUnit.SECONDS)) {
      child.destroyForcibly();
      fail("child " + List.of(args) + " did not end");
    }
    try {
      return new ChildResult(child.exitValue(), out.get(60, TimeUnit.SECONDS), List.of());
    } catch (ExecutionException | TimeoutException e) {
      throw new AssertionError("reading the output of child " + List.of(args), e);
    }
  }

  private static ChildResult crashAndCheck(Path fixture, Path dir, String... childArgs) throws Exception {
    copy(fixture, dir);
    ChildResult r = runChild(dir, childArgs);
    String what = "child " + String.join(" ", childArgs);
    assertEquals(HALTED, r.exit(), what + " did not halt where it was told to (it failed?); its output: " + r.out());
    List<String> left = openCheckWriteReopen(dir, fixture.getFileName() + " after a crash of " + what + " ("
        + r.halt() + ")", false);
    if (!left.isEmpty()) {
      System.out.printf("LegacyDirectoryMigrationTest %s, %s (%s): the next open left %s; close removed it%n",
          fixture.getFileName(), what, r.halt(), left);
    }
    return new ChildResult(r.exit(), r.out(), left);
  }

  @ParameterizedTest
  @ValueSource(strings = {"snapshot-format-closed", "snapshot-format-halted"})
  void aCrashDuringTheMigrationLosesNothing(String name) throws Exception {
    Path fixture = fixture(name);
    // Each crash is a child and a copy of its own: two at a time, as one child and one check of the
    // directory it left each use about one core.
    ExecutorService crashes = Executors.newFixedThreadPool(2);
    try {
      Future<ChildResult> afterOpen = crashes.submit(() -> crashAndCheck(fixture, tmp.resolve("after-open"), "after-open"));
      // A halt from another thread lands wherever the open is (opening RocksDB takes most of it).
      Future<ChildResult> timer = crashes.submit(() -> crashAndCheck(fixture, tmp.resolve("timer-20"), "timer", "20"));
      // A child that halts at no operation counts the write-side operations of the open.
      ChildResult counted = crashAndCheck(fixture, tmp.resolve("op-count"), "op", Integer.toString(Integer.MAX_VALUE));
      assertTrue(afterOpen.get().out().contains("OPENED"), afterOpen.get().out());
      timer.get();
      int ops = Integer.parseInt(counted.out().lines().filter(l -> l.startsWith("OPS ")).findFirst()
          .orElseThrow(() -> new AssertionError("no OPS line: " + counted.out())).substring(4).trim());
      assertTrue(ops > 3, "the open made only " + ops + " write-side file operations");
      List<Future<ChildResult>> each = new ArrayList<>();
      for (int n = 1; n <= ops; n++) {
        String at = Integer.toString(n);
        each.add(crashes.submit(() -> crashAndCheck(fixture, tmp.resolve("op-" + at), "op", at)));
      }
      checkEveryCrash(name, ops, each);
    } catch (ExecutionException e) {
      throw e.getCause() instanceof Error ? (Error) e.getCause() : new AssertionError(e.getCause());
    } finally {
      crashes.shutdownNow();
      crashes.awaitTermination(2, TimeUnit.MINUTES);
    }
  }

  private static void checkEveryCrash(String name, int ops, List<Future<ChildResult>> each) throws Exception {
    int haltedInOpen = 0;
    List<String> leftovers = new ArrayList<>();
    for (int n = 1; n <= ops; n++) {
      ChildResult r = each.get(n - 1).get();
      if (!r.out().contains("OPENED")) {
        haltedInOpen++;
      }
      if (!r.snapshotsLeftAfterNextOpen().isEmpty()) {
        leftovers.add(n + ": " + r.halt());
      }
    }
    // A snapshot the storage already holds is deleted by the next open, not left until a close.
    assertTrue(leftovers.isEmpty(), "after a crash at " + leftovers + " the next open left the snapshot");
    // The log's sync thread may make some of them concurrently, but most halt inside open.
    assertTrue(haltedInOpen >= ops / 2, haltedInOpen + " of " + ops + " children halted inside open");
    System.out.printf("LegacyDirectoryMigrationTest %s: a crash before each of the open's %d write-side file"
        + " operations (%d of them inside open) lost nothing%n", name, ops, haltedInOpen);
  }
}
