package io.github.fdbcoord.embedded.log;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

/** {@link FileLayer} over the real file system: {@link FileChannel}, {@link Files}. */
public final class NioFileLayer implements FileLayer {
  static final NioFileLayer INSTANCE = new NioFileLayer();
  /** The lock files (by real path) this JVM holds. */
  private static final Set<Path> LOCKED = ConcurrentHashMap.newKeySet();

  private NioFileLayer() {}

  private static final class NioFile implements OpenFile {
    private final FileChannel channel;

    NioFile(FileChannel channel) {
      this.channel = channel;
    }

    @Override
    public int read(ByteBuffer dst, long position) throws IOException {
      return channel.read(dst, position);
    }

    @Override
    public void write(ByteBuffer src, long position) throws IOException {
      long pos = position;
      while (src.hasRemaining()) {
        pos += channel.write(src, pos);
      }
    }

    @Override
    public long size() throws IOException {
      return channel.size();
    }

    @Override
    public void truncate(long size) throws IOException {
      channel.truncate(size);
    }

    @Override
    public void force(boolean metadata) throws IOException {
      channel.force(metadata);
    }

    @Override
    public void close() throws IOException {
      channel.close();
    }
  }

  @Override
  public OpenFile open(Path file, Mode mode) throws IOException {
    OpenOption[] options = switch (mode) {
      case READ -> new OpenOption[] {StandardOpenOption.READ};
      case WRITE -> new OpenOption[] {StandardOpenOption.READ, StandardOpenOption.WRITE};
      case CREATE_NEW -> new OpenOption[] {StandardOpenOption.READ, StandardOpenOption.WRITE,
          StandardOpenOption.CREATE_NEW};
      case CREATE_OR_TRUNCATE -> new OpenOption[] {StandardOpenOption.READ, StandardOpenOption.WRITE,
          StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING};
    };
    return new NioFile(FileChannel.open(file, options));
  }

  @Override
  public void createDirectories(Path dir) throws IOException {
    Files.createDirectories(dir);
  }

  @Override
  public List<Path> list(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return new ArrayList<>(s.toList());
    }
  }

  @Override
  public boolean deleteIfExists(Path file) throws IOException {
    return Files.deleteIfExists(file);
  }

  @Override
  public void rename(Path from, Path to) throws IOException {
    Files.move(from, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }

  @Override
  public void syncDirectory(Path dir) throws IOException {
    try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
      d.force(true);
    }
  }

  @Override
  public long usableSpace(Path dir) throws IOException {
    return Files.getFileStore(dir).getUsableSpace();
  }

  /**
   * {@inheritDoc}
   *
   * <p>The OS lock is a POSIX record lock, owned by the process and dropped when any channel of the
   * file closes: a second attempt inside this JVM that opened and closed the file would unlock it for
   * other processes. So this JVM's locks are also kept in a registry, checked before the file is opened.
   */
  @Override
  public Closeable tryLock(Path file) throws IOException {
    Path key = file.toAbsolutePath().getParent().toRealPath().resolve(file.getFileName());
    if (!LOCKED.add(key)) {
      return null;
    }
    try {
      Closeable lock = lockFile(file);
      if (lock == null) {
        LOCKED.remove(key);
        return null;
      }
      return () -> {
        try {
          lock.close();
        } finally {
          LOCKED.remove(key);
        }
      };
    } catch (IOException | RuntimeException | Error e) {
      LOCKED.remove(key);
      throw e;
    }
  }

  private static Closeable lockFile(Path file) throws IOException {
    FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    FileLock lock;
    try {
      lock = channel.tryLock();
    } catch (OverlappingFileLockException e) {
      lock = null;
    } catch (IOException | RuntimeException e) {
      channel.close();
      throw e;
    }
    if (lock == null) {
      channel.close();
      return null;
    }
    FileLock held = lock;
    return () -> {
      try {
        held.release();
      } finally {
        channel.close();
      }
    };
  }
}
