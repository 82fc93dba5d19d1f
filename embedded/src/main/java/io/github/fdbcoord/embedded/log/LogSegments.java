package io.github.fdbcoord.embedded.log;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The commit log's segments, oldest first, and the {@link Manifest} that lists them. The group-commit
 * writer adds and closes segments and records what it synced; compaction deletes closed ones. Thread-safe.
 */
final class LogSegments {
  /** One segment file: every record in it has a version >= base. */
  static final class Segment {
    final Path path;
    final long base;
    /** Version of the last record synced to it, base - 1 when it has none. */
    long lastVersion;
    long records;
    boolean closed;

    Segment(Path path, long base, long lastVersion, long records) {
      this.path = path;
      this.base = base;
      this.lastVersion = lastVersion;
      this.records = records;
    }
  }

  private final FileLayer files;
  private final Path dir;
  /** Guarded by itself. */
  private final List<Segment> segments;
  /** Serialises manifest writes; holds the last one written. */
  private final Object manifestLock = new Object();
  private Manifest manifest;
  /** Version of the newest synced record (or the recovered version): what the manifest may call acknowledged. */
  private volatile long syncedVersion;

  LogSegments(FileLayer files, Path dir, List<Segment> recovered, long recoveredVersion) {
    this.files = files;
    this.dir = dir;
    this.segments = new ArrayList<>(recovered);
    this.syncedVersion = recoveredVersion;
  }

  /** The segment appended to. */
  Segment last() {
    synchronized (segments) {
      return segments.get(segments.size() - 1);
    }
  }

  /** A copy of the segments as they are now, oldest first (what each holds may grow after). */
  List<Segment> copy() {
    synchronized (segments) {
      List<Segment> out = new ArrayList<>(segments.size());
      for (Segment s : segments) {
        Segment c = new Segment(s.path, s.base, s.lastVersion, s.records);
        c.closed = s.closed;
        out.add(c);
      }
      return out;
    }
  }

  /** Records that {@code count} more records of {@code current}, through {@code lastVersion}, are synced. */
  void recordSynced(Segment current, long lastVersion, long count) {
    synchronized (segments) {
      current.lastVersion = lastVersion;
      current.records += count;
    }
    syncedVersion = lastVersion;
  }

  /** Closes {@code current} (synced and trimmed) and makes {@code next} (its header durable) the one appended to. */
  void startNext(Segment current, Segment next) {
    synchronized (segments) {
      current.closed = true;
      segments.add(next);
    }
  }

  /**
   * Deletes the closed segments whose records are all at or below {@code version}: first out of the
   * manifest, then from the disk, so that a listed segment is never missing on purpose. Returns how many.
   */
  int deleteCovered(long version) throws IOException {
    List<Segment> covered = new ArrayList<>();
    synchronized (segments) {
      for (Segment s : segments) {
        if (s.closed && s.lastVersion <= version) {
          covered.add(s);
        }
      }
      segments.removeAll(covered);
    }
    if (covered.isEmpty()) {
      return 0;
    }
    writeManifest();
    // Ascending, so a crash part-way leaves a contiguous suffix (recovery deletes unlisted leftovers).
    for (Segment s : covered) {
      files.deleteIfExists(s.path);
    }
    return covered.size();
  }

  /** The manifest as last written. */
  Manifest manifest() {
    synchronized (manifestLock) {
      return manifest;
    }
  }

  /** Writes the manifest for the current segments and synced version, unless it would say nothing new. */
  void writeManifest() throws IOException {
    synchronized (manifestLock) {
      List<Manifest.Entry> entries = new ArrayList<>();
      synchronized (segments) {
        for (Segment s : segments) {
          entries.add(new Manifest.Entry(s.base, s.closed ? s.lastVersion : -1));
        }
      }
      Manifest next = new Manifest(entries.get(0).base(), syncedVersion, entries);
      if (next.equals(manifest)) {
        return;
      }
      next.write(files, dir);
      manifest = next;
    }
  }
}
