package io.github.fdbcoord.embedded.log;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;

/**
 * A file layer that hands every call to another one: test layers that change one or two operations
 * (halt at a step, report another free space) extend it and override only those.
 */
public abstract class ForwardingFileLayer implements FileLayer {
  protected final FileLayer delegate;

  protected ForwardingFileLayer(FileLayer delegate) {
    this.delegate = delegate;
  }

  @Override
  public OpenFile open(Path file, Mode mode) throws IOException {
    return delegate.open(file, mode);
  }

  @Override
  public void createDirectories(Path dir) throws IOException {
    delegate.createDirectories(dir);
  }

  @Override
  public List<Path> list(Path dir) throws IOException {
    return delegate.list(dir);
  }

  @Override
  public boolean deleteIfExists(Path file) throws IOException {
    return delegate.deleteIfExists(file);
  }

  @Override
  public void rename(Path from, Path to) throws IOException {
    delegate.rename(from, to);
  }

  @Override
  public void syncDirectory(Path dir) throws IOException {
    delegate.syncDirectory(dir);
  }

  @Override
  public long usableSpace(Path dir) throws IOException {
    return delegate.usableSpace(dir);
  }

  @Override
  public Closeable tryLock(Path file) throws IOException {
    return delegate.tryLock(file);
  }

  /** An open file that hands every call to another one: test layers override the calls they change. */
  public static class ForwardingOpenFile implements OpenFile {
    protected final OpenFile delegate;

    public ForwardingOpenFile(OpenFile delegate) {
      this.delegate = delegate;
    }

    @Override
    public int read(ByteBuffer dst, long position) throws IOException {
      return delegate.read(dst, position);
    }

    @Override
    public void write(ByteBuffer src, long position) throws IOException {
      delegate.write(src, position);
    }

    @Override
    public long size() throws IOException {
      return delegate.size();
    }

    @Override
    public void truncate(long size) throws IOException {
      delegate.truncate(size);
    }

    @Override
    public void force(boolean metadata) throws IOException {
      delegate.force(metadata);
    }

    @Override
    public void close() throws IOException {
      delegate.close();
    }
  }
}
