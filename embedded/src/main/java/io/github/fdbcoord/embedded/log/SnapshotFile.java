package io.github.fdbcoord.embedded.log;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Iterator;
import java.util.Map;
import java.util.zip.CRC32C;

/** Writes and reads the snapshot files of {@link CommitLog}; the layout is in {@link LogFormat}. */
public final class SnapshotFile {
  private static final int BUFFER = 1 << 16;

  private SnapshotFile() {}

  /** Writes the snapshot to {@code file} (created or truncated) and fsyncs it; returns the number of entries. */
  static long write(FileLayer files, Path file, long version, Iterator<Map.Entry<byte[], byte[]>> state)
      throws IOException {
    try (FileLayer.OpenFile channel = files.open(file, FileLayer.Mode.CREATE_OR_TRUNCATE)) {
      CRC32C fileCrc = new CRC32C();
      // Not closed on its own: closing would close the channel before force().
      DataOutputStream out = new DataOutputStream(new BufferedOutputStream(outputStream(channel), BUFFER));
      ByteBuffer header = LogFormat.snapshotHeader(version);
      fileCrc.update(header.duplicate());
      out.write(header.array(), 0, header.remaining());
      long count = 0;
      byte[] lengths = new byte[8];
      CRC32C entryCrc = new CRC32C();
      while (state.hasNext()) {
        Map.Entry<byte[], byte[]> entry = state.next();
        byte[] key = entry.getKey();
        byte[] value = entry.getValue();
        if (key == null || value == null) {
          throw new IllegalArgumentException("snapshot entry " + count + " has a null " + (key == null ? "key" : "value"));
        }
        ByteBuffer.wrap(lengths).putInt(key.length).putInt(value.length);
        entryCrc.reset();
        entryCrc.update(lengths);
        entryCrc.update(key);
        entryCrc.update(value);
        int crc = (int) entryCrc.getValue();
        out.write(lengths);
        out.write(key);
        out.write(value);
        out.writeInt(crc);
        fileCrc.update(lengths);
        fileCrc.update(key);
        fileCrc.update(value);
        fileCrc.update(ByteBuffer.allocate(4).putInt(0, crc));
        count++;
      }
      ByteBuffer trailer = ByteBuffer.allocate(LogFormat.SNAPSHOT_TRAILER_SIZE);
      trailer.putInt(-1).putLong(count).putLong(version).putInt((int) fileCrc.getValue());
      trailer.putInt(LogFormat.crc(trailer.array(), 0, 24));
      out.write(trailer.array());
      out.flush();
      channel.force(true);
      return count;
    }
  }

  /**
   * Checks {@code file} completely and, when {@code replay} is not null, hands it every entry. Returns null
   * when the snapshot is valid, else why it is not. A caller that must not see entries of an invalid
   * snapshot calls this first without a replay.
   */
  static String read(FileLayer files, Path file, long expectedVersion, CommitLog.Replay replay) throws IOException {
    try (FileLayer.OpenFile channel = files.open(file, FileLayer.Mode.READ)) {
      long size = channel.size();
      InputStream raw = inputStream(channel);
      DataInputStream in = new DataInputStream(new BufferedInputStream(raw, BUFFER));
      CRC32C fileCrc = new CRC32C();
      byte[] header = new byte[LogFormat.SNAPSHOT_HEADER_SIZE];
      if (size < LogFormat.SNAPSHOT_HEADER_SIZE + LogFormat.SNAPSHOT_TRAILER_SIZE) {
        return "file too short (" + size + " bytes)";
      }
      in.readFully(header);
      ByteBuffer h = ByteBuffer.wrap(header);
      byte[] magic = new byte[8];
      h.get(magic);
      long version = h.getLong();
      int crc = h.getInt();
      if (!Arrays.equals(magic, LogFormat.SNAPSHOT_MAGIC) || crc != LogFormat.crc(header, 0, 16)) {
        return "bad header";
      }
      if (version != expectedVersion) {
        return "header says version " + version + " but the file name says " + expectedVersion;
      }
      fileCrc.update(header);
      long pos = header.length;
      long count = 0;
      byte[] lengths = new byte[8];
      CRC32C entryCrc = new CRC32C();
      while (true) {
        if (size - pos < 4) {
          return "no trailer (file ends at offset " + pos + ")";
        }
        in.readFully(lengths, 0, 4);
        int keyLength = ByteBuffer.wrap(lengths).getInt(0);
        if (keyLength == -1) {
          break;
        }
        if (size - pos < 8) {
          return "entry at offset " + pos + " cut short";
        }
        in.readFully(lengths, 4, 4);
        int valueLength = ByteBuffer.wrap(lengths).getInt(4);
        if (keyLength < 0 || valueLength < 0 || (long) keyLength + valueLength > size - pos - LogFormat.ENTRY_OVERHEAD) {
          return "entry at offset " + pos + " has impossible lengths " + keyLength + "/" + valueLength;
        }
        byte[] key = new byte[keyLength];
        byte[] value = new byte[valueLength];
        in.readFully(key);
        in.readFully(value);
        int storedCrc = in.readInt();
        entryCrc.reset();
        entryCrc.update(lengths);
        entryCrc.update(key);
        entryCrc.update(value);
        if (storedCrc != (int) entryCrc.getValue()) {
          return "checksum mismatch in entry at offset " + pos;
        }
        fileCrc.update(lengths);
        fileCrc.update(key);
        fileCrc.update(value);
        fileCrc.update(ByteBuffer.allocate(4).putInt(0, storedCrc));
        if (replay != null) {
          replay.snapshotEntry(key, value);
        }
        pos += LogFormat.ENTRY_OVERHEAD + keyLength + valueLength;
        count++;
      }
      if (size - pos != LogFormat.SNAPSHOT_TRAILER_SIZE) {
        return "trailer at offset " + pos + " is not exactly at the end of the file";
      }
      byte[] trailer = new byte[LogFormat.SNAPSHOT_TRAILER_SIZE];
      ByteBuffer.wrap(trailer).putInt(-1);
      in.readFully(trailer, 4, trailer.length - 4);
      ByteBuffer t = ByteBuffer.wrap(trailer);
      t.getInt();
      long storedCount = t.getLong();
      long storedVersion = t.getLong();
      int storedFileCrc = t.getInt();
      int trailerCrc = t.getInt();
      if (trailerCrc != LogFormat.crc(trailer, 0, 24)) {
        return "bad trailer checksum";
      }
      if (storedCount != count || storedVersion != version || storedFileCrc != (int) fileCrc.getValue()) {
        return "trailer does not match the entries (count " + storedCount + " vs " + count + ")";
      }
      return null;
    } catch (EOFException e) {
      return "file ends early";
    }
  }

  /** Appends to {@code file} from offset 0 (the caller's buffering keeps the writes large). */
  private static OutputStream outputStream(FileLayer.OpenFile file) {
    return new OutputStream() {
      private long position;

      @Override
      public void write(int b) throws IOException {
        write(new byte[] {(byte) b}, 0, 1);
      }

      @Override
      public void write(byte[] b, int off, int len) throws IOException {
        file.write(ByteBuffer.wrap(b, off, len), position);
        position += len;
      }
    };
  }

  /** Reads {@code file} from offset 0 (the caller buffers). */
  private static InputStream inputStream(FileLayer.OpenFile file) {
    return new InputStream() {
      private long position;

      @Override
      public int read() throws IOException {
        byte[] one = new byte[1];
        return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
      }

      @Override
      public int read(byte[] b, int off, int len) throws IOException {
        if (len == 0) {
          return 0;
        }
        int n = file.read(ByteBuffer.wrap(b, off, len), position);
        if (n > 0) {
          position += n;
        }
        return n;
      }
    };
  }
}
