package io.github.fdbcoord.embedded.log;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

public class CommitLogTest {
  private Path dir;

  @BeforeEach
  void createDir() throws IOException {
    dir = Files.createTempDirectory("commit-log-test-");
  }

  @AfterEach
  void removeDir() throws IOException {
    try (Stream<Path> s = Files.walk(dir)) {
      for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }

  /** What a replay saw. */
  static final class Collected implements CommitLog.Replay {
    final Map<String, String> snapshot = new TreeMap<>();
    final List<Long> versions = new ArrayList<>();
    final List<byte[]> payloads = new ArrayList<>();
    boolean recordSeen;

    @Override
    public void snapshotEntry(byte[] key, byte[] value) {
      assertFalse(recordSeen, "snapshot entries must come before records");
      snapshot.put(hex(key), hex(value));
    }

    @Override
    public void record(long version, byte[] payload) {
      recordSeen = true;
      if (!versions.isEmpty()) {
        assertTrue(version > versions.get(versions.size() - 1), "records must ascend");
      }
      versions.add(version);
      payloads.add(payload);
    }
  }

  /**
   * Rewrites the manifest as if the crash had come before the log recorded acknowledgements past
   * {@code version}: what a real torn write looks like (it only ever cuts unacknowledged records).
   */
  static void acknowledgedOnlyThrough(Path dir, long version) throws IOException {
    Manifest m = Manifest.read(FileLayer.NIO, dir);
    new Manifest(m.logStart(), version, m.segments()).write(FileLayer.NIO, dir);
  }

  private static String hex(byte[] b) {
    return HexFormat.of().formatHex(b);
  }

  static byte[] payloadFor(long version, int length) {
    byte[] p = new byte[length];
    new Random(version).nextBytes(p);
    return p;
  }

  static void assertRecords(Collected c, List<Long> versions, int length) {
    assertEquals(versions, c.versions);
    for (int i = 0; i < versions.size(); i++) {
      assertArrayEquals(payloadFor(versions.get(i), length), c.payloads.get(i), "payload of version " + versions.get(i));
    }
  }

  /** Appends one record per version and waits for each before the next, so each is its own batch. */
  static void appendEach(CommitLog log, List<Long> versions, int length) {
    for (long v : versions) {
      log.append(v, payloadFor(v, length)).join();
    }
  }

  static List<Long> range(long from, long toInclusive) {
    List<Long> l = new ArrayList<>();
    for (long v = from; v <= toInclusive; v++) {
      l.add(v);
    }
    return l;
  }

  private List<Path> files(String prefix) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.getFileName().toString().startsWith(prefix)).sorted().toList();
    }
  }

  private Path lastSegment() throws IOException {
    List<Path> segs = files("log-");
    return segs.get(segs.size() - 1);
  }

  static long recordOffset(int index, int length) {
    return LogFormat.SEGMENT_HEADER_SIZE + (long) index * (LogFormat.RECORD_HEADER_SIZE + length);
  }

  static void flipByte(Path file, long offset) throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      ByteBuffer b = ByteBuffer.allocate(1);
      ch.read(b, offset);
      b.put(0, (byte) (b.get(0) ^ 0x5A));
      b.rewind();
      ch.write(b, offset);
    }
  }

  static void truncate(Path file, long size) throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
      ch.truncate(size);
    }
  }

  @Test
  void appendCloseReopenReplaysEveryRecordInOrder() throws IOException {
    Random random = new Random(42);
    List<Long> versions = new ArrayList<>();
    List<byte[]> payloads = new ArrayList<>();
    List<CompletableFuture<Void>> futures = new ArrayList<>();
    try (CommitLog log = CommitLog.open(dir, new Collected())) {
      assertEquals(0, log.recoveredVersion());
      long v = 0;
      for (int i = 0; i < 2000; i++) {
        v += 1 + random.nextInt(1000);
        byte[] p = new byte[i % 100 == 0 ? 70_000 : random.nextInt(300)];
        random.nextBytes(p);
        versions.add(v);
        payloads.add(p);
        futures.add(log.append(v, p));
      }
      CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).join();
      assertTrue(log.bytesSinceSnapshot() > 0);
    }
    Collected c = new Collected();
    try (CommitLog log = CommitLog.open(dir, c)) {
      assertEquals(versions.get(versions.size() - 1), log.recoveredVersion());
      assertEquals(versions, c.versions);
      for (int i = 0; i < payloads.size(); i++) {
        assertArrayEquals(payloads.get(i), c.payloads.get(i));
      }
      assertTrue(c.snapshot.isEmpty());
      long next = log.recoveredVersion() + 1;
      log.append(next, new byte[] {1, 2, 3}).join();
      versions.add(next);
      payloads.add(new byte[] {1, 2, 3});
    }
    Collected again = new Collected();
    try (CommitLog log = CommitLog.open(dir, again)) {
      assertEquals(versions, again.versions);
      assertArrayEquals(new byte[] {1, 2, 3}, again.payloads.get(again.payloads.size() - 1));
    }
  }

  @Test
  void rejectsBadUse() throws IOException {
    CommitLog log = CommitLog.open(dir, new Collected());
    log.append(10, new byte[1]).join();
    IllegalArgumentException notAscending = assertThrows(IllegalArgumentException.class, () -> log.append(10, new byte[1]));
    assertTrue(notAscending.getMessage().contains("ascend"), notAscending.getMessage());
    IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class,
        () -> log.writeSnapshot(5, List.<Map.Entry<byte[], byte[]>>of().iterator()));
    assertTrue(unknown.getMessage().contains("rollSegment"), unknown.getMessage());
    long rolled = log.rollSegment();
    log.close();
    log.close();
    assertThrows(IllegalStateException.class, () -> log.append(11, new byte[1]));
    assertThrows(IllegalStateException.class, log::rollSegment);
    assertThrows(IllegalStateException.class,
        () -> log.writeSnapshot(rolled, List.<Map.Entry<byte[], byte[]>>of().iterator()));
  }

  @Test
  void rollingWithoutNewRecordsKeepsTheCurrentSegment() throws IOException {
    int length = 10;
    try (CommitLog log = CommitLog.open(dir, new Collected())) {
      assertEquals(0, log.rollSegment());
      log.writeSnapshot(0, List.<Map.Entry<byte[], byte[]>>of().iterator());
      appendEach(log, range(1, 3), length);
      assertEquals(3, log.rollSegment());
      assertEquals(3, log.rollSegment());
      log.writeSnapshot(3, entries(stateUpTo(3, length)).iterator());
      assertEquals(3, log.rollSegment());
      appendEach(log, range(4, 5), length);
      assertEquals(1, files("log-").size(), files("log-").toString());
    }
    Collected c = new Collected();
    try (CommitLog log = CommitLog.open(dir, c)) {
      assertEquals(5, log.recoveredVersion());
    }
    assertEquals(hexMap(stateUpTo(3, length)), c.snapshot);
    assertRecords(c, range(4, 5), length);
  }

  @Test
  void concurrentAppendersShareFsyncs() throws Exception {
    int writers = 64;
    int perWriter = 150;
    int length = 100;
    // A slow fsync of its own, not the disk's: on tmpfs an fsync costs nothing and nothing piles up.
    NonDurableFileLayer disk = new NonDurableFileLayer().forceDelay(java.time.Duration.ofMillis(2));
    Path simulated = Path.of("/simulated/group-commit");
    ReentrantLock commitLock = new ReentrantLock();
    long[] clock = {0};
    ExecutorService pool = Executors.newFixedThreadPool(writers);
    long syncs;
    try (CommitLog log = CommitLog.open(disk, simulated, new Collected())) {
      List<Future<?>> done = new ArrayList<>();
      for (int w = 0; w < writers; w++) {
        done.add(pool.submit(() -> {
          for (int i = 0; i < perWriter; i++) {
            CompletableFuture<Void> f;
            commitLock.lock();
            try {
              long v = ++clock[0];
              f = log.append(v, payloadFor(v, length));
            } finally {
              commitLock.unlock();
            }
            f.join();
          }
          return null;
        }));
      }
      for (Future<?> f : done) {
        f.get(60, TimeUnit.SECONDS);
      }
      syncs = log.syncCount();
    } finally {
      pool.shutdownNow();
    }
    int records = writers * perWriter;
    assertTrue(syncs > 0);
    assertTrue(syncs * 4 < records, "group commit: " + syncs + " fsyncs for " + records + " records");
    Collected c = new Collected();
    try (CommitLog log = CommitLog.open(disk, simulated, c)) {
      assertEquals(records, log.recoveredVersion());
    }
    assertRecords(c, range(1, records), length);
  }

  @Test
  void truncatedLastRecordIsDroppedAndAppendsContinueAfterIt() throws IOException {
    int length = 50;
    try (CommitLog log = CommitLog.open(dir, new Collected())) {
      appendEach(log, range(1, 10), length);
    }
    Path segment = lastSegment();
    assertEquals(recordOffset(10, length), Files.size(segment));
    acknowledgedOnlyThrough(dir, 9);
    truncate(segment, recordOffset(9, length) + 30);

    Collected c = new Collected();
    try (CommitLog log = CommitLog.open(dir, c)) {
      assertEquals(9, log.recoveredVersion());
      assertRecords(c, range(1, 9), length);
      assertEquals(recordOffset(9, length), Files.size(segment), "torn tail cut off");
      appendEach(log, range(10, 12), length);
    }
    Collected after = new Collected();
    try (CommitLog log = CommitLog.open(dir, after)) {
      assertEquals(12, log.recoveredVersion());
    }
    assertRecords(after, range(1, 12), length);
  }

  @Test
  @Tag("slow")
  void everyCutThroughTheLastRecordsRecoversExactlyTheCompleteOnes() throws IOException {
    int length = 20;
    try (CommitLog log = CommitLog.open(dir, new Collected())) {
      appendEach(log, range(1, 10), length);
    }
    Path segment = lastSegment();
    byte[] full = Files.readAllBytes(segment);
    acknowledgedOnlyThrough(dir, 8);
    long firstCut = recordOffset(8, length);
    for (long cut = firstCut; cut <= full.length; cut++) {
      // Odd cuts: the crash also left zero-filled preallocated space after the cut.
      int zeros = cut % 2 == 0 ? 0 : 300;
      byte[] torn = new byte[(int) cut + zeros];
      System.arraycopy(full, 0, torn, 0, (int) cut);
      Files.write(segment, torn);
      Collected c = new Collected();
      try (CommitLog log = CommitLog.open(dir, c)) {
        int complete = (int) ((cut - LogFormat.SEGMENT_HEADER_SIZE) / (LogFormat.RECORD_HEADER_SIZE + length));
        assertEquals(complete, log.recoveredVersion(), "cut at " + cut + " with " + zeros + " zeros");
        assertRecords(c, range(1, complete), length);
        assertEquals(recordOffset(complete, length), Files.size(segment));
      }
    }
  }

  @Test
  void lastRecordWithFlippedBytesIsDropped() throws IOException {
    int length = 50;
    try (CommitLog log = CommitLog.open(dir, new Collected())) {
      appendEach(log, range(1, 10), length);
    }
    Path segment = lastSegment();
    acknowledgedOnlyThrough(dir, 9);
    flipByte(segment, recordOffset(9, length) + LogFormat.RECORD_HEADER_SIZE + 7);

    Collected c = new Collected();
    try (CommitLog log = CommitLog.open(dir, c)) {
      assertRecords(c, range(1, 9), length);
      appendEach(log, range(20, 21), length);
    }
    Collected after = new Collected();
    try (CommitLog log = CommitLog.open(dir, after)) {
      assertEquals(21, log.recoveredVersion());
    }
    List<Long> expected = range(1, 9);
    expected.addAll(range(20, 21));
    assertRecords(after, expected, length);

    // A corrupt length field (the header, not the payload) of the last record is dropped the same way.
    Path seg = lastSegment();
    acknowledgedOnlyThrough(dir, 20);
    flipByte(seg, recordOffset(10, length));
    Collected third = new Collected();
    try (CommitLog log = CommitLog.open(dir, third)) {
      assertEquals(20, log.recoveredVersion());
    }
    assertRecords(third, expected.subList(0, 10), length);
  }

  @Test
  void corruptionInNonLastSegmentFailsOpen() throws IOException {
    int length = 40;
    try (CommitLog log = CommitLog.open(dir, new Collected())) {
      appendEach(log, range(1, 5), length);
      assertEquals(5, log.rollSegment());
      appendEach(log, range(6, 10), length);
    }
    List<Path> segments = files("log-");
    assertEquals(2, segments.size());
    flipByte(segments.get(0), recordOffset(2, length) + LogFormat.RECORD_HEADER_SIZE + 3);

    IOException e = assertThrows(IOException.class, () -> CommitLog.open(dir, new Collected()));
    assertTrue(e.getMessage().contains("corrupt") && e.getMessage().contains("not the last segment"), e.getMessage());
    // The failed open released the directory.
    flipByte(segments.get(0), recordOffset(2, length) + LogFormat.RECORD_HEADER_SIZE + 3);
    Collected c = new Collected();
    try (CommitLog log = CommitLog.open(dir, c)) {
      assertEquals(10, log.recoveredVersion());
    }
    assertRecords(c, range(1, 10), length);
  }

  @Test
  void corruptRecordFollowedByLaterSyncedBatchFailsOpen() throws IOException {
    int length = 40;
    try (CommitLog log = CommitLog.open(dir, new Collected())) {
      appendEach(log, range(1, 6), length);
    }
    flipByte(lastSegment(), recordOffset(2, length) + LogFormat.RECORD_HEADER_SIZE + 3);
    IOException e = assertThrows(IOException.class, () -> CommitLog.open(dir, new Collected()));
    assertTrue(e.getMessage().contains("corrupt") && e.getMessage().contains("later, fully synced batch"), e.getMessage());
  }

  @Test
  void badRecordFollowedOnlyByItsOwnBatchIsATornTail() throws IOException {
    // Pages of one unsynced write may reach the disk in any order: records of the same batch after a bad
    // one do not prove it was synced. Batches: 1 1 2 2 2, record 4 (batch 2) corrupt.
    int length = 30;
    long[] batches = {1, 1, 2, 2, 2};
    Path segment = dir.resolve(LogFormat.segmentName(1));
    ByteBuffer b = ByteBuffer.allocate((int) recordOffset(batches.length, length));
    b.put(LogFormat.segmentHeader(1, 1));
    for (int i = 0; i < batches.length; i++) {
      LogFormat.putRecord(b, i + 1, batches[i], payloadFor(i + 1, length));
    }
    Files.write(segment, b.array());
    flipByte(segment, recordOffset(3, length) + LogFormat.RECORD_HEADER_SIZE + 1);

    Collected c = new Collected();
    try (CommitLog log = CommitLog.open(dir, c)) {
      assertEquals(3, log.recoveredVersion());
      log.append(4, payloadFor(4, length)).join();
    }
    assertRecords(c, range(1, 3), length);
    Collected after = new Collected();
    try (CommitLog log = CommitLog.open(dir, after)) {
      assertEquals(4, log.recoveredVersion());
    }
    assertRecords(after, range(1, 4), length);
  }

  private static void appendZeros(Path file, int n) throws IOException {
    Files.write(file, new byte[n], StandardOpenOption.APPEND);
  }

  @Test
  void preallocatedZerosAfterTheRecordsAreTheEndOfTheLog() throws IOException {
    int length = 50;
    try (CommitLog log = CommitLog.open(dir, new Collected())) {
      appendEach(log, range(1, 10), length);
    }
    // A crash leaves the zero-filled space written ahead of the records in place.
    Path segment = lastSegment();
    appendZeros(segment, (int) SegmentFile.PREALLOCATE_BYTES);
    Collected c = new Collected();
    try (CommitLog log = CommitLog.open(dir, c)) {
      assertEquals(10, log.recoveredVersion());
      assertEquals(recordOffset(10, length), Files.size(segment), "zeros trimmed on open");
      appendEach(log, range(11, 12), length);
    }
    assertRecords(c, range(1, 10), length);

    // A record cut short by zeros (its last page never reached the disk) is a torn tail.
    acknowledgedOnlyThrough(dir, 11);
    try (FileChannel ch = FileChannel.open(segment, StandardOpenOption.WRITE)) {
      ch.write(ByteBuffer.allocate(40), recordOffset(11, length) + 10);
    }
    appendZeros(segment, 100_000);
    Collected torn = new Collected();
    try (CommitLog log = CommitLog.open(dir, torn)) {
      assertEquals(11, log.recoveredVersion());
    }
    assertRecords(torn, range(1, 11), length);

    // A corrupt record followed by zeros and then a later synced batch is still caught.
    try (CommitLog log = CommitLog.open(dir, new Collected())) {
      appendEach(log, range(12, 14), length);
    }
    acknowledgedOnlyThrough(dir, 11);
    flipByte(segment, recordOffset(11, length) + LogFormat.RECORD_HEADER_SIZE + 2);
    appendZeros(segment, 100_000);
    IOException e = assertThrows(IOException.class, () -> CommitLog.open(dir, new Collected()));
    assertTrue(e.getMessage().contains("later, fully synced batch"), e.getMessage());
  }

  @Test
  void tornSegmentHeaderOfLastSegmentIsRewritten() throws IOException {
    int length = 20;
    try (CommitLog log = CommitLog.open(dir, new Collected())) {
      appendEach(log, range(1, 3), length);
    }
    // A crash right after a roll created the next segment file.
    Path next = dir.resolve(LogFormat.segmentName(4));
    Files.write(next, new byte[] {'F', 'D', 'B'});
    Collected c = new Collected();
    try (CommitLog log = CommitLog.open(dir, c)) {
      assertEquals(3, log.recoveredVersion());
      appendEach(log, range(4, 5), length);
    }
    assertRecords(c, range(1, 3), length);
    Collected after = new Collected();
    try (CommitLog log = CommitLog.open(dir, after)) {
      assertEquals(5, log.recoveredVersion());
    }
    assertRecords(after, range(1, 5), length);
  }

  @Test
  void missingSegmentFailsOpen() throws IOException {
    int length = 20;
    try (CommitLog log = CommitLog.open(dir, new Collected())) {
      appendEach(log, range(1, 3), length);
      log.rollSegment();
      appendEach(log, range(4, 6), length);
      log.rollSegment();
      appendEach(log, range(7, 9), length);
    }
    List<Path> segments = files("log-");
    assertEquals(3, segments.size());
    Files.delete(segments.get(1));
    IOException e = assertThrows(IOException.class, () -> CommitLog.open(dir, new Collected()));
    assertTrue(e.getMessage().contains(segments.get(1).getFileName() + " is missing: MANIFEST lists it, with versions 4"
        + " to 6"), e.getMessage());
    // Without a manifest (a directory of an older release), the gap between the segments tells.
    Files.delete(dir.resolve(Manifest.FILE));
    e = assertThrows(IOException.class, () -> CommitLog.open(dir, new Collected()));
    assertTrue(e.getMessage().contains("missing records"), e.getMessage());
  }

  private static Map<String, String> hexMap(Map<String, byte[]> state) {
    Map<String, String> m = new TreeMap<>();
    state.forEach((k, v) -> m.put(hex(k.getBytes(StandardCharsets.UTF_8)), hex(v)));
    return m;
  }

  private static List<Map.Entry<byte[], byte[]>> entries(Map<String, byte[]> state) {
    List<Map.Entry<byte[], byte[]>> l = new ArrayList<>();
    state.forEach((k, v) -> l.add(Map.entry(k.getBytes(StandardCharsets.UTF_8), v)));
    return l;
  }

  /** The state "after" versions 1..n: key k-i holds the payload of version i. */
  private static Map<String, byte[]> stateUpTo(long n, int length) {
    Map<String, byte[]> m = new TreeMap<>();
    for (long v = 1; v <= n; v++) {
      m.put("k-" + v, payloadFor(v, length));
    }
    return m;
  }

  @Test
  void compactionReplaysSnapshotThenLaterRecordsAndDeletesOldSegments() throws Exception {
    int length = 60;
    long rolled;
    try (CommitLog log = CommitLog.open(dir, new Collected())) {
      appendEach(log, range(1, 100), length);
      log.rollSegment();
      appendEach(log, range(101, 150), length);
      rolled = log.rollSegment();
      assertEquals(150, rolled);
      assertEquals(0, log.bytesSinceSnapshot());
      // Appends keep going while the snapshot is written.
      CompletableFuture<Void> concurrent = CompletableFuture.runAsync(() -> appendEach(log, range(151, 250), length));
      log.writeSnapshot(rolled, entries(stateUpTo(rolled, length)).iterator());
      concurrent.get(30, TimeUnit.SECONDS);
      assertTrue(log.bytesSinceSnapshot() > 0);
      assertEquals(1, files("log-").size(), "segments covered by the snapshot are deleted: " + files("log-"));
      assertEquals(List.of(dir.resolve(LogFormat.snapshotName(150))), files("snapshot-"));
    }
    Collected c = new Collected();
    try (CommitLog log = CommitLog.open(dir, c)) {
      assertEquals(250, log.recoveredVersion());
    }
    assertEquals(hexMap(stateUpTo(150, length)), c.snapshot);
    assertRecords(c, range(151, 250), length);

    // A second compaction replaces the first snapshot.
    try (CommitLog log = CommitLog.open(dir, new Collected())) {
      long v = log.rollSegment();
      assertEquals(250, v);
      appendEach(log, range(251, 260), length);
      log.writeSnapshot(v, entries(stateUpTo(v, length)).iterator());
      assertEquals(List.of(dir.resolve(LogFormat.snapshotName(250))), files("snapshot-"));
    }
    Collected second = new Collected();
    try (CommitLog log = CommitLog.open(dir, second)) {
      assertEquals(260, log.recoveredVersion());
    }
    assertEquals(hexMap(stateUpTo(250, length)), second.snapshot);
    assertRecords(second, range(251, 260), length);
  }

  @Test
  void leftoverTempSnapshotAndSnapshotWithBadTrailerAreIgnored() throws IOException {
    int length = 30;
    try (CommitLog log = CommitLog.open(dir, new Collected())) {
      appendEach(log, range(1, 20), length);
      long v = log.rollSegment();
      log.writeSnapshot(v, entries(stateUpTo(v, length)).iterator());
      appendEach(log, range(21, 40), length);
      log.rollSegment();
      appendEach(log, range(41, 50), length);
    }
    // A crash while the snapshot at 40 was being written left its temp file...
    Path temp = dir.resolve(LogFormat.snapshotName(40) + LogFormat.TEMP_SUFFIX);
    SnapshotFile.write(FileLayer.NIO, temp, 40, entries(stateUpTo(40, length)).iterator());
    // ...and a snapshot at 45 whose trailer does not check out.
    Path bad = dir.resolve(LogFormat.snapshotName(45));
    SnapshotFile.write(FileLayer.NIO, bad, 45, entries(stateUpTo(45, length)).iterator());
    flipByte(bad, Files.size(bad) - 10);
    assertTrue(SnapshotFile.read(FileLayer.NIO, bad, 45, null) != null);

    Collected c = new Collected();
    try (CommitLog log = CommitLog.open(dir, c)) {
      assertEquals(50, log.recoveredVersion());
    }
    assertEquals(hexMap(stateUpTo(20, length)), c.snapshot);
    assertRecords(c, range(21, 50), length);
    assertFalse(Files.exists(temp), "temp snapshot deleted");

    // A snapshot with a corrupt entry is ignored too.
    flipByte(bad, LogFormat.SNAPSHOT_HEADER_SIZE + 9);
    Path worse = dir.resolve(LogFormat.snapshotName(48));
    SnapshotFile.write(FileLayer.NIO, worse, 48, entries(stateUpTo(48, length)).iterator());
    flipByte(worse, LogFormat.SNAPSHOT_HEADER_SIZE + 9);
    Collected again = new Collected();
    try (CommitLog log = CommitLog.open(dir, again)) {
      assertEquals(50, log.recoveredVersion());
    }
    assertEquals(hexMap(stateUpTo(20, length)), again.snapshot);
    assertRecords(again, range(21, 50), length);
  }

  @Test
  void crashBetweenSnapshotRenameAndSegmentDeletionRecovers() throws IOException {
    int length = 30;
    Path saved = Files.createTempDirectory("commit-log-saved-");
    try {
      try (CommitLog log = CommitLog.open(dir, new Collected())) {
        appendEach(log, range(1, 30), length);
        long v = log.rollSegment();
        appendEach(log, range(31, 40), length);
        for (Path p : files("log-")) {
          Files.copy(p, saved.resolve(p.getFileName()));
        }
        log.writeSnapshot(v, entries(stateUpTo(v, length)).iterator());
      }
      // Put the deleted segment back, as if the crash came before the deletion.
      for (Path p : Files.list(saved).toList()) {
        if (!Files.exists(dir.resolve(p.getFileName()))) {
          Files.copy(p, dir.resolve(p.getFileName()));
        }
      }
      assertEquals(2, files("log-").size());
      Collected c = new Collected();
      try (CommitLog log = CommitLog.open(dir, c)) {
        assertEquals(40, log.recoveredVersion());
      }
      assertEquals(hexMap(stateUpTo(30, length)), c.snapshot);
      assertRecords(c, range(31, 40), length);
      assertEquals(1, files("log-").size(), "covered segment deleted on open");
    } finally {
      try (Stream<Path> s = Files.walk(saved)) {
        for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(p);
        }
      }
    }
  }

  @Test
  void snapshotCoveringTheWholeLastSegmentRecovers() throws IOException {
    // writeSnapshot no longer leaves this state (it waits for the roll), but recovery must not depend on that.
    int length = 30;
    try (CommitLog log = CommitLog.open(dir, new Collected())) {
      appendEach(log, range(1, 20), length);
    }
    SnapshotFile.write(FileLayer.NIO, dir.resolve(LogFormat.snapshotName(20)), 20, entries(stateUpTo(20, length)).iterator());
    Collected c = new Collected();
    try (CommitLog log = CommitLog.open(dir, c)) {
      assertEquals(20, log.recoveredVersion());
      appendEach(log, range(21, 25), length);
    }
    assertEquals(hexMap(stateUpTo(20, length)), c.snapshot);
    assertTrue(c.versions.isEmpty());
    Collected after = new Collected();
    try (CommitLog log = CommitLog.open(dir, after)) {
      assertEquals(25, log.recoveredVersion());
    }
    assertEquals(hexMap(stateUpTo(20, length)), after.snapshot);
    assertRecords(after, range(21, 25), length);
  }

  @Test
  void futuresCompleteInOrderOffTheSyncThreadAndCloseMayRunInAContinuation() throws Exception {
    CommitLog log = CommitLog.open(dir, new Collected());
    List<Long> completed = java.util.Collections.synchronizedList(new ArrayList<>());
    List<CompletableFuture<Void>> futures = new ArrayList<>();
    for (long v = 1; v <= 2000; v++) {
      long version = v;
      futures.add(log.append(v, payloadFor(v, 10)).thenRun(() -> {
        assertFalse(Thread.currentThread().getName().startsWith("commit-log-sync"));
        completed.add(version);
      }));
    }
    CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
    assertEquals(range(1, 2000), completed);
    CompletableFuture<Void> closedInside = log.append(2001, new byte[1]).thenRun(log::close);
    closedInside.get(30, TimeUnit.SECONDS);
    assertThrows(IllegalStateException.class, () -> log.append(2002, new byte[1]));
    Collected c = new Collected();
    try (CommitLog reopened = CommitLog.open(dir, c)) {
      assertEquals(2001, reopened.recoveredVersion());
    }
  }

  @Test
  void secondOpenOfTheSameDirectoryFails() throws IOException {
    try (CommitLog log = CommitLog.open(dir, new Collected())) {
      log.append(1, new byte[] {7}).join();
      IllegalStateException e = assertThrows(IllegalStateException.class, () -> CommitLog.open(dir, new Collected()));
      assertTrue(e.getMessage().contains("in use"), e.getMessage());
    }
    Collected c = new Collected();
    try (CommitLog log = CommitLog.open(dir, c)) {
      assertEquals(1, log.recoveredVersion());
    }
  }

  @Test
  void ioFailureFailsThatAppendAndAllLaterOnes() throws Exception {
    CommitLog log = CommitLog.open(dir, new Collected());
    try {
      log.append(1, new byte[] {1}).join();
      // Make the next write fail: close the segment channel under the sync thread.
      var writerField = CommitLog.class.getDeclaredField("writer");
      writerField.setAccessible(true);
      var fileField = GroupCommitWriter.class.getDeclaredField("file");
      fileField.setAccessible(true);
      ((SegmentFile) fileField.get(writerField.get(log))).close();
      CompletableFuture<Void> failed = log.append(2, new byte[] {2});
      Throwable cause = assertThrows(Exception.class, failed::join).getCause();
      assertTrue(cause instanceof UncheckedIOException, String.valueOf(cause));
      // Queued before the failure: it may be on disk, so it must not read as refused.
      assertFalse(cause instanceof LogFailedException, String.valueOf(cause));
      Throwable later = assertThrows(Exception.class, () -> log.append(3, new byte[] {3}).join()).getCause();
      assertTrue(later instanceof LogFailedException, String.valueOf(later));
      // Whoever meets the failure later names its cause: the engine may stop on this one first (FullDiskTest saw
      // "commit log ... failed earlier" where the disk's "Input/output error" was expected, at load 12).
      IOException rolled = assertThrows(IOException.class, log::rollSegment);
      String original = GroupCommitWriter.describe(cause.getCause());
      assertTrue(rolled.getMessage().contains(original), rolled.getMessage() + " names " + original);
      assertTrue(later.getMessage().contains(original), later.getMessage() + " names " + original);
    } finally {
      log.close();
    }
    Collected c = new Collected();
    try (CommitLog reopened = CommitLog.open(dir, c)) {
      assertEquals(List.of(1L), c.versions);
    }
  }
}
