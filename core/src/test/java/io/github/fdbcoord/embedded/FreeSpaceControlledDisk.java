package io.github.fdbcoord.embedded;

import io.github.fdbcoord.embedded.log.FileLayer;
import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The real file system, except that the free space it reports is what a test sets: for tests of
 * other modules (the service) that need a durable engine whose disk runs low on space and recovers.
 */
public final class FreeSpaceControlledDisk implements FileLayer {
  private final AtomicLong usable = new AtomicLong(Long.MAX_VALUE);

  /** What {@link #usableSpace} answers from now on. */
  public void usableSpace(long bytes) {
    usable.set(bytes);
  }

  /** A durable engine in {@code dir} on this disk, holding commits below {@code minFreeSpaceBytes}. */
  public EmbeddedDatabase open(Path dir, long minFreeSpaceBytes) {
    return EmbeddedDatabase.open(EmbeddedOptions.builder().dataDirectory(dir).files(this)
        .minFreeSpaceBytes(minFreeSpaceBytes).build());
  }

  @Override
  public long usableSpace(Path dir) {
    return usable.get();
  }

  @Override
  public OpenFile open(Path file, Mode mode) throws IOException {
    return NIO.open(file, mode);
  }

  @Override
  public void createDirectories(Path dir) throws IOException {
    NIO.createDirectories(dir);
  }

  @Override
  public List<Path> list(Path dir) throws IOException {
    return NIO.list(dir);
  }

  @Override
  public boolean deleteIfExists(Path file) throws IOException {
    return NIO.deleteIfExists(file);
  }

  @Override
  public void rename(Path from, Path to) throws IOException {
    NIO.rename(from, to);
  }

  @Override
  public void syncDirectory(Path dir) throws IOException {
    NIO.syncDirectory(dir);
  }

  @Override
  public Closeable tryLock(Path file) throws IOException {
    return NIO.tryLock(file);
  }
}
