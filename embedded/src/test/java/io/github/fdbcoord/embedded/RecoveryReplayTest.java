package io.github.fdbcoord.embedded;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.Transaction;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A crash's recovery replays the log's tail into memtables that are sorted only when they are flushed
 * (see {@code DurableStore}): what it rebuilds must still be each key's last write in log order, across
 * range clears, clears and rewrites of one key in one commit and across commits, and across many memtables.
 * A child JVM commits a seeded workload and halts without closing; the parent reopens and compares with
 * the same workload run on a sorted map.
 */
@Tag("slow")
class RecoveryReplayTest {
  private static final int KEYS = 2_000;
  private static final int COMMITS = 400;
  private static final int HALTED = 86;
  private static final long SEED = 42;

  private static EmbeddedDatabase open(Path dir) {
    return EmbeddedDatabase.open(EmbeddedOptions.builder().dataDirectory(dir)
        // Small memtables: the tail fills many of them, flushed while the replay goes on.
        .storageWriteBufferBytes(256 << 10).build());
  }

  private static String key(int i) {
    return String.format("r/%05d", i);
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** One commit's mutations, in order, on either side. */
  private interface Mutations {
    void set(String key, String value);

    void clear(String key);

    void clearRange(String begin, String end);
  }

  /** Commit {@code n} of the seeded workload. */
  private static void commit(int n, Random random, Mutations m) {
    int kind = random.nextInt(10);
    int from = random.nextInt(KEYS);
    // Up to 600 keys: over 256 a range clear reaches the storage as a range deletion, not as point deletes.
    int to = Math.min(KEYS, from + 1 + random.nextInt(600));
    int[] picks = random.ints(50, 0, KEYS).toArray();
    if (kind == 0) {
      // A write, then a range clear over it, then writes into the range: all in one commit.
      m.set(key(from), "before-clear-" + n);
      m.clearRange(key(from), key(to));
    }
    for (int i : picks) {
      if (kind == 1 && i % 3 == 0) {
        m.clear(key(i));
      } else {
        // Values of different sizes, so that a stale one cannot pass for the last one by its length.
        m.set(key(i), "v" + n + "-" + i + "-" + "x".repeat((i + n) % 97));
      }
    }
    if (kind == 2) {
      m.clearRange(key(from), key(to));
    }
  }

  private static Map<String, String> model() {
    NavigableMap<String, String> model = new TreeMap<>();
    Random random = new Random(SEED);
    Mutations onModel = new Mutations() {
      @Override
      public void set(String key, String value) {
        model.put(key, value);
      }

      @Override
      public void clear(String key) {
        model.remove(key);
      }

      @Override
      public void clearRange(String begin, String end) {
        model.subMap(begin, true, end, false).clear();
      }
    };
    for (int n = 0; n < COMMITS; n++) {
      commit(n, random, onModel);
    }
    return model;
  }

  private static Map<String, String> contents(EmbeddedDatabase db) {
    Map<String, String> found = new TreeMap<>();
    List<KeyValue> rows = db.run(tr -> tr.getRange(bytes(key(0)), bytes(key(KEYS))).asList().join());
    for (KeyValue kv : rows) {
      found.put(new String(kv.getKey(), StandardCharsets.UTF_8), new String(kv.getValue(), StandardCharsets.UTF_8));
    }
    return found;
  }

  /** The child: commits the workload, says so, and halts with every commit still in the log's tail. */
  public static void main(String[] args) {
    EmbeddedDatabase db = open(Path.of(args[0]));
    Random random = new Random(SEED);
    for (int n = 0; n < COMMITS; n++) {
      int commit = n;
      db.run(tr -> {
        commit(commit, random, onTransaction(tr));
        return null;
      });
    }
    System.out.println("COMMITTED " + COMMITS);
    System.out.flush();
    Runtime.getRuntime().halt(HALTED);
  }

  private static Mutations onTransaction(Transaction tr) {
    return new Mutations() {
      @Override
      public void set(String key, String value) {
        tr.set(bytes(key), bytes(value));
      }

      @Override
      public void clear(String key) {
        tr.clear(bytes(key));
      }

      @Override
      public void clearRange(String begin, String end) {
        tr.clear(bytes(begin), bytes(end));
      }
    };
  }

  @Test
  @Timeout(180)
  void theReplayedTailIsEveryKeysLastWriteInLogOrder(@TempDir Path dir) throws Exception {
    Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
        RecoveryReplayTest.class.getName(), dir.toString())
        .redirectErrorStream(true).start();
    String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(child.waitFor(120, TimeUnit.SECONDS), "the child did not end: " + output);
    assertEquals(HALTED, child.exitValue(), "the child did not halt after committing: " + output);
    assertTrue(output.contains("COMMITTED " + COMMITS), output);

    Map<String, String> model = model();
    try (EmbeddedDatabase db = open(dir)) {
      assertSame(model, contents(db), "after the replay");
      assertTrue(tables(dir) > 1, "the tail was flushed as several memtables: " + tables(dir) + " table files");
      // The storage, opened anew after the replay, takes writes and keeps them.
      db.run(tr -> {
        tr.set(bytes(key(7)), bytes("after"));
        return null;
      });
      model.put(key(7), "after");
    }
    try (EmbeddedDatabase db = open(dir)) {
      assertSame(model, contents(db), "after a clean close");
      assertArrayEquals(bytes("after"), db.run(tr -> tr.get(bytes(key(7))).join()));
    }
  }

  /** Fails naming the first few keys that differ (the maps themselves run to hundreds of kilobytes). */
  private static void assertSame(Map<String, String> expected, Map<String, String> found, String when) {
    java.util.Set<String> keys = new java.util.TreeSet<>(expected.keySet());
    keys.addAll(found.keySet());
    List<String> differing = keys.stream().filter(k -> !java.util.Objects.equals(expected.get(k), found.get(k)))
        .limit(5).map(k -> k + ": expected " + expected.get(k) + ", found " + found.get(k)).toList();
    assertTrue(differing.isEmpty(), when + ": " + differing);
    assertEquals(expected.size(), found.size(), when);
  }

  private static long tables(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir.resolve("storage"))) {
      return files.filter(p -> p.toString().endsWith(".sst")).count();
    }
  }
}
