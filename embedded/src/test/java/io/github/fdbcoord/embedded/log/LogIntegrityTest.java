package io.github.fdbcoord.embedded.log;

import static io.github.fdbcoord.embedded.log.CommitLogTest.acknowledgedOnlyThrough;
import static io.github.fdbcoord.embedded.log.CommitLogTest.appendEach;
import static io.github.fdbcoord.embedded.log.CommitLogTest.assertRecords;
import static io.github.fdbcoord.embedded.log.CommitLogTest.flipByte;
import static io.github.fdbcoord.embedded.log.CommitLogTest.payloadFor;
import static io.github.fdbcoord.embedded.log.CommitLogTest.range;
import static io.github.fdbcoord.embedded.log.CommitLogTest.recordOffset;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.fdbcoord.embedded.log.CommitLogTest.Collected;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Damage that a crash cannot cause fails the open with the file named, never a silent loss of
 * acknowledged commits: each case of issue 11's integrity list, checked against the manifest.
 */
class LogIntegrityTest {
  private static final int LENGTH = 40;
  @TempDir
  Path dir;

  /** Three segments: versions 1-3, 4-6 and 7-9, closed cleanly. */
  private List<Path> threeSegments() throws IOException {
    try (CommitLog log = CommitLog.open(dir, new Collected())) {
      appendEach(log, range(1, 3), LENGTH);
      log.rollSegment();
      appendEach(log, range(4, 6), LENGTH);
      log.rollSegment();
      appendEach(log, range(7, 9), LENGTH);
    }
    try (Stream<Path> s = Files.list(dir)) {
      List<Path> segments = s.filter(p -> p.getFileName().toString().startsWith("log-")).sorted().toList();
      assertEquals(3, segments.size());
      return segments;
    }
  }

  private IOException openFails() {
    return assertThrows(IOException.class, () -> CommitLog.open(dir, new Collected()));
  }

  private static void assertMentions(IOException e, String... parts) {
    for (String part : parts) {
      assertTrue(e.getMessage().contains(part), "'" + part + "' not in: " + e.getMessage());
    }
  }

  @Test
  void manifestDescribesTheSegmentsAndTheAcknowledgedVersion() throws IOException {
    List<Path> segments = threeSegments();
    Manifest m = Manifest.read(FileLayer.NIO, dir);
    assertEquals(1, m.logStart());
    assertEquals(9, m.acknowledgedThrough());
    assertEquals(List.of(new Manifest.Entry(1, 3), new Manifest.Entry(4, 6), new Manifest.Entry(7, -1)), m.segments());
    assertEquals(3, segments.size());
    // It round-trips through its text form, and any changed byte is caught.
    byte[] bytes = m.encode();
    assertEquals(m, Manifest.decode(bytes, dir.resolve(Manifest.FILE)));
    for (int i = 0; i < bytes.length; i++) {
      byte[] damaged = bytes.clone();
      damaged[i] ^= 0x04;
      int at = i;
      IOException e = assertThrows(IOException.class, () -> Manifest.decode(damaged, dir.resolve(Manifest.FILE)),
          "byte " + at);
      assertMentions(e, "MANIFEST is corrupt");
    }
  }

  @Test
  void theAcknowledgedVersionAdvancesWhileTheLogRuns() throws IOException {
    try (CommitLog log = CommitLog.open(dir, new Collected())) {
      appendEach(log, range(1, 5), LENGTH);
      assertEquals(0, Manifest.read(FileLayer.NIO, dir).acknowledgedThrough());
      log.recordAcknowledged();
      assertEquals(5, Manifest.read(FileLayer.NIO, dir).acknowledgedThrough());
      assertEquals(5, log.manifest().acknowledgedThrough());
    }
  }

  @Test
  void missingLastSegmentFailsOpen() throws IOException {
    List<Path> segments = threeSegments();
    Files.delete(segments.get(2));
    assertMentions(openFails(), segments.get(2).getFileName() + " is missing", "every version from 7");
  }

  @Test
  void missingMiddleSegmentFailsOpen() throws IOException {
    List<Path> segments = threeSegments();
    Files.delete(segments.get(1));
    assertMentions(openFails(), segments.get(1).getFileName() + " is missing", "versions 4 to 6");
  }

  @Test
  void emptiedLastSegmentFailsOpen() throws IOException {
    List<Path> segments = threeSegments();
    Files.write(segments.get(2), new byte[0]);
    assertMentions(openFails(), segments.get(2).getFileName().toString(), "no valid header", "MANIFEST lists it");
  }

  @Test
  void zeroedLastSegmentFailsOpen() throws IOException {
    List<Path> segments = threeSegments();
    Files.write(segments.get(2), new byte[(int) Files.size(segments.get(2))]);
    assertMentions(openFails(), segments.get(2).getFileName().toString(), "no valid header");
  }

  @Test
  void zeroedRecordsBehindAnIntactHeaderFailOpen() throws IOException {
    List<Path> segments = threeSegments();
    Path last = segments.get(2);
    try (FileChannel ch = FileChannel.open(last, StandardOpenOption.WRITE)) {
      ch.write(ByteBuffer.allocate((int) (Files.size(last) - LogFormat.SEGMENT_HEADER_SIZE)), LogFormat.SEGMENT_HEADER_SIZE);
    }
    assertMentions(openFails(), "ends at version 6", last.getFileName().toString(),
        "commits through version 9 were acknowledged");
  }

  @Test
  void zeroedOrEmptiedClosedSegmentFailsOpen() throws IOException {
    List<Path> segments = threeSegments();
    Path middle = segments.get(1);
    byte[] original = Files.readAllBytes(middle);
    // Its records zeroed behind the header: a gap between it and the next segment.
    byte[] zeroed = original.clone();
    java.util.Arrays.fill(zeroed, LogFormat.SEGMENT_HEADER_SIZE, zeroed.length, (byte) 0);
    Files.write(middle, zeroed);
    assertMentions(openFails(), middle.getFileName() + " ends at version 3", "run through version 6");
    // Emptied.
    Files.write(middle, new byte[0]);
    assertMentions(openFails(), middle.getFileName().toString(), "no valid header");
    // Restored, the log opens with every record.
    Files.write(middle, original);
    Collected c = new Collected();
    try (CommitLog log = CommitLog.open(dir, c)) {
      assertEquals(9, log.recoveredVersion());
    }
    assertRecords(c, range(1, 9), LENGTH);
  }

  @Test
  void lastSegmentCutBeforeAnAcknowledgedRecordFailsOpen() throws IOException {
    List<Path> segments = threeSegments();
    Path last = segments.get(2);
    try (FileChannel ch = FileChannel.open(last, StandardOpenOption.WRITE)) {
      ch.truncate(recordOffset(2, LENGTH) + 10);
    }
    assertMentions(openFails(), "ends at version 8", "through version 9 were acknowledged");
    // Had the crash come before version 9 was recorded as acknowledged, the cut is a torn tail.
    acknowledgedOnlyThrough(dir, 8);
    Collected c = new Collected();
    try (CommitLog log = CommitLog.open(dir, c)) {
      assertEquals(8, log.recoveredVersion());
    }
    assertRecords(c, range(1, 8), LENGTH);
  }

  @Test
  void damageInsideTheSecondToLastBatchIsCorruptionNotATornTail() throws IOException {
    // Batch 1: versions 1..4 written by one sync; batch 2: version 5 (written as the sync thread does).
    Path segment = dir.resolve(LogFormat.segmentName(1));
    ByteBuffer out = ByteBuffer.allocate(4096);
    out.put(LogFormat.segmentHeader(1, 1));
    for (long v = 1; v <= 5; v++) {
      LogFormat.putRecord(out, v, v <= 4 ? 1 : 2, payloadFor(v, LENGTH));
    }
    Files.write(segment, java.util.Arrays.copyOf(out.array(), out.position()));
    // The manifest would not tell (nothing recorded as acknowledged yet): only the batch order can.
    new Manifest(1, 0, List.of(new Manifest.Entry(1, -1))).write(FileLayer.NIO, dir);
    Collected intact = new Collected();
    try (CommitLog log = CommitLog.open(dir, intact)) {
      assertEquals(5, log.recoveredVersion());
    }
    assertRecords(intact, range(1, 5), LENGTH);
    new Manifest(1, 0, List.of(new Manifest.Entry(1, -1))).write(FileLayer.NIO, dir);
    assertTrue(batchOf(segment, 0) == batchOf(segment, 3) && batchOf(segment, 4) > batchOf(segment, 3),
        "versions 1-4 share a batch, version 5 is a later one");
    // Damage to version 2: versions 3 and 4 of the same batch follow intact, then the later batch.
    flipByte(segment, recordOffset(1, LENGTH) + LogFormat.RECORD_HEADER_SIZE + 3);
    assertMentions(openFails(), segment.getFileName().toString(), "corrupt at offset " + recordOffset(1, LENGTH),
        "later, fully synced batch");
  }

  private static long batchOf(Path segment, int index) throws IOException {
    try (FileChannel ch = FileChannel.open(segment, StandardOpenOption.READ)) {
      ByteBuffer b = ByteBuffer.allocate(8);
      ch.read(b, recordOffset(index, LENGTH) + 12);
      return b.getLong(0);
    }
  }

  @Test
  void anUnlistedSegmentWithRecordsFailsOpenAndAnEmptyOneIsAdopted() throws IOException {
    threeSegments();
    // A roll whose manifest update a crash cut off leaves an empty next segment: adopted.
    Path next = dir.resolve(LogFormat.segmentName(10));
    try (FileChannel ch = FileChannel.open(next, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      ch.write(LogFormat.segmentHeader(10, 100), 0);
    }
    try (CommitLog log = CommitLog.open(dir, new Collected())) {
      assertEquals(new Manifest.Entry(10, -1), log.manifest().segments().get(log.manifest().segments().size() - 1));
      appendEach(log, range(10, 11), LENGTH);
    }
    // One that holds records the manifest never listed means the manifest is older than the log.
    Manifest m = Manifest.read(FileLayer.NIO, dir);
    List<Manifest.Entry> without = new ArrayList<>(m.segments().subList(0, m.segments().size() - 1));
    without.set(without.size() - 1, new Manifest.Entry(7, -1));
    new Manifest(m.logStart(), 9, without).write(FileLayer.NIO, dir);
    assertMentions(openFails(), next.getFileName() + " holds records but is not in MANIFEST");
  }

  @Test
  void corruptOrMissingManifest() throws IOException {
    threeSegments();
    Path manifest = dir.resolve(Manifest.FILE);
    byte[] good = Files.readAllBytes(manifest);
    Files.write(manifest, java.util.Arrays.copyOf(good, good.length / 2));
    assertMentions(openFails(), manifest.toString(), "is corrupt");
    new Manifest(1, 9, List.of()).write(FileLayer.NIO, dir);
    assertMentions(openFails(), "lists no segment");
    Files.delete(manifest);
    // Whoever knows the log had one (the engine's storage records it) requires it.
    IOException e = assertThrows(IOException.class, () -> CommitLog.open(FileLayer.NIO, dir, 0, true, new Collected()));
    assertMentions(e, "has no MANIFEST");
    // Otherwise it is an older release's directory: opened, and a manifest written.
    Collected c = new Collected();
    try (CommitLog log = CommitLog.open(dir, c)) {
      assertEquals(9, log.recoveredVersion());
    }
    assertTrue(Files.exists(manifest));
  }

  @Test
  void storageOlderThanTheLogsStartFailsOpen() throws IOException {
    try (CommitLog log = CommitLog.open(dir, new Collected())) {
      appendEach(log, range(1, 3), LENGTH);
      long rolled = log.rollSegment();
      appendEach(log, range(4, 6), LENGTH);
      // The storage says it holds version 3: the log drops the segment behind it.
      log.truncateThrough(rolled);
      assertEquals(4, log.manifest().logStart());
    }
    IOException e = assertThrows(IOException.class, () -> CommitLog.open(FileLayer.NIO, dir, 0, false, new Collected()));
    assertMentions(e, "storage holds versions through 0", "starts at version 4");
    Collected c = new Collected();
    try (CommitLog log = CommitLog.open(FileLayer.NIO, dir, 3, false, c)) {
      assertEquals(6, log.recoveredVersion());
    }
    assertRecords(c, range(4, 6), LENGTH);
  }

  @Test
  void aSegmentLeftOverFromATruncationIsDeleted() throws IOException {
    Path first;
    try (CommitLog log = CommitLog.open(dir, new Collected())) {
      appendEach(log, range(1, 3), LENGTH);
      first = dir.resolve(LogFormat.segmentName(1));
      byte[] copy = Files.readAllBytes(first);
      long rolled = log.rollSegment();
      appendEach(log, range(4, 5), LENGTH);
      log.truncateThrough(rolled);
      assertFalse(Files.exists(first));
      // A crash after the manifest was written but before the deletion reached the disk.
      Files.write(first, copy);
    }
    Collected c = new Collected();
    try (CommitLog log = CommitLog.open(FileLayer.NIO, dir, 3, false, c)) {
      assertEquals(5, log.recoveredVersion());
    }
    assertFalse(Files.exists(first));
    assertRecords(c, range(4, 5), LENGTH);
  }
}
