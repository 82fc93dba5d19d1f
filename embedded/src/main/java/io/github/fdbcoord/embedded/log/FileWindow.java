package io.github.fdbcoord.embedded.log;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Buffered positional reads of a file of fixed size. Recovery reads forwards almost always, but the
 * torn-tail check jumps around, so a plain stream does not fit.
 */
public final class FileWindow {
  private final FileLayer.OpenFile channel;
  private final long size;
  private final ByteBuffer buffer;
  /** File position of buffer[0]; the buffer's limit is the number of valid bytes. */
  private long start;

  FileWindow(FileLayer.OpenFile channel, long size, int capacity) {
    this.channel = channel;
    this.size = size;
    this.buffer = ByteBuffer.allocate(capacity);
    this.buffer.limit(0);
  }

  long size() {
    return size;
  }

  /** Copies {@code n} bytes at {@code pos} into {@code dst}; false (and nothing copied) past the end of the file. */
  boolean read(long pos, byte[] dst, int off, int n) throws IOException {
    if (pos < 0 || n < 0 || pos > size - n) {
      return false;
    }
    while (n > 0) {
      if (pos < start || pos >= start + buffer.limit()) {
        fill(pos);
      }
      int index = (int) (pos - start);
      int k = Math.min(n, buffer.limit() - index);
      System.arraycopy(buffer.array(), index, dst, off, k);
      pos += k;
      off += k;
      n -= k;
    }
    return true;
  }

  /** Position of the first non-zero byte at or after {@code from}, or the file size if there is none. */
  long nextNonZero(long from) throws IOException {
    long pos = Math.max(0, from);
    while (pos < size) {
      if (pos < start || pos >= start + buffer.limit()) {
        fill(pos);
      }
      byte[] a = buffer.array();
      int end = buffer.limit();
      for (int i = (int) (pos - start); i < end; i++) {
        if (a[i] != 0) {
          return start + i;
        }
      }
      pos = start + end;
    }
    return size;
  }

  private void fill(long pos) throws IOException {
    buffer.clear();
    start = pos;
    int want = (int) Math.min(buffer.capacity(), size - pos);
    buffer.limit(want);
    while (buffer.hasRemaining()) {
      if (channel.read(buffer, pos + buffer.position()) < 0) {
        break;
      }
    }
    buffer.flip();
    if (buffer.limit() == 0) {
      throw new IOException("file shrank while it was being read (expected " + size + " bytes)");
    }
  }
}
