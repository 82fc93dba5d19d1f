package io.github.fdbcoord.embedded.storage;

import io.github.fdbcoord.embedded.storage.RocksStorage.StorageFailure;
import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicReference;
import org.rocksdb.RocksDBException;
import org.rocksdb.Status;

/**
 * What went wrong with the storage's files: RocksDB's failures classified by their status code (damage told
 * apart from a read or write that failed), and the first damage found, by a read, a write or the scrub, kept
 * for {@link RocksStorage#damage()} and logged once.
 */
final class StorageDamage {
  // The storage's logger: operators (and StorageDamageTest) look for the storage's damage under its name.
  private static final Logger LOG = LoggerFactory.getLogger(RocksStorage.class);

  private final Path dir;
  private final AtomicReference<StorageFailure> first = new AtomicReference<>();

  StorageDamage(Path dir) {
    this.dir = dir;
  }

  /**
   * The failure {@code e} of {@code action} ("reading", "writing", ...), classified by RocksDB's status
   * code; damage is also recorded as the storage's {@link RocksStorage#damage()}.
   */
  StorageFailure failure(String action, RocksDBException e) {
    Status status = e.getStatus();
    String state = StorageFiles.stateOf(e);
    if (status != null && status.getCode() == Status.Code.Corruption) {
      String file = StorageFiles.namedFile(state);
      StorageFailure f = new StorageFailure("the engine's storage is damaged" + (file != null ? ": " + file : "")
          + " (" + action + " " + dir + ": " + state + ")", e, true, file);
      report(f);
      return f;
    }
    return new StorageFailure(action + " " + dir + " failed: " + state, e, false, null);
  }

  /** Records {@code found} as the storage's damage unless some was found before; logs it once. */
  void report(StorageFailure found) {
    if (first.compareAndSet(null, found)) {
      LOG.error("engine storage " + dir + ": " + found.getMessage() + ". Reads of the damaged data fail with error "
          + "1522 (file_corrupt) until the data directory is restored from a backup; `verify` lists every damaged file");
    }
  }

  /** Records what the scrub found wrong with {@code file}, as a read that met it would. */
  void reportTable(Path file, String problem) {
    report(new StorageFailure("the engine's storage is damaged: " + file + " (scrubbing " + dir + ": " + problem
        + ")", null, true, file.toString()));
  }

  /** The first damage found, or null while none was. */
  StorageFailure first() {
    return first.get();
  }
}
