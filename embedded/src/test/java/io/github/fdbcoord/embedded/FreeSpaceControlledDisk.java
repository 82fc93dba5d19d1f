package io.github.fdbcoord.embedded;

import io.github.fdbcoord.embedded.log.FileLayer;
import io.github.fdbcoord.embedded.log.ForwardingFileLayer;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The real file system, except that the free space it reports is what a test sets: for tests of
 * other modules (the service) that need a durable engine whose disk runs low on space and recovers.
 */
public final class FreeSpaceControlledDisk extends ForwardingFileLayer {
  private final AtomicLong usable = new AtomicLong(Long.MAX_VALUE);

  public FreeSpaceControlledDisk() {
    super(FileLayer.NIO);
  }

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
}
