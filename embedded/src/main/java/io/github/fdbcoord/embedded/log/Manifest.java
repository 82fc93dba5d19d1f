package io.github.fdbcoord.embedded.log;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The commit log's record of what it holds: which segments exist, where each closed one ends, from
 * which version the log starts, and through which version commits were acknowledged. Recovery checks
 * the files against it, so a deleted, emptied or zeroed segment, a gap, or a lost acknowledged tail
 * fails the open with the file named instead of silently losing commits.
 *
 * <p>It is small text, readable in an incident, replaced atomically (written to {@code MANIFEST.tmp},
 * forced, renamed over {@code MANIFEST}, directory synced) and checked by a CRC32C line:
 *
 * <pre>
 * fdbcoord-commit-log-manifest 1
 * log-start 1042
 * acknowledged-through 98731
 * segment 1042 closed-through 50311
 * segment 50312 open
 * crc32c 1a2b3c4d
 * </pre>
 *
 * <p>When it is written: after a new segment's header is durable and before any record goes into it
 * (so a listed segment always has a valid header); before truncation deletes segments (so a listed
 * segment is never deleted on purpose); about once a second with the newest acknowledged version; at
 * open and close.
 */
public record Manifest(long logStart, long acknowledgedThrough, List<Entry> segments) {
  public static final String FILE = "MANIFEST";
  static final String TEMP_FILE = FILE + ".tmp";
  private static final String MAGIC = "fdbcoord-commit-log-manifest";
  private static final int FORMAT = 1;

  /** A listed segment: its base version and, once closed, the version of its last record (-1 while open). */
  public record Entry(long base, long closedThrough) {
    boolean closed() {
      return closedThrough >= 0;
    }
  }

  public Manifest {
    segments = List.copyOf(segments);
  }

  /** The listed segment with this base, or null. */
  Entry segment(long base) {
    for (Entry e : segments) {
      if (e.base == base) {
        return e;
      }
    }
    return null;
  }

  byte[] encode() {
    StringBuilder b = new StringBuilder();
    b.append(MAGIC).append(' ').append(FORMAT).append('\n');
    b.append("log-start ").append(logStart).append('\n');
    b.append("acknowledged-through ").append(acknowledgedThrough).append('\n');
    for (Entry e : segments) {
      b.append("segment ").append(e.base);
      if (e.closed()) {
        b.append(" closed-through ").append(e.closedThrough);
      } else {
        b.append(" open");
      }
      b.append('\n');
    }
    return ChecksummedText.seal(b.toString());
  }

  /** Parses a manifest, failing with a message that says what is wrong with {@code file}. */
  static Manifest decode(byte[] bytes, Path file) throws IOException {
    String[] lines = ChecksummedText.lines(bytes, why -> corrupt(file, why));
    if (lines.length < 3 || !lines[0].equals(MAGIC + " " + FORMAT)) {
      throw corrupt(file, "unknown header '" + (lines.length == 0 ? "" : lines[0]) + "'");
    }
    try {
      long logStart = ChecksummedText.number(lines[1], "log-start ");
      long acknowledged = ChecksummedText.number(lines[2], "acknowledged-through ");
      List<Entry> segments = new ArrayList<>();
      for (int i = 3; i < lines.length; i++) {
        String[] parts = lines[i].split(" ");
        if (parts.length == 3 && parts[0].equals("segment") && parts[2].equals("open")) {
          segments.add(new Entry(Long.parseLong(parts[1]), -1));
        } else if (parts.length == 4 && parts[0].equals("segment") && parts[2].equals("closed-through")) {
          segments.add(new Entry(Long.parseLong(parts[1]), Long.parseLong(parts[3])));
        } else {
          throw corrupt(file, "unreadable line '" + lines[i] + "'");
        }
      }
      if (segments.isEmpty()) {
        throw corrupt(file, "it lists no segment (the log always has one)");
      }
      return new Manifest(logStart, acknowledged, segments);
    } catch (NumberFormatException e) {
      throw corrupt(file, "a number is unreadable (" + e.getMessage() + ")");
    }
  }

  private static IOException corrupt(Path file, String why) {
    return new IOException("commit log manifest " + file + " is corrupt: " + why
        + "; the log's segments cannot be checked, so the directory is not opened");
  }

  /** Reads {@code dir/MANIFEST}, or returns null when there is none. */
  static Manifest read(FileLayer files, Path dir) throws IOException {
    Path file = dir.resolve(FILE);
    if (files.list(dir).stream().noneMatch(p -> p.getFileName().toString().equals(FILE))) {
      return null;
    }
    try (FileLayer.OpenFile f = files.open(file, FileLayer.Mode.READ)) {
      long size = f.size();
      if (size > (64L << 20)) {
        throw corrupt(file, "it has " + size + " bytes");
      }
      ByteBuffer buf = ByteBuffer.allocate((int) size);
      while (buf.hasRemaining()) {
        if (f.read(buf, buf.position()) < 0) {
          break;
        }
      }
      return decode(buf.array(), file);
    }
  }

  /** Replaces {@code dir/MANIFEST} with this one, durably. */
  void write(FileLayer files, Path dir) throws IOException {
    Path temp = dir.resolve(TEMP_FILE);
    try (FileLayer.OpenFile f = files.open(temp, FileLayer.Mode.CREATE_OR_TRUNCATE)) {
      f.write(ByteBuffer.wrap(encode()), 0);
      f.force(true);
    }
    files.rename(temp, dir.resolve(FILE));
    files.syncDirectory(dir);
  }
}
