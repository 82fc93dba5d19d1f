package io.github.fdbcoord.embedded.storage;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.LiveFileMetaData;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.SstFileReader;
import org.rocksdb.Status;

/**
 * The storage's files as seen before and beside an open: why an open failed (by RocksDB's status code,
 * never by words in its message), a missing {@code CURRENT}, table files a damaged MANIFEST no longer
 * lists (kept before RocksDB's open deletes them, dropped once the engine opened), and every table's checksums
 * read block by block.
 */
final class StorageFiles {
  private StorageFiles() {}

  /** RocksDB's lock file in its directory, held while a process has it open. */
  static final String ROCKSDB_LOCK_FILE = "LOCK";

  static IOException openFailure(Path dataDirectory, Path dir, RocksDBException e) {
    Status status = e.getStatus();
    Status.Code code = status == null ? null : status.getCode();
    String state = stateOf(e);
    if (code == Status.Code.IOError && state.contains(dir.resolve(ROCKSDB_LOCK_FILE).toString())) {
      // RocksDB's lock is the only I/O error naming its LOCK file: another process (or this one) has it open.
      throw new IllegalStateException("data directory " + dataDirectory + " is in use: its storage " + dir
          + " is open elsewhere (" + state + ")", e);
    }
    if (code == Status.Code.Corruption) {
      String file = namedFile(state);
      return new IOException("the engine's storage " + dir + " is damaged" + (file != null ? ": " + file : "")
          + " (RocksDB: " + state + ")", e);
    }
    return new IOException("cannot open the engine's storage " + dir + " (RocksDB " + code + "): " + state, e);
  }

  /**
   * Fails when the storage has a MANIFEST or table files but no {@code CURRENT} (which names the live
   * MANIFEST): RocksDB would take the directory for a new database.
   */
  static void refuseMissingCurrent(Path dir) throws IOException {
    if (Files.exists(dir.resolve("CURRENT"))) {
      return;
    }
    List<String> left = new ArrayList<>();
    try (var files = Files.list(dir)) {
      files.map(p -> p.getFileName().toString())
          .filter(n -> n.startsWith("MANIFEST-") || n.endsWith(".sst"))
          .sorted()
          .forEach(left::add);
    }
    if (!left.isEmpty()) {
      throw new IOException("the engine's storage " + dir + " is damaged: its CURRENT file is missing, though it holds "
          + String.join(", ", left) + " (CURRENT names the MANIFEST that lists the storage's files; restore the"
          + " data directory from a backup)");
    }
  }

  /**
   * The table files of {@code dir} that its MANIFEST does not list, linked into {@link RocksStorage#UNLISTED_DIRECTORY}
   * before RocksDB's open deletes them; empty when there are none (or no database yet).
   */
  static List<String> keepUnlistedTables(Path dataDirectory, Path dir) throws IOException {
    Set<String> present = tableFiles(dir);
    if (present.isEmpty()) {
      return List.of();
    }
    Set<String> listed = new TreeSet<>();
    for (LiveFileMetaData f : readOnly(dir, db -> db.getLiveFilesMetaData())) {
      listed.add(fileName(f.fileName()));
    }
    present.removeAll(listed);
    if (present.isEmpty()) {
      return List.of();
    }
    Path kept = dataDirectory.resolve(RocksStorage.UNLISTED_DIRECTORY);
    Files.createDirectories(kept);
    for (String name : present) {
      Files.deleteIfExists(kept.resolve(name));
      try {
        Files.createLink(kept.resolve(name), dir.resolve(name));
      } catch (UnsupportedOperationException | IOException noLinks) {
        Files.copy(dir.resolve(name), kept.resolve(name));
      }
    }
    return List.copyOf(present);
  }

  /** What {@link #keepUnlistedTables} kept of {@code dir}, as a sentence for an error that follows it, or "" when nothing. */
  static String unlistedTablesNote(Path dir, List<String> unlisted) {
    if (unlisted.isEmpty()) {
      return "";
    }
    // Also a crash's leftovers are unlisted: only a storage older than the log makes them lost data.
    return "; the storage's RocksDB MANIFEST did not list the table files " + String.join(", ", unlisted)
        + " found in " + dir + ": if the storage is older than the log says, its MANIFEST was damaged (cut or"
        + " overwritten) and lost them; copies are kept in " + dir.resolveSibling(RocksStorage.UNLISTED_DIRECTORY);
  }

  /** Deletes the copies {@link #keepUnlistedTables} kept of {@code dir}, and their directory once it is empty. */
  static void dropUnlistedTables(Path dir, List<String> unlisted) throws IOException {
    if (unlisted.isEmpty()) {
      return;
    }
    Path kept = dir.resolveSibling(RocksStorage.UNLISTED_DIRECTORY);
    for (String name : unlisted) {
      Files.deleteIfExists(kept.resolve(name));
    }
    try (var left = Files.list(kept)) {
      if (left.findAny().isEmpty()) {
        Files.delete(kept);
      }
    }
  }

  static Set<String> tableFiles(Path dir) throws IOException {
    Set<String> names = new TreeSet<>();
    try (var files = Files.list(dir)) {
      files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".sst")).forEach(names::add);
    }
    return names;
  }

  static String fileName(String rocksName) {
    return rocksName.startsWith("/") ? rocksName.substring(1) : rocksName;
  }

  /** Something done with a storage opened read-only (which neither deletes nor writes any file). */
  interface ReadOnlyUse<T> {
    T apply(RocksDB db) throws RocksDBException, IOException;
  }

  static <T> T readOnly(Path dir, ReadOnlyUse<T> use) throws IOException {
    // Only the MANIFEST is needed: no table file is opened (RocksDB would open all of them, reading each one's
    // footer and index, which at 10M keys doubled the time of the engine's open).
    try (Options listing = new Options(); ColumnFamilyOptions family = new ColumnFamilyOptions();
        DBOptions options = new DBOptions().setMaxOpenFiles(16).setSkipStatsUpdateOnDbOpen(true)
            .setSkipCheckingSstFileSizesOnDbOpen(true)) {
      List<ColumnFamilyDescriptor> families = new ArrayList<>();
      for (byte[] name : RocksDB.listColumnFamilies(listing, dir.toString())) {
        families.add(new ColumnFamilyDescriptor(name, family));
      }
      List<ColumnFamilyHandle> handles = new ArrayList<>();
      try (RocksDB db = RocksDB.openReadOnly(options, dir.toString(), families, handles)) {
        try {
          return use.apply(db);
        } finally {
          handles.forEach(ColumnFamilyHandle::close);
        }
      }
    } catch (RocksDBException e) {
      throw openFailure(dir.getParent(), dir, e);
    }
  }

  /**
   * Reads every block of every table file the storage in {@code dir} lists and checks its checksum: one line
   * per damaged file, naming it (empty when none is). The storage must not be open for writing meanwhile.
   */
  static List<String> verifyTables(Path dir) throws IOException {
    List<String> files = readOnly(dir, db -> {
      List<String> names = new ArrayList<>();
      for (LiveFileMetaData f : db.getLiveFilesMetaData()) {
        names.add(fileName(f.fileName()));
      }
      return names;
    });
    List<String> damaged = new ArrayList<>();
    for (String name : new TreeSet<>(files)) {
      String problem = verifyTable(dir.resolve(name));
      if (problem != null) {
        damaged.add(dir.resolve(name) + ": " + problem);
      }
    }
    return damaged;
  }

  /**
   * Why the table file {@code file} is damaged (RocksDB's description), or null when every block's checksum
   * matches or the file is gone (a compaction deleted it since it was listed).
   */
  static String verifyTable(Path file) {
    try (Options options = new Options(); SstFileReader reader = new SstFileReader(options)) {
      reader.open(file.toString());
      reader.verifyChecksum();
      return null;
    } catch (RocksDBException e) {
      Status status = e.getStatus();
      if (status != null && status.getCode() == Status.Code.IOError && !Files.exists(file)) {
        return null;
      }
      return stateOf(e);
    }
  }

  static String stateOf(RocksDBException e) {
    Status status = e.getStatus();
    return status != null && status.getState() != null ? status.getState() : String.valueOf(e.getMessage());
  }

  private static final Pattern TABLE_FILE = Pattern.compile("[^\\s:]+\\.sst");

  /** The table file a RocksDB status message names, or null. */
  static String namedFile(String state) {
    Matcher m = TABLE_FILE.matcher(state);
    return m.find() ? m.group() : null;
  }
}
