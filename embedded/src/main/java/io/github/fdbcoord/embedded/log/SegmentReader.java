package io.github.fdbcoord.embedded.log;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Reads one segment file during recovery. Every record is checked (checksum, ascending version,
 * non-decreasing batch). What a bad record means depends on where it is:
 *
 * <ul>
 *   <li>if only zero bytes follow: the end of the records (segments are written into zero-filled,
 *       preallocated space; the zeros are trimmed on roll, close and open);
 *   <li>in a segment that is not the last one: corruption, because a segment is closed only after
 *       everything in it was fsynced; the scan fails;
 *   <li>in the last segment: a torn tail (a write that a crash cut short, never acknowledged), unless
 *       a valid record of a batch <em>later</em> than the bad record's possible batches follows it. The sync thread writes batch n+1 only after
 *       batch n's fsync returned, so such a record proves the bad bytes had been synced: corruption, the
 *       scan fails. Valid-looking records of the same batch after a bad one are possible after a crash
 *       (pages of an unsynced write reach the disk in any order) and are dropped with it.
 * </ul>
 */
public final class SegmentReader {
  interface RecordSink {
    void accept(long version, byte[] payload);
  }

  /** What a scan found. */
  static final class Result {
    /** False when the (last) segment's header was torn: the file holds nothing and must be rewritten. */
    boolean headerValid;
    long firstBatch;
    /** Offset just after the last good record (where appends continue). */
    long goodEnd;
    long records;
    /** Version of the last good record, or base - 1 when there is none. */
    long lastVersion;
    /** Batch of the last good record, or firstBatch - 1 when there is none. */
    long lastBatch;
    /** Bytes of good records with version above the snapshot version. */
    long liveBytes;
    /** Why the tail was dropped, or null when the segment ended cleanly. */
    String tornReason;
    long fileSize;
  }

  private record Rec(long version, long batch, byte[] payload, long end) {}

  private SegmentReader() {}

  /**
   * Scans {@code file}; {@code listed}: the log's manifest lists it, so its header was durable and
   * a damaged or missing header is damage, not a crash during the segment's creation.
   */
  static Result scan(FileLayer files, Path file, long base, boolean last, boolean listed, long snapshotVersion,
      RecordSink sink) throws IOException {
    try (FileLayer.OpenFile channel = files.open(file, FileLayer.Mode.READ)) {
      long size = channel.size();
      FileWindow window = new FileWindow(channel, size, 1 << 20);
      Result result = new Result();
      result.fileSize = size;
      result.lastVersion = base - 1;

      byte[] header = new byte[LogFormat.SEGMENT_HEADER_SIZE];
      String headerProblem = checkHeader(window, header, base);
      if (headerProblem != null) {
        if (listed) {
          throw new IOException("commit log segment " + file + " has no valid header (" + headerProblem + "; "
              + size + " bytes), but " + Manifest.FILE + " lists it, so its header had been made durable:"
              + " acknowledged commits from version " + base + " on would be lost");
        }
        if (last && size <= LogFormat.SEGMENT_HEADER_SIZE) {
          // The header is written and fsynced before any record, so nothing here was ever acknowledged.
          result.headerValid = false;
          result.tornReason = "torn segment header (" + headerProblem + ")";
          return result;
        }
        throw new IOException("commit log segment " + file + " is corrupt: " + headerProblem);
      }
      result.headerValid = true;
      result.firstBatch = ByteBuffer.wrap(header).getLong(16);
      result.lastBatch = result.firstBatch - 1;

      byte[] recordHeader = new byte[LogFormat.RECORD_HEADER_SIZE];
      long pos = LogFormat.SEGMENT_HEADER_SIZE;
      while (pos < size) {
        Rec rec = parse(window, pos, result.lastVersion + 1, Math.max(result.lastBatch, result.firstBatch), recordHeader);
        if (rec == null && window.nextNonZero(pos) == size) {
          // Preallocated space (or a sync that never reached the disk): the records end here.
          break;
        }
        if (rec == null) {
          String problem = describe(window, pos, result, recordHeader);
          if (!last) {
            throw new IOException("commit log segment " + file + " is corrupt at offset " + pos + " (" + problem
                + ") and it is not the last segment, so acknowledged commits would be lost");
          }
          long proof = laterBatch(window, pos, result, recordHeader);
          if (proof >= 0) {
            throw new IOException("commit log segment " + file + " is corrupt at offset " + pos + " (" + problem
                + "): a record of a later, fully synced batch follows at offset " + proof
                + ", so this is not a torn tail and acknowledged commits would be lost");
          }
          result.tornReason = problem + " at offset " + pos + ", " + (size - pos) + " bytes dropped";
          break;
        }
        result.records++;
        result.lastVersion = rec.version;
        result.lastBatch = rec.batch;
        if (rec.version > snapshotVersion) {
          result.liveBytes += rec.end - pos;
          sink.accept(rec.version, rec.payload);
        }
        pos = rec.end;
      }
      result.goodEnd = pos;
      return result;
    }
  }

  /** What {@link #readBetween} found: the last record passed on, and whether a later one stopped the read. */
  record Span(long lastVersion, boolean reachedLater) {}

  /**
   * Passes on the records of {@code file} with versions in ({@code after}, {@code through}], in order,
   * stopping at the first record above {@code through} or the first bytes that are no intact record
   * (the end of what was synced when {@code file} is the segment still being written).
   */
  static Span readBetween(FileLayer files, Path file, long base, long after, long through, RecordSink sink)
      throws IOException {
    try (FileLayer.OpenFile channel = files.open(file, FileLayer.Mode.READ)) {
      FileWindow window = new FileWindow(channel, channel.size(), 1 << 20);
      byte[] header = new byte[LogFormat.SEGMENT_HEADER_SIZE];
      String headerProblem = checkHeader(window, header, base);
      if (headerProblem != null) {
        throw new IOException("commit log segment " + file + " is corrupt: " + headerProblem);
      }
      long lastVersion = base - 1;
      long lastBatch = ByteBuffer.wrap(header).getLong(16);
      byte[] recordHeader = new byte[LogFormat.RECORD_HEADER_SIZE];
      long pos = LogFormat.SEGMENT_HEADER_SIZE;
      while (pos < window.size()) {
        Rec rec = parse(window, pos, lastVersion + 1, lastBatch, recordHeader);
        if (rec == null) {
          break;
        }
        if (rec.version > through) {
          return new Span(lastVersion, true);
        }
        if (rec.version > after) {
          sink.accept(rec.version, rec.payload);
        }
        lastVersion = rec.version;
        lastBatch = rec.batch;
        pos = rec.end;
      }
      return new Span(lastVersion, false);
    }
  }

  private static String checkHeader(FileWindow window, byte[] header, long base) throws IOException {
    if (!window.read(0, header, 0, header.length)) {
      return "file has " + window.size() + " bytes, shorter than a header";
    }
    if (!Arrays.equals(header, 0, 8, LogFormat.SEGMENT_MAGIC, 0, 8)) {
      return "bad magic";
    }
    ByteBuffer h = ByteBuffer.wrap(header);
    if (h.getInt(24) != LogFormat.crc(header, 0, 24)) {
      return "header checksum mismatch";
    }
    if (h.getLong(8) != base) {
      return "header says base version " + h.getLong(8) + " but the file name says " + base;
    }
    return null;
  }

  /** The record at pos if it is intact and fits the given lower bounds, else null. */
  private static Rec parse(FileWindow window, long pos, long minVersion, long minBatch, byte[] header)
      throws IOException {
    if (!window.read(pos, header, 0, header.length)) {
      return null;
    }
    ByteBuffer h = ByteBuffer.wrap(header);
    int length = h.getInt(0);
    long version = h.getLong(4);
    long batch = h.getLong(12);
    if (length < 0 || length > LogFormat.MAX_PAYLOAD || length > window.size() - pos - header.length
        || version < minVersion || batch < minBatch) {
      return null;
    }
    byte[] payload = new byte[length];
    window.read(pos + header.length, payload, 0, length);
    if (LogFormat.recordCrc(ByteBuffer.wrap(header, 0, 20), payload) != h.getInt(20)) {
      return null;
    }
    return new Rec(version, batch, payload, pos + header.length + length);
  }

  private static String describe(FileWindow window, long pos, Result result, byte[] header) throws IOException {
    if (!window.read(pos, header, 0, header.length)) {
      return "record header cut short";
    }
    ByteBuffer h = ByteBuffer.wrap(header);
    int length = h.getInt(0);
    if (length < 0 || length > LogFormat.MAX_PAYLOAD) {
      return "impossible record length " + length;
    }
    if (length > window.size() - pos - header.length) {
      return "record cut short";
    }
    if (h.getLong(4) <= result.lastVersion) {
      return "record version " + h.getLong(4) + " does not ascend (previous " + result.lastVersion + ")";
    }
    if (h.getLong(12) < Math.max(result.lastBatch, result.firstBatch)) {
      return "record batch " + h.getLong(12) + " goes backwards";
    }
    return "record checksum mismatch";
  }

  /**
   * Offset of an intact record after pos that proves the bad record at pos had been synced, or -1.
   * The bad record belongs to a batch between the last good record's and that of the first intact record
   * after it (file order follows batch order); a record of any batch above that one was written only after
   * the bad record's batch was synced. Damage inside a batch followed by intact records of the same batch
   * and then of a later one is therefore proven; damage at the very boundary of the last two batches
   * cannot be told from a torn final write (the manifest's acknowledged version covers that case).
   */
  private static long laterBatch(FileWindow window, long pos, Result result, byte[] header) throws IOException {
    long first = nextIntact(window, pos + 1, result.lastVersion + 1, Math.max(result.lastBatch, result.firstBatch),
        header);
    if (first < 0) {
      return -1;
    }
    window.read(first, header, 0, header.length);
    long firstBatch = ByteBuffer.wrap(header).getLong(12);
    return nextIntact(window, first, result.lastVersion + 1, firstBatch + 1, header);
  }

  /** Offset of the first intact record at or after {@code from} with at least these version and batch, or -1. */
  private static long nextIntact(FileWindow window, long from, long minVersion, long minBatch, byte[] header)
      throws IOException {
    for (long q = from; q <= window.size() - header.length; q++) {
      // A record's version (bytes 4..11) is at least 1: skip runs of zeros (preallocated space) quickly.
      long nonZero = window.nextNonZero(q + 4);
      if (nonZero >= window.size()) {
        return -1;
      }
      q = Math.max(q, nonZero - 11);
      if (parse(window, q, minVersion, minBatch, header) != null) {
        return q;
      }
    }
    return -1;
  }
}
