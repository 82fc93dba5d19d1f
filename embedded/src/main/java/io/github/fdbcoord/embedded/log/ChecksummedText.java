package io.github.fdbcoord.embedded.log;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.function.Function;

/**
 * Small ASCII files that can be read in an incident and still be checked: lines, then a last line
 * {@code crc32c <8 hex digits>} over every byte before it. The log's {@link Manifest} and a backup's
 * file list are written so.
 */
public final class ChecksummedText {
  private static final String CRC_PREFIX = "crc32c ";

  private ChecksummedText() {}

  /** {@code body} (lines ending in '\n') followed by its checksum line. */
  public static byte[] seal(String body) {
    byte[] bytes = body.getBytes(StandardCharsets.US_ASCII);
    return (body + String.format("%s%08x\n", CRC_PREFIX, LogFormat.crc(bytes, 0, bytes.length)))
        .getBytes(StandardCharsets.US_ASCII);
  }

  /**
   * The lines before the checksum line, once it checks out; otherwise the exception {@code corrupt}
   * makes of what is wrong.
   */
  public static String[] lines(byte[] bytes, Function<String, IOException> corrupt) throws IOException {
    String text = new String(bytes, StandardCharsets.US_ASCII);
    int crcLine = text.lastIndexOf(CRC_PREFIX);
    if (crcLine < 0 || !text.endsWith("\n")) {
      throw corrupt.apply(bytes.length == 0 ? "the file is empty" : "it has no checksum line (cut short?)");
    }
    long expected;
    try {
      expected = Long.parseLong(text.substring(crcLine + CRC_PREFIX.length(), text.length() - 1).trim(), 16);
    } catch (NumberFormatException e) {
      throw corrupt.apply("its checksum line is unreadable");
    }
    if ((LogFormat.crc(bytes, 0, crcLine) & 0xffffffffL) != expected) {
      throw corrupt.apply("checksum mismatch");
    }
    return text.substring(0, crcLine).split("\n");
  }

  /** The number after {@code prefix} on {@code line}; NumberFormatException naming the line otherwise. */
  public static long number(String line, String prefix) {
    if (!line.startsWith(prefix)) {
      throw new NumberFormatException("expected '" + prefix.trim() + "', found '" + line + "'");
    }
    return Long.parseLong(line.substring(prefix.length()));
  }
}
