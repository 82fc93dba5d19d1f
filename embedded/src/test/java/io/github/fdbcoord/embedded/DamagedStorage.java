package io.github.fdbcoord.embedded;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Stream;
import org.rocksdb.Options;
import org.rocksdb.RocksDBException;
import org.rocksdb.SstFileReader;

/**
 * Durable stores written through the engine and damaged afterwards as the audit of issue 23 damaged them: a
 * few bytes flipped inside the data blocks of a RocksDB table file (whose footer and index stay intact, so
 * RocksDB opens it), a table file damaged near its end, a MANIFEST cut in half, a deleted CURRENT.
 */
public final class DamagedStorage {
  /** The range every key {@link #key} makes lies in. */
  public static final byte[] BEGIN = "damage/".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
  public static final byte[] END = "damage0".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

  private DamagedStorage() {}

  /** A copy of the data directory {@code pristine} in {@code parent}, for one test to damage. */
  public static Path copyOf(Path pristine, Path parent) throws IOException {
    Path d = parent.resolve("data");
    copy(pristine, d);
    return d;
  }

  public static byte[] key(int i) {
    return String.format("damage/%08d", i).getBytes(java.nio.charset.StandardCharsets.US_ASCII);
  }

  /** Writes {@code keys} keys with 100-byte random values (so that they fill several MiB of data blocks), closes cleanly. */
  public static void write(Path dir, int keys) {
    write(dir, 0, keys);
  }

  /** Writes keys {@code first} to {@code end} (exclusive) as {@link #write(Path, int)} does: one more table file. */
  public static void write(Path dir, int first, int end) {
    try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.durable(dir))) {
      for (int i = first; i < end; i += 20_000) {
        int from = i;
        db.run(tr -> {
          byte[] value = new byte[100];
          for (int k = from; k < Math.min(end, from + 20_000); k++) {
            ThreadLocalRandom.current().nextBytes(value);
            tr.set(key(k), value.clone());
          }
          return null;
        });
      }
    }
  }

  /** The storage's table files holding more than {@code minBytes}, largest first. */
  public static java.util.List<Path> tables(Path dir, long minBytes) throws IOException {
    try (Stream<Path> files = Files.list(dir.resolve("storage"))) {
      return files.filter(p -> p.toString().endsWith(".sst") && p.toFile().length() > minBytes)
          .sorted(Comparator.comparingLong((Path p) -> p.toFile().length()).reversed())
          .toList();
    }
  }

  /** The storage's largest table file: the one holding the keys. */
  public static Path largestTable(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir.resolve("storage"))) {
      return files.filter(p -> p.toString().endsWith(".sst"))
          .max(Comparator.comparingLong(p -> p.toFile().length()))
          .orElseThrow(() -> new AssertionError("no table file in " + dir));
    }
  }

  /** Bytes of data blocks at the start of {@code table} (the index, filter and footer follow). */
  public static long dataBytes(Path table) throws IOException {
    try (Options options = new Options(); SstFileReader reader = new SstFileReader(options)) {
      reader.open(table.toString());
      return reader.getTableProperties().getDataSize();
    } catch (RocksDBException e) {
      throw new IOException(e);
    }
  }

  /** Flips 4 bytes every {@code step} bytes inside the data blocks of {@code table}, from its first 4 KiB on. */
  public static void damageDataBlocks(Path table, long step) throws IOException {
    long end = dataBytes(table) - 4096;
    flip(table, 4096, end, step);
  }

  /** Flips 4 bytes every 100 bytes in [from, to) of {@code file}. */
  public static void flip(Path file, long from, long to, long step) throws IOException {
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
      byte[] b = new byte[4];
      for (long at = from; at < to; at += step) {
        f.seek(at);
        f.readFully(b);
        ByteBuffer.wrap(b).putInt(ByteBuffer.wrap(b).getInt() ^ 0x5a5a5a5a);
        f.seek(at);
        f.write(b);
      }
    }
  }

  /** Copies the tree {@code from} to {@code to}. */
  public static void copy(Path from, Path to) throws IOException {
    try (Stream<Path> s = Files.walk(from)) {
      for (Path p : s.toList()) {
        Path target = to.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(target);
        } else {
          Files.copy(p, target);
        }
      }
    }
  }
}
