package io.github.fdbcoord.embedded.log;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/**
 * The segment file the commit log is writing, as its sync thread sees it: records are buffered, written
 * at the write position over zeros written ahead of it, and synced; after a failed write or sync the
 * position goes back to the end of the last sync, so that the retry overwrites whatever the failed
 * attempt left. Owned by one thread (the {@link GroupCommitWriter}'s sync thread, and its close after it).
 */
final class SegmentFile {
  /** Zero-filled space written ahead of the records at a time. */
  static final long PREALLOCATE_BYTES = 1L << 20;

  private final FileLayer files;
  private FileLayer.OpenFile channel;
  /** End of the records written: where the next write goes. */
  private long writePos;
  /** End of the records synced so far: where a failed batch is written again. */
  private long syncedPos;
  /** End of the zero-filled space written ahead of writePos. */
  private long allocatedEnd;
  private final ByteBuffer zeros = ByteBuffer.allocateDirect(1 << 16);
  private ByteBuffer out = ByteBuffer.allocateDirect(1 << 20);

  /** Goes on writing {@code channel} at {@code writePos}, which is synced already. */
  SegmentFile(FileLayer files, FileLayer.OpenFile channel, long writePos) {
    this.files = files;
    this.channel = channel;
    this.writePos = writePos;
    this.syncedPos = writePos;
    this.allocatedEnd = writePos;
  }

  /** Buffers a record, writing out (not syncing) what was buffered before when the buffer is full. */
  void put(long version, long batch, byte[] payload) throws IOException {
    int size = LogFormat.RECORD_HEADER_SIZE + payload.length;
    if (out.remaining() < size) {
      writeOut();
      if (out.capacity() < size) {
        out = ByteBuffer.allocateDirect(size);
      }
    }
    LogFormat.putRecord(out, version, batch, payload);
  }

  /** Writes what is buffered and syncs the file's data (fdatasync). */
  void sync() throws IOException {
    writeOut();
    channel.force(false);
    syncedPos = writePos;
  }

  /** Drops what was buffered or written since the last sync: the next write goes where it ended. */
  void rewindToSynced() {
    writePos = syncedPos;
    out.clear();
  }

  /** Cuts the file at its last record and syncs it with its size: a segment that ends, or a clean close. */
  void trim() throws IOException {
    channel.truncate(writePos);
    allocatedEnd = writePos;
    channel.force(true);
  }

  /**
   * Creates {@code path} (which must not exist) with {@code header}, durably, directory entry included,
   * and writes there from now on; the file written so far is closed (trim it first). When the new file
   * cannot be written it is removed again (a retry creates it anew) and this one stays current.
   */
  void startNext(Path path, ByteBuffer header) throws IOException {
    FileLayer.OpenFile next = files.open(path, FileLayer.Mode.CREATE_NEW);
    try {
      next.write(header, 0);
      next.force(true);
      // The new file must not vanish in a crash once records in it are acknowledged.
      files.syncDirectory(path.getParent());
    } catch (IOException e) {
      next.close();
      files.deleteIfExists(path);
      throw e;
    }
    channel.close();
    channel = next;
    writePos = LogFormat.SEGMENT_HEADER_SIZE;
    syncedPos = writePos;
    allocatedEnd = writePos;
  }

  void close() throws IOException {
    channel.close();
  }

  /** Writes what is buffered (no sync). */
  private void writeOut() throws IOException {
    out.flip();
    int length = out.remaining();
    preallocate(writePos + length);
    channel.write(out, writePos);
    writePos += length;
    out.clear();
  }

  /**
   * Makes sure the file has been written (with zeros) up to at least {@code end}. fdatasync after
   * overwriting space that already exists has no file size to commit, which makes it about twice as
   * fast as after an append on ext4; recovery reads a zero record header as the end of the records.
   */
  private void preallocate(long end) throws IOException {
    if (end <= allocatedEnd) {
      return;
    }
    long target = Math.max(end, allocatedEnd + PREALLOCATE_BYTES);
    long pos = allocatedEnd;
    while (pos < target) {
      int n = (int) Math.min(zeros.capacity(), target - pos);
      zeros.clear().limit(n);
      channel.write(zeros, pos);
      pos += n;
    }
    allocatedEnd = pos;
  }
}
