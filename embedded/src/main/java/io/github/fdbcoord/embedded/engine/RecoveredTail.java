package io.github.fdbcoord.embedded.engine;

import io.github.fdbcoord.embedded.log.LogRecordWriter;
import io.github.fdbcoord.embedded.storage.VersionedStore;

import java.util.ArrayDeque;
import java.util.List;
import java.util.function.Consumer;

/**
 * The commit log's records after the storage's durable version, as recovery finds them. They go into the
 * MVCC window at their versions and the applier moves them into the storage in the background, as it does
 * live commits: FoundationDB's storage servers likewise catch up from the transaction logs while the
 * database serves, so an open after a crash costs reading the log, not writing RocksDB. The window's part
 * is bounded by bytes as the applier's backlog is: older records beyond it go to the storage before the
 * open.
 */
final class RecoveredTail {
  private final ArrayDeque<Applier.Logged> records = new ArrayDeque<>();
  private final long limitBytes;
  private long bytes;

  RecoveredTail(long limitBytes) {
    this.limitBytes = limitBytes;
  }

  /** Keeps a record (the newest so far); hands the oldest kept ones beyond the byte limit to {@code toStorage}. */
  void add(long version, byte[] payload, Consumer<Applier.Logged> toStorage) {
    records.addLast(new Applier.Logged(version, payload));
    bytes += payload.length;
    while (bytes > limitBytes) {
      Applier.Logged oldest = records.removeFirst();
      bytes -= oldest.changes().length;
      toStorage.accept(oldest);
    }
  }

  /** Hands every kept record to {@code toStorage}, oldest first. */
  void moveAll(Consumer<Applier.Logged> toStorage) {
    while (!records.isEmpty()) {
      Applier.Logged oldest = records.removeFirst();
      bytes -= oldest.changes().length;
      toStorage.accept(oldest);
    }
  }

  int size() {
    return records.size();
  }

  long bytes() {
    return bytes;
  }

  /** The newest kept record's version, or -1 when none is kept. */
  long lastVersion() {
    return records.isEmpty() ? -1 : records.peekLast().version();
  }

  /** The kept records, oldest first, for the applier. */
  List<Applier.Logged> records() {
    return List.copyOf(records);
  }

  /**
   * Writes the kept records into {@code store}'s window at their versions, as their commits did (new keys
   * join the sorted index in runs, between range clears). Every reader of the opened engine reads above
   * the newest of them, so older versions may be trimmed.
   */
  void install(VersionedStore store) {
    long oldestReadable = lastVersion();
    VersionedStore.BulkLoad load = store.bulkLoad();
    for (Applier.Logged record : records) {
      long version = record.version();
      LogRecordWriter.replay(record.changes(), new LogRecordWriter.Visitor() {
        @Override
        public void set(byte[] key, byte[] value) {
          load.put(key, value, version, oldestReadable);
        }

        @Override
        public void clear(byte[] key) {
          load.put(key, null, version, oldestReadable);
        }

        @Override
        public void clearRange(byte[] begin, byte[] end) {
          load.finish();
          store.clearRange(begin, end, version, oldestReadable);
        }
      });
    }
    load.finish();
  }
}
