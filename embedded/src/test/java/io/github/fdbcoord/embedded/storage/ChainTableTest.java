package io.github.fdbcoord.embedded.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.fdbcoord.embedded.bytes.KeyHash;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

public class ChainTableTest {

  private static VersionedStore.Chain chain(byte[] key) {
    return new VersionedStore.Chain(key, KeyHash.hash(key));
  }

  private static byte[] key(int i) {
    return ByteBuffer.allocate(4).putInt(i).array();
  }

  /** Random inserts, replacements and removals across many resizes match a hash-map model. */
  @Test
  void matchesModel() {
    for (long seed = 1; seed <= 4; seed++) {
      Random r = new Random(seed);
      ChainTable table = new ChainTable();
      Map<Integer, VersionedStore.Chain> model = new HashMap<>();
      for (int step = 0; step < 60_000; step++) {
        int k = r.nextInt(5_000 * (int) seed);
        VersionedStore.Chain present = model.get(k);
        switch (r.nextInt(4)) {
          case 0 -> {
            VersionedStore.Chain c = chain(key(k));
            VersionedStore.Chain existing = table.putIfAbsent(c);
            assertSame(present, existing, "seed " + seed + " step " + step);
            if (present == null) {
              model.put(k, c);
            }
          }
          case 1 -> {
            VersionedStore.Chain c = chain(key(k));
            assertSame(present, table.put(c), "seed " + seed + " step " + step);
            model.put(k, c);
          }
          case 2 -> {
            if (present != null) {
              // Removing another chain of the same key must not remove the present one.
              assertFalse(table.remove(chain(key(k))));
              assertTrue(table.remove(present));
              model.remove(k);
            }
          }
          default -> assertSame(present, table.get(key(k), KeyHash.hash(key(k))),
              "seed " + seed + " step " + step);
        }
      }
      assertEquals(model.size(), table.size());
      for (Map.Entry<Integer, VersionedStore.Chain> e : model.entrySet()) {
        byte[] k = key(e.getKey());
        assertSame(e.getValue(), table.get(k, KeyHash.hash(k)));
      }
    }
  }

  /** Inserters race on overlapping keys while readers look up: one chain per key, none lost. */
  @Test
  void concurrentInsertsAgreeOnOneChainPerKey() throws Exception {
    ChainTable table = new ChainTable();
    int threads = 4;
    int keys = 100_000;
    ExecutorService pool = Executors.newFixedThreadPool(threads + 1);
    AtomicBoolean stop = new AtomicBoolean();
    ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
    List<CompletableFuture<VersionedStore.Chain[]>> inserters = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      inserters.add(CompletableFuture.supplyAsync(() -> {
        VersionedStore.Chain[] won = new VersionedStore.Chain[keys];
        for (int i = 0; i < keys; i++) {
          VersionedStore.Chain mine = chain(key(i));
          VersionedStore.Chain existing = table.putIfAbsent(mine);
          won[i] = existing == null ? mine : existing;
        }
        return won;
      }, pool));
    }
    CompletableFuture<Void> reader = CompletableFuture.runAsync(() -> {
      Random r = new Random(7);
      Map<Integer, VersionedStore.Chain> seen = new HashMap<>();
      while (!stop.get()) {
        int i = r.nextInt(keys);
        byte[] k = key(i);
        VersionedStore.Chain c = table.get(k, KeyHash.hash(k));
        VersionedStore.Chain before = seen.get(i);
        if (before != null && c != before) {
          problems.add("key " + i + " changed chain or vanished");
        }
        if (c != null) {
          seen.put(i, c);
        }
      }
    }, pool);
    List<VersionedStore.Chain[]> results = new ArrayList<>();
    for (CompletableFuture<VersionedStore.Chain[]> f : inserters) {
      results.add(f.get(60, TimeUnit.SECONDS));
    }
    stop.set(true);
    reader.get(60, TimeUnit.SECONDS);
    pool.shutdown();
    assertTrue(problems.isEmpty(), problems.toString());
    assertEquals(keys, table.size());
    for (int i = 0; i < keys; i++) {
      byte[] k = key(i);
      VersionedStore.Chain c = table.get(k, KeyHash.hash(k));
      for (VersionedStore.Chain[] won : results) {
        assertSame(c, won[i], "every inserter of key " + i + " got the same chain");
      }
    }
    assertNull(table.get(key(keys), KeyHash.hash(key(keys))));
  }
}
