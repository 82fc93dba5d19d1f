package io.github.fdbcoord.embedded.log;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;

/**
 * The file operations of the engine's durable files (commit log segments, snapshots, the directory
 * lock), in one small interface so tests can put a non-durable file system beneath them, as
 * FoundationDB's simulator does: one that at a simulated power loss keeps only what was forced
 * (see the test sources' {@code NonDurableFileLayer}). {@link #NIO}, over {@link
 * java.nio.channels.FileChannel}, is what the engine uses.
 *
 * <p>What is durable when, which the callers rely on: file data once {@link OpenFile#force} returned;
 * a file's creation, removal or renaming once {@link #syncDirectory} of its directory returned.
 */
public interface FileLayer {
  /** The real file system. */
  FileLayer NIO = NioFileLayer.INSTANCE;

  /** How {@link #open} opens a file. */
  enum Mode {
    /** An existing file, for reading. */
    READ,
    /** An existing file, for reading and writing. */
    WRITE,
    /** A new file, for reading and writing; fails if it exists. */
    CREATE_NEW,
    /** A file created if missing and emptied if present, for reading and writing. */
    CREATE_OR_TRUNCATE
  }

  /** An open file: positional reads and writes, no position of its own. */
  interface OpenFile extends Closeable {
    /** Reads into {@code dst} at {@code position}; the number of bytes read, -1 at the end of the file. */
    int read(ByteBuffer dst, long position) throws IOException;

    /** Writes all of {@code src} at {@code position}. */
    void write(ByteBuffer src, long position) throws IOException;

    long size() throws IOException;

    void truncate(long size) throws IOException;

    /** Makes what was written durable ({@code metadata}: the file's metadata too, as fsync does; else fdatasync). */
    void force(boolean metadata) throws IOException;
  }

  OpenFile open(Path file, Mode mode) throws IOException;

  void createDirectories(Path dir) throws IOException;

  /** The entries of {@code dir}. */
  List<Path> list(Path dir) throws IOException;

  boolean deleteIfExists(Path file) throws IOException;

  /** Renames {@code from} to {@code to} atomically, replacing {@code to}. */
  void rename(Path from, Path to) throws IOException;

  /** Makes the creations, removals and renames in {@code dir} durable. */
  void syncDirectory(Path dir) throws IOException;

  /** Bytes this process may still write on the file system holding {@code dir}. */
  long usableSpace(Path dir) throws IOException;

  /**
   * Takes an exclusive lock on {@code file} (created if missing) for this process; null when another
   * holder has it. Closing the result releases it.
   */
  Closeable tryLock(Path file) throws IOException;
}
