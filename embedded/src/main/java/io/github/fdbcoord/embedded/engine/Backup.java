package io.github.fdbcoord.embedded.engine;

import io.github.fdbcoord.embedded.log.ChecksummedText;
import io.github.fdbcoord.embedded.log.CommitLog;
import io.github.fdbcoord.embedded.log.FileLayer;
import io.github.fdbcoord.embedded.log.Manifest;
import io.github.fdbcoord.embedded.storage.RocksStorage;

import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import java.util.zip.CRC32C;

/**
 * Online backups of a durable engine, and their restore into a new data directory.
 *
 * <p>A backup directory is a data directory plus a list of its files: a RocksDB checkpoint of the
 * storage ({@code storage/}, its files hard-linked when on the same file system), a commit log of one
 * segment holding the records after the checkpoint's version through the backup's version, with its
 * {@code MANIFEST}, and {@value #FILE}, written last, which lists every file with its size and CRC32C.
 * A directory without {@value #FILE} is a backup that did not finish, and restore refuses it.
 */
public final class Backup {
  private static final Logger LOG = LoggerFactory.getLogger(Backup.class);
  /** The list of a backup's files, written last. */
  public static final String FILE = "BACKUP";
  private static final String TEMP_FILE = FILE + ".tmp";
  private static final String MAGIC = "fdbcoord-backup 1";

  /** A finished backup or restore: the state at {@code version}, in {@code files} files of {@code bytes} bytes. */
  public record Result(Path directory, long version, long bytes, int files, long nanos) {}

  private record Listed(long size, long crc) {}

  private record Contents(long version, long storageVersion, Map<String, Listed> files) {}

  private Backup() {}

  /**
   * The directory a backup may be written to, created: absolute, empty or missing, and neither inside
   * the data directory nor inside the storage's.
   *
   * @throws IllegalArgumentException naming what is wrong with {@code target}
   */
  static Path prepareTarget(Path target, EngineConfig config) throws IOException {
    Path t = target.toAbsolutePath().normalize();
    if (Files.exists(t, LinkOption.NOFOLLOW_LINKS) && !isEmptyDirectory(t)) {
      throw new IllegalArgumentException("the backup directory " + t + " exists and is not an empty directory");
    }
    Path real = realPathOfNearest(t);
    for (Path dir : List.of(config.dataDirectory(), config.storageDirectory())) {
      Path d = dir.toRealPath();
      if (real.startsWith(d)) {
        throw new IllegalArgumentException("the backup directory " + t + " is inside the data directory " + d
            + ": choose one outside it (the engine owns every file there)");
      }
    }
    Files.createDirectories(t);
    return t;
  }

  /** The real path of {@code p}'s nearest existing ancestor, with the rest of {@code p} appended. */
  private static Path realPathOfNearest(Path p) throws IOException {
    Path existing = p;
    while (existing != null && !Files.exists(existing)) {
      existing = existing.getParent();
    }
    if (existing == null) {
      return p;
    }
    return existing.toRealPath().resolve(existing.relativize(p));
  }

  private static boolean isEmptyDirectory(Path dir) throws IOException {
    if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
      return false;
    }
    try (Stream<Path> s = Files.list(dir)) {
      return s.findAny().isEmpty();
    }
  }

  /**
   * Writes the backup of {@code storage} and {@code log} into the empty directory {@code target}: the
   * state at {@code acknowledged} (every commit up to it synced) or later.
   */
  static Result write(Path target, long acknowledged, CommitLog log, RocksStorage storage) {
    long started = System.nanoTime();
    try {
      Path storageCopy = target.resolve(RocksStorage.DIRECTORY);
      CommitLog.CopiedTail tail = log.copyForBackup(target, () -> {
        long before = storage.durableVersion();
        // The checkpoint holds what RocksDB's files hold: everything up to `before` must be in them.
        storage.flush();
        storage.checkpoint(storageCopy);
        return before;
      }, () -> Math.max(acknowledged, storage.applyingVersion()));
      long copiedNanos = System.nanoTime() - started;
      Map<String, Listed> files = new TreeMap<>();
      long bytes = 0;
      for (Path file : filesUnder(target)) {
        String name = relativeName(target, file);
        if (name.equals(FILE) || name.equals(TEMP_FILE)) {
          continue;
        }
        try (FileChannel c = FileChannel.open(file, StandardOpenOption.READ)) {
          // The checkpoint's hard links share blocks the storage synced; its copied files may not be.
          c.force(true);
        }
        Listed listed = new Listed(Files.size(file), crcOf(file));
        files.put(name, listed);
        bytes += listed.size;
      }
      for (Path dir : directoriesUnder(target)) {
        FileLayer.NIO.syncDirectory(dir);
      }
      Contents contents = new Contents(tail.version(), tail.storageVersion(), files);
      Path temp = target.resolve(TEMP_FILE);
      Files.write(temp, encode(contents), StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
          StandardOpenOption.DSYNC);
      Files.move(temp, target.resolve(FILE), StandardCopyOption.ATOMIC_MOVE);
      FileLayer.NIO.syncDirectory(target);
      long nanos = System.nanoTime() - started;
      LOG.info(String.format(Locale.ROOT, "embedded engine: backup at version %d written to %s in %d ms (checkpoint"
          + " and log copy %d ms, then fsyncs and checksums): %d files, %d bytes (storage from version %d, log records"
          + " through %d)", tail.version(), target, nanos / 1_000_000, copiedNanos / 1_000_000, files.size(), bytes,
          tail.storageVersion(), tail.lastRecord()));
      return new Result(target, tail.version(), bytes, files.size(), nanos);
    } catch (IOException e) {
      deleteContents(target);
      throw new UncheckedIOException("the backup into " + target + " failed: " + e.getMessage(), e);
    } catch (RuntimeException e) {
      deleteContents(target);
      throw e;
    }
  }

  /**
   * Makes {@code dataDirectory} (missing or empty) a data directory holding exactly the state the
   * backup in {@code backup} holds, after checking every file of it against its {@value #FILE} list. The
   * log's manifest is written last, so a restore cut short leaves a directory that fails to open
   * rather than one that opens with data missing.
   *
   * @throws IOException naming the file when the backup is incomplete or damaged (nothing is left in
   *     {@code dataDirectory} then), or {@code dataDirectory} is not empty
   */
  public static Result restore(Path backup, Path dataDirectory) throws IOException {
    long started = System.nanoTime();
    Path source = backup.toAbsolutePath().normalize();
    Path target = dataDirectory.toAbsolutePath().normalize();
    if (!Files.isDirectory(source)) {
      throw new NoSuchFileException(source.toString(), null, "the backup directory does not exist");
    }
    Contents contents = read(source);
    Map<String, Listed> unlisted = new TreeMap<>();
    for (Path file : filesUnder(source)) {
      String name = relativeName(source, file);
      if (!name.equals(FILE) && !contents.files.containsKey(name)) {
        unlisted.put(name, null);
      }
    }
    if (!unlisted.isEmpty()) {
      throw new IOException("backup " + source + " holds files its " + FILE + " does not list, e.g. "
          + unlisted.keySet().iterator().next() + ": it was changed after it was written, so it is not restored");
    }
    for (String name : contents.files.keySet()) {
      if (!Files.isRegularFile(source.resolve(name))) {
        throw new IOException("backup " + source + " is damaged: " + name + " is missing (" + FILE + " lists it)");
      }
    }
    if (Files.exists(target, LinkOption.NOFOLLOW_LINKS) && !isEmptyDirectory(target)) {
      throw new IOException("cannot restore into " + target + ": it exists and is not an empty directory");
    }
    Map<String, Listed> ordered = new LinkedHashMap<>();
    contents.files.forEach((name, listed) -> {
      if (!name.equals(Manifest.FILE)) {
        ordered.put(name, listed);
      }
    });
    if (contents.files.containsKey(Manifest.FILE)) {
      ordered.put(Manifest.FILE, contents.files.get(Manifest.FILE));
    }
    Files.createDirectories(target);
    long bytes = 0;
    try {
      for (Map.Entry<String, Listed> e : ordered.entrySet()) {
        Path from = source.resolve(e.getKey());
        Path to = target.resolve(e.getKey());
        Files.createDirectories(to.getParent());
        copyChecked(from, to, e.getValue(), source, e.getKey());
        bytes += e.getValue().size;
      }
      for (Path dir : directoriesUnder(target)) {
        FileLayer.NIO.syncDirectory(dir);
      }
    } catch (IOException | RuntimeException e) {
      deleteContents(target);
      throw e;
    }
    long nanos = System.nanoTime() - started;
    LOG.info(String.format(Locale.ROOT, "embedded engine: backup %s (version %d) restored into %s in %d ms", source,
        contents.version, target, nanos / 1_000_000));
    return new Result(target, contents.version, bytes, ordered.size(), nanos);
  }

  /** Copies {@code from} to {@code to} (new), checking its size and checksum on the way, and syncs it. */
  private static void copyChecked(Path from, Path to, Listed listed, Path backup, String name) throws IOException {
    CRC32C crc = new CRC32C();
    long size = 0;
    try (FileChannel in = FileChannel.open(from, StandardOpenOption.READ);
        FileChannel out = FileChannel.open(to, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      ByteBuffer buffer = ByteBuffer.allocateDirect(1 << 20);
      while (in.read(buffer) >= 0) {
        buffer.flip();
        crc.update(buffer.duplicate());
        size += buffer.remaining();
        while (buffer.hasRemaining()) {
          out.write(buffer);
        }
        buffer.clear();
      }
      out.force(true);
    }
    if (size != listed.size || crc.getValue() != listed.crc) {
      throw new IOException("backup " + backup + " is damaged: " + name + " has " + size + " bytes with CRC32C "
          + hex(crc.getValue()) + " but " + FILE + " lists " + listed.size + " bytes with CRC32C " + hex(listed.crc));
    }
  }

  private static Contents read(Path backup) throws IOException {
    Path file = backup.resolve(FILE);
    if (!Files.isRegularFile(file)) {
      throw new IOException("backup " + backup + " is incomplete: it has no " + FILE + " file, which a backup writes"
          + " last (the backup did not finish, or this is not a backup directory)");
    }
    String[] lines = ChecksummedText.lines(Files.readAllBytes(file), why -> corrupt(file, why));
    if (lines.length < 4 || !lines[0].equals(MAGIC)) {
      throw corrupt(file, "unknown header '" + (lines.length == 0 ? "" : lines[0]) + "'");
    }
    try {
      long version = ChecksummedText.number(lines[1], "version ");
      long storageVersion = ChecksummedText.number(lines[2], "storage-version ");
      Map<String, Listed> files = new TreeMap<>();
      for (int i = 4; i < lines.length; i++) {
        String[] parts = lines[i].split(" ", 4);
        if (parts.length != 4 || !parts[0].equals("file") || parts[3].contains("..") || parts[3].startsWith("/")) {
          throw corrupt(file, "unreadable line '" + lines[i] + "'");
        }
        files.put(parts[3], new Listed(Long.parseLong(parts[1]), Long.parseLong(parts[2], 16)));
      }
      return new Contents(version, storageVersion, files);
    } catch (NumberFormatException e) {
      throw corrupt(file, "a number is unreadable (" + e.getMessage() + ")");
    }
  }

  private static IOException corrupt(Path file, String why) {
    return new IOException("backup list " + file + " is corrupt: " + why + "; the backup's files cannot be checked,"
        + " so it is not restored");
  }

  private static byte[] encode(Contents contents) {
    StringBuilder b = new StringBuilder();
    b.append(MAGIC).append('\n');
    b.append("version ").append(contents.version).append('\n');
    b.append("storage-version ").append(contents.storageVersion).append('\n');
    b.append("created ").append(Instant.now()).append('\n');
    contents.files.forEach((name, listed) -> b.append("file ").append(listed.size).append(' ')
        .append(hex(listed.crc)).append(' ').append(name).append('\n'));
    return ChecksummedText.seal(b.toString());
  }

  private static String hex(long crc) {
    return String.format(Locale.ROOT, "%08x", crc);
  }

  private static long crcOf(Path file) throws IOException {
    CRC32C crc = new CRC32C();
    try (FileChannel c = FileChannel.open(file, StandardOpenOption.READ)) {
      ByteBuffer buffer = ByteBuffer.allocateDirect(1 << 20);
      while (c.read(buffer) >= 0) {
        crc.update(buffer.flip());
        buffer.clear();
      }
    }
    return crc.getValue();
  }

  private static String relativeName(Path root, Path file) {
    return root.relativize(file).toString().replace(file.getFileSystem().getSeparator(), "/");
  }

  private static List<Path> filesUnder(Path root) throws IOException {
    try (Stream<Path> s = Files.walk(root)) {
      return s.filter(p -> Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)).sorted().toList();
    }
  }

  private static List<Path> directoriesUnder(Path root) throws IOException {
    try (Stream<Path> s = Files.walk(root)) {
      List<Path> dirs = new ArrayList<>(s.filter(p -> Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)).toList());
      // Deepest first, so that each directory's entry in its parent is synced after its own contents.
      dirs.sort(Comparator.comparingInt(Path::getNameCount).reversed());
      return dirs;
    }
  }

  private static void deleteContents(Path root) {
    try (Stream<Path> s = Files.walk(root)) {
      for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
        if (!p.equals(root)) {
          Files.deleteIfExists(p);
        }
      }
    } catch (IOException e) {
      LOG.warn("embedded engine: removing what a failed backup or restore left in " + root + " failed: " + e.getMessage());
    }
  }
}
