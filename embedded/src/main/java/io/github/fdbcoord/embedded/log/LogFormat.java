package io.github.fdbcoord.embedded.log;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.zip.CRC32C;

/**
 * The on-disk format of {@link CommitLog}: file names, headers, record and snapshot-entry layouts,
 * in one place so the writer and the reader cannot drift apart. All integers are big-endian.
 *
 * <pre>
 * segment file  log-&lt;base, 20 digits&gt;.seg
 *   header  magic "FDBCLOG1" (8) | base version (8) | first batch (8) | crc32c of the previous 24 bytes (4)
 *   record  payload length (4) | version (8) | batch (8) | crc32c (4) of length, version, batch and payload | payload
 *
 * snapshot file snapshot-&lt;version, 20 digits&gt;.snap (written as ....snap.tmp, then renamed)
 *   header  magic "FDBCSNP1" (8) | version (8) | crc32c of the previous 16 bytes (4)
 *   entry   key length (4, &gt;= 0) | value length (4) | key | value | crc32c of the lengths, key and value (4)
 *   trailer -1 (4) | entry count (8) | version (8) | crc32c of all bytes before the trailer (4)
 *           | crc32c of the trailer's previous 24 bytes (4), then end of file
 * </pre>
 */
public final class LogFormat {
  static final byte[] SEGMENT_MAGIC = "FDBCLOG1".getBytes(StandardCharsets.US_ASCII);
  static final byte[] SNAPSHOT_MAGIC = "FDBCSNP1".getBytes(StandardCharsets.US_ASCII);

  public static final int SEGMENT_HEADER_SIZE = 8 + 8 + 8 + 4;
  static final int RECORD_HEADER_SIZE = 4 + 8 + 8 + 4;
  static final int SNAPSHOT_HEADER_SIZE = 8 + 8 + 4;
  static final int SNAPSHOT_TRAILER_SIZE = 4 + 8 + 8 + 4 + 4;
  static final int ENTRY_OVERHEAD = 4 + 4 + 4;

  /** Far above what the engine writes (a transaction is at most 10 MB); bounds what a corrupt length can make us read. */
  static final int MAX_PAYLOAD = 256 << 20;

  static final String SEGMENT_PREFIX = "log-";
  static final String SEGMENT_SUFFIX = ".seg";
  static final String SNAPSHOT_PREFIX = "snapshot-";
  static final String SNAPSHOT_SUFFIX = ".snap";
  static final String TEMP_SUFFIX = ".tmp";
  public static final String LOCK_FILE = "LOCK";

  private LogFormat() {}

  static String segmentName(long base) {
    return SEGMENT_PREFIX + String.format("%020d", base) + SEGMENT_SUFFIX;
  }

  static String snapshotName(long version) {
    return SNAPSHOT_PREFIX + String.format("%020d", version) + SNAPSHOT_SUFFIX;
  }

  /** The base version in a segment file name, or -1 when the name is not a segment's. */
  static long segmentBase(Path file) {
    return numberIn(file.getFileName().toString(), SEGMENT_PREFIX, SEGMENT_SUFFIX);
  }

  /** The version in a snapshot file name, or -1 when the name is not a (complete) snapshot's. */
  static long snapshotVersion(Path file) {
    return numberIn(file.getFileName().toString(), SNAPSHOT_PREFIX, SNAPSHOT_SUFFIX);
  }

  static boolean isTempSnapshot(Path file) {
    String name = file.getFileName().toString();
    return name.startsWith(SNAPSHOT_PREFIX) && name.endsWith(SNAPSHOT_SUFFIX + TEMP_SUFFIX);
  }

  private static long numberIn(String name, String prefix, String suffix) {
    if (!name.startsWith(prefix) || !name.endsWith(suffix)) {
      return -1;
    }
    String digits = name.substring(prefix.length(), name.length() - suffix.length());
    if (digits.isEmpty() || digits.length() > 20 || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
      return -1;
    }
    try {
      return Long.parseLong(digits);
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  static ByteBuffer segmentHeader(long base, long firstBatch) {
    ByteBuffer b = ByteBuffer.allocate(SEGMENT_HEADER_SIZE).order(ByteOrder.BIG_ENDIAN);
    b.put(SEGMENT_MAGIC).putLong(base).putLong(firstBatch);
    b.putInt(crc(b.array(), 0, 24));
    return b.flip();
  }

  static ByteBuffer snapshotHeader(long version) {
    ByteBuffer b = ByteBuffer.allocate(SNAPSHOT_HEADER_SIZE).order(ByteOrder.BIG_ENDIAN);
    b.put(SNAPSHOT_MAGIC).putLong(version);
    b.putInt(crc(b.array(), 0, 16));
    return b.flip();
  }

  /** Writes one record (header and payload) at the buffer's position; the buffer must have room. */
  static void putRecord(ByteBuffer out, long version, long batch, byte[] payload) {
    int start = out.position();
    out.putInt(payload.length).putLong(version).putLong(batch);
    CRC32C crc = new CRC32C();
    crc.update(out.duplicate().position(start).limit(start + 20));
    crc.update(payload);
    out.putInt((int) crc.getValue());
    out.put(payload);
  }

  /** The checksum a record with this header and payload must carry. */
  static int recordCrc(ByteBuffer headerFirst20, byte[] payload) {
    CRC32C crc = new CRC32C();
    crc.update(headerFirst20);
    crc.update(payload);
    return (int) crc.getValue();
  }

  static int crc(byte[] bytes, int off, int len) {
    CRC32C crc = new CRC32C();
    crc.update(bytes, off, len);
    return (int) crc.getValue();
  }
}
