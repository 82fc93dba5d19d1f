package io.github.fdbcoord.embedded.log;

import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;
import java.io.IOException;
import java.nio.file.Path;
import java.text.MessageFormat;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Recovery of a commit log directory at open. The newest snapshot that checks out completely is loaded
 * (an incomplete or corrupt one is skipped with a warning, and the previous snapshot plus the segments are
 * used, because segments are deleted only after a newer snapshot is durable). Then records with versions
 * above the snapshot's (or the storage's) are replayed in order. A bad record in a segment other than the
 * last, or one followed by a later fully synced batch, fails the open with an {@link IOException}: it is
 * corruption of acknowledged commits, not a crash artefact. A bad tail of the last segment was never
 * acknowledged: it is dropped and the file truncated. The segment files are checked against the
 * {@link Manifest} when there is one.
 */
final class LogRecovery {
  private static final Logger LOG = LoggerFactory.getLogger(LogRecovery.class);

  private LogRecovery() {}

  /** What recovery found: the state the writer continues from. */
  static final class Recovered {
    /** Highest version recovered (snapshot, storage or record). */
    long version;
    long snapshotVersion;
    long liveBytes;
    long nextBatch = 1;
    List<LogSegments.Segment> segments = new ArrayList<>();
    /** Segments whose records the storage or a snapshot already holds. */
    List<Path> covered = new ArrayList<>();
    /** The last segment, open for appending, and the end of its records. */
    FileLayer.OpenFile channel;
    long writePos;
  }

  /**
   * Replays what {@code dir} holds above {@code durableVersion} (the caller's storage holds the rest) into
   * {@code replay}, drops a torn tail of the last segment and opens it for appending (creating the first
   * segment of an empty log). Deletes unfinished snapshots and legacy snapshots the storage holds; the
   * segments it covers are returned in {@link Recovered#covered}, for the caller to delete once a manifest
   * without them is durable.
   */
  static Recovered recover(FileLayer files, Path dir, long durableVersion, boolean requireManifest,
      CommitLog.Replay replay) throws IOException {
    // Whatever a previous process left in the directory's page cache must be durable before we act on it.
    files.syncDirectory(dir);
    List<Path> segmentFiles = new ArrayList<>();
    List<Path> snapshotFiles = new ArrayList<>();
    for (Path p : files.list(dir)) {
      if (LogFormat.isTempSnapshot(p)) {
        LOG.info(MessageFormat.format("commit log {0}: deleting unfinished snapshot {1}", dir, p.getFileName()));
        files.deleteIfExists(p);
      } else if (LogFormat.segmentBase(p) >= 0) {
        segmentFiles.add(p);
      } else if (LogFormat.snapshotVersion(p) >= 0) {
        snapshotFiles.add(p);
      }
    }
    segmentFiles.sort(Comparator.comparingLong(LogFormat::segmentBase));
    snapshotFiles.sort(Comparator.comparingLong(LogFormat::snapshotVersion).reversed());
    Manifest manifest = Manifest.read(files, dir);
    if (manifest == null && requireManifest) {
      throw new IOException("commit log " + dir + " has no " + Manifest.FILE + ", though its storage records that it"
          + " had one: the log's segments cannot be checked, so the directory is not opened");
    }
    if (manifest != null) {
      segmentFiles = checkAgainstManifest(files, dir, manifest, segmentFiles);
    }

    Recovered r = new Recovered();
    for (Path p : snapshotFiles) {
      long v = LogFormat.snapshotVersion(p);
      if (v <= durableVersion) {
        // A legacy snapshot the storage already holds (a migration that stopped before deleting it).
        files.deleteIfExists(p);
        continue;
      }
      String problem = SnapshotFile.read(files, p, v, null);
      if (problem == null) {
        r.snapshotVersion = v;
        problem = SnapshotFile.read(files, p, v, replay);
        if (problem != null) {
          throw new IOException("snapshot " + p + " changed while it was being recovered: " + problem);
        }
        replay.snapshotLoaded(v);
        break;
      }
      LOG.warn(MessageFormat.format("commit log {0}: ignoring snapshot {1}: {2}", dir, p.getFileName(), problem));
    }
    long s = Math.max(r.snapshotVersion, durableVersion);
    r.version = s;
    if (manifest != null && s < manifest.logStart() - 1) {
      throw new IOException("commit log " + dir + ": the storage holds versions through " + s + " but the log"
          + " starts at version " + manifest.logStart() + " (" + Manifest.FILE + "): versions " + (s + 1) + " to "
          + (manifest.logStart() - 1) + " are in neither; was the storage replaced or restored from an older copy?");
    }

    // A segment is covered when the next one starts at or below snapshot + 1: all its versions are <= s.
    int firstNeeded = 0;
    while (firstNeeded < segmentFiles.size() - 1 && LogFormat.segmentBase(segmentFiles.get(firstNeeded + 1)) <= s + 1) {
      firstNeeded++;
    }
    // Deleted once a manifest without them is durable (a listed segment is never missing on purpose).
    r.covered.addAll(segmentFiles.subList(0, firstNeeded));
    List<Path> needed = segmentFiles.subList(firstNeeded, segmentFiles.size());
    if (!needed.isEmpty() && LogFormat.segmentBase(needed.get(0)) > s + 1) {
      throw new IOException("commit log " + dir + " is missing records: " + (s == 0 ? "no snapshot" : "the snapshot is at version " + s)
          + " but the oldest segment " + needed.get(0).getFileName() + " starts at version "
          + LogFormat.segmentBase(needed.get(0)));
    }

    long liveBytes = 0;
    for (int i = 0; i < needed.size(); i++) {
      Path p = needed.get(i);
      long base = LogFormat.segmentBase(p);
      boolean last = i == needed.size() - 1;
      if (i > 0 && r.version + 1 != base) {
        throw new IOException("commit log " + dir + " is missing records: segment " + needed.get(i - 1).getFileName()
            + " ends at version " + r.version + " but the next one is " + p.getFileName());
      }
      Manifest.Entry listed = manifest == null ? null : manifest.segment(base);
      SegmentReader.Result scan = SegmentReader.scan(files, p, base, last, listed != null, s, replay::record);
      if (listed != null && listed.closed() && scan.lastVersion != listed.closedThrough()) {
        throw new IOException("commit log segment " + p + " ends at version " + scan.lastVersion + " but "
            + Manifest.FILE + " records that its records run through version " + listed.closedThrough()
            + ": acknowledged commits are missing from it");
      }
      if (listed == null && manifest != null && scan.records > 0) {
        throw new IOException("commit log segment " + p + " holds records but is not in " + Manifest.FILE
            + ", which is older than the log: the log cannot be checked, so the directory is not opened");
      }
      liveBytes += scan.liveBytes;
      r.version = Math.max(r.version, scan.lastVersion);
      r.nextBatch = Math.max(r.nextBatch, Math.max(scan.lastBatch + 1, scan.firstBatch));
      LogSegments.Segment segment = new LogSegments.Segment(p, base, scan.lastVersion, scan.records);
      segment.closed = !last;
      r.segments.add(segment);
      if (last) {
        r.channel = openLast(files, dir, p, base, scan, r.nextBatch);
        r.writePos = r.channel.size();
      }
    }
    if (needed.isEmpty()) {
      long base = s + 1;
      Path p = dir.resolve(LogFormat.segmentName(base));
      r.channel = files.open(p, FileLayer.Mode.CREATE_NEW);
      r.channel.write(LogFormat.segmentHeader(base, r.nextBatch), 0);
      r.channel.force(true);
      files.syncDirectory(dir);
      r.writePos = LogFormat.SEGMENT_HEADER_SIZE;
      r.segments.add(new LogSegments.Segment(p, base, base - 1, 0));
    }
    if (manifest != null && r.version < manifest.acknowledgedThrough()) {
      Path lastFile = needed.isEmpty() ? dir : needed.get(needed.size() - 1);
      throw new IOException("commit log " + dir + " ends at version " + r.version + " (in " + lastFile.getFileName()
          + ") but " + Manifest.FILE + " records that commits through version " + manifest.acknowledgedThrough()
          + " were acknowledged: the end of the log is missing or damaged");
    }
    r.liveBytes = liveBytes;
    return r;
  }

  /**
   * Checks the segment files against the manifest: every listed segment must exist; unlisted ones below
   * the log's start are leftovers of a truncation (deleted); an unlisted one after the listed ones is
   * allowed only as a segment started by a roll whose manifest update a crash cut off (it holds no record,
   * checked when it is read). Returns the segment files to recover from.
   */
  private static List<Path> checkAgainstManifest(FileLayer files, Path dir, Manifest manifest, List<Path> segmentFiles)
      throws IOException {
    List<Path> kept = new ArrayList<>();
    long lastListed = manifest.segments().get(manifest.segments().size() - 1).base();
    for (Manifest.Entry e : manifest.segments()) {
      Path expected = dir.resolve(LogFormat.segmentName(e.base()));
      if (segmentFiles.stream().noneMatch(p -> p.getFileName().equals(expected.getFileName()))) {
        throw new IOException("commit log segment " + expected + " is missing: " + Manifest.FILE + " lists it, with "
            + (e.closed() ? "versions " + e.base() + " to " + e.closedThrough() : "every version from " + e.base())
            + "; acknowledged commits would be lost");
      }
    }
    for (Path p : segmentFiles) {
      long base = LogFormat.segmentBase(p);
      if (manifest.segment(base) != null || base > lastListed) {
        kept.add(p);
      } else if (base < manifest.logStart()) {
        LOG.info(MessageFormat.format("commit log {0}: deleting {1}, left over from a truncation", dir, p.getFileName()));
        files.deleteIfExists(p);
      } else {
        throw new IOException("commit log segment " + p + " is not in " + Manifest.FILE + " but lies inside the log it"
            + " describes: the log cannot be checked, so the directory is not opened");
      }
    }
    return kept;
  }

  /** Opens the last segment for appending, cutting off a torn tail or rewriting a torn header. */
  private static FileLayer.OpenFile openLast(FileLayer files, Path dir, Path p, long base, SegmentReader.Result scan,
      long nextBatch) throws IOException {
    FileLayer.OpenFile channel = files.open(p, FileLayer.Mode.WRITE);
    try {
      if (scan.tornReason != null) {
        LOG.warn(MessageFormat.format("commit log {0}: dropping the torn tail of {1}: {2}", dir,
            p.getFileName(), scan.tornReason));
      }
      if (!scan.headerValid) {
        channel.truncate(0);
        channel.write(LogFormat.segmentHeader(base, nextBatch), 0);
        channel.force(true);
      } else if (scan.goodEnd < scan.fileSize) {
        channel.truncate(scan.goodEnd);
        channel.force(true);
      }
      return channel;
    } catch (IOException | RuntimeException e) {
      channel.close();
      throw e;
    }
  }
}
