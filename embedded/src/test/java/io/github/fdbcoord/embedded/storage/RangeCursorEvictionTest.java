package io.github.fdbcoord.embedded.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A range read whose storage view was taken before the applier moved some of the window's chains into
 * the storage and dropped them: the window's iterator no longer yields those keys and the old view does
 * not hold them, yet the read returns every key once (it takes a new view behind the last key it decided).
 * Also a cleared key whose tombstone is swept: it stays cleared for a cursor whose view predates the clear.
 */
@Timeout(60)
class RangeCursorEvictionTest {
  private static final long READ_VERSION = 100;

  @TempDir
  Path dir;

  private static byte[] key(int i) {
    return String.format("k/%03d", i).getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] value(int i) {
    return ("v" + i).getBytes(StandardCharsets.UTF_8);
  }

  private static List<String> drain(VersionedStore.Cursor cursor) {
    List<String> keys = new ArrayList<>();
    while (cursor.next()) {
      keys.add(new String(cursor.key, StandardCharsets.UTF_8) + "=" + new String(cursor.value, StandardCharsets.UTF_8));
    }
    return keys;
  }

  private static List<String> expected(int from, int to, boolean reverse) {
    List<String> keys = new ArrayList<>();
    for (int i = from; i < to; i++) {
      keys.add(new String(key(i), StandardCharsets.UTF_8) + "=v" + i);
    }
    if (reverse) {
      java.util.Collections.reverse(keys);
    }
    return keys;
  }

  /** Writes keys [from, to) at {@code version} into the storage, as the applier does, and drops their chains. */
  private static void applyAndEvict(RocksStorage storage, VersionedStore store, int from, int to, long version) {
    RocksStorage.WriteBatchBuilder batch = storage.batch();
    List<byte[]> keys = new ArrayList<>();
    for (int i = from; i < to; i++) {
      batch.set(key(i), value(i));
      keys.add(key(i));
    }
    storage.apply(batch, version);
    store.evict(version, keys, List.of());
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void chainsDroppedAfterTheViewWasTakenAreStillRead(boolean reverse) throws Exception {
    try (RocksStorage storage = RocksStorage.open(dir, 8L << 20, 8L << 20, 0)) {
      VersionedStore store = new VersionedStore(storage);
      for (int i = 0; i < 30; i++) {
        store.put(key(i), value(i), 10, 0);
      }
      try (VersionedStore.Cursor cursor = store.cursor(key(0), key(30), reverse, READ_VERSION)) {
        List<String> seen = new ArrayList<>();
        // The first pair read with the view as it was; then every key but the next few leaves the window.
        cursor.next();
        seen.add(new String(cursor.key, StandardCharsets.UTF_8) + "=" + new String(cursor.value, StandardCharsets.UTF_8));
        if (reverse) {
          applyAndEvict(storage, store, 0, 26, 10);
        } else {
          applyAndEvict(storage, store, 4, 30, 10);
        }
        seen.addAll(drain(cursor));
        assertEquals(expected(0, 30, reverse), seen);
      }
    }
  }

  @Test
  void aSweptTombstoneKeepsItsKeyClearedForAnOlderView() throws Exception {
    try (RocksStorage storage = RocksStorage.open(dir, 8L << 20, 8L << 20, 0)) {
      VersionedStore store = new VersionedStore(storage);
      applyAndEvict(storage, store, 0, 5, 10);
      // Three chains in the window before key 2 (the window's iterator looks one chain ahead), and key 2
      // cleared at version 20 in the window while the storage still holds its old value.
      store.put(key(0), value(0), 15, 0);
      store.put(key(1), value(1), 15, 0);
      store.put("k/001a".getBytes(StandardCharsets.UTF_8), "va".getBytes(StandardCharsets.UTF_8), 15, 0);
      store.put(key(2), null, 20, 0);
      try (VersionedStore.Cursor cursor = store.cursor(key(0), key(5), false, READ_VERSION)) {
        cursor.next();
        // The clear reaches the storage, and the engine's maintenance sweeps tombstones (bounded by the
        // storage's durable version) before the applier announces the drop of the window's chains.
        RocksStorage.WriteBatchBuilder clear = storage.batch();
        clear.clear(key(2));
        storage.apply(clear, 20);
        store.sweepTombstones(Math.min(50, storage.durableVersion()));
        List<String> seen = new ArrayList<>(List.of(new String(cursor.key, StandardCharsets.UTF_8) + "=v0"));
        seen.addAll(drain(cursor));
        store.evict(20, List.of(key(2)), List.of());
        assertEquals(List.of("k/000=v0", "k/001=v1", "k/001a=va", "k/003=v3", "k/004=v4"), seen);
      }
    }
  }
}
