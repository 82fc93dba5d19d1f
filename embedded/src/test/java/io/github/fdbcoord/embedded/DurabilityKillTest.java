package io.github.fdbcoord.embedded;

import io.github.fdbcoord.embedded.storage.RocksStorage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.MutationType;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Kills a JVM that is committing to a durable {@link EmbeddedDatabase} with SIGKILL and checks, after
 * reopening its directory, that every acknowledged commit survived and no commit survived in part.
 */
@Tag("slow")
class DurabilityKillTest {
  private static final String PREFIX = "dk/";
  private static final byte[] COUNTER = bytes("dk-counter");

  /** The test's temporary directory: the data directory and the children's temporary files. */
  private Path root;
  private Path dir;

  @BeforeEach
  void createDir() throws IOException {
    root = Files.createTempDirectory("durability-kill-test-");
    dir = Files.createDirectory(root.resolve("data"));
  }

  @AfterEach
  void removeDir() throws IOException {
    try (Stream<Path> s = Files.walk(root)) {
      for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static String pairKey(int round, int writer, long seq, char half) {
    return String.format("%sr%d/w%02d/%08d/%c", PREFIX, round, writer, seq, half);
  }

  /**
   * The child process: {@code args = dir round writers compactAfterLogBytes}. Each writer commits transactions that set the
   * two halves of one pair and add 1 to a shared counter, and prints "ACK round writer seq" once the
   * commit is acknowledged. Runs until killed.
   */
  public static final class Child {
    public static void main(String[] args) throws Exception {
      Path dir = Path.of(args[0]);
      int round = Integer.parseInt(args[1]);
      int writers = Integer.parseInt(args[2]);
      long compactAfter = Long.parseLong(args[3]);
      EmbeddedDatabase db = EmbeddedDatabase.open(
          EmbeddedOptions.builder().dataDirectory(dir).compactAfterLogBytes(compactAfter).build());
      byte[] one = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(1).array();
      List<Thread> threads = new ArrayList<>();
      for (int w = 0; w < writers; w++) {
        int writer = w;
        Thread t = new Thread(() -> {
          for (long seq = 0; ; seq++) {
            long s = seq;
            db.run(tr -> {
              byte[] value = bytes(round + ":" + writer + ":" + s);
              tr.set(bytes(pairKey(round, writer, s, 'a')), value);
              tr.set(bytes(pairKey(round, writer, s, 'b')), value);
              tr.mutate(MutationType.ADD, COUNTER, one);
              return null;
            });
            synchronized (System.out) {
              System.out.println("ACK " + round + " " + writer + " " + s);
              System.out.flush();
            }
          }
        }, "writer-" + w);
        t.setDaemon(true);
        threads.add(t);
      }
      System.out.println("READY");
      System.out.flush();
      threads.forEach(Thread::start);
      for (Thread t : threads) {
        t.join();
      }
    }
  }

  /** Runs a child for about {@code runMillis} after it is ready, kills it, returns the acknowledged pair keys. */
  private Set<String> runAndKill(int round, int writers, long compactAfter, long runMillis) throws Exception {
    Path childTmp = Files.createDirectories(root.resolve("jvm"));
    Process child = new ProcessBuilder(ChildJvm.command(childTmp, "512m", Child.class, dir.toString(),
        Integer.toString(round), Integer.toString(writers), Long.toString(compactAfter)))
        .redirectError(ProcessBuilder.Redirect.INHERIT)
        .start();
    Set<String> acked = ConcurrentHashMap.newKeySet();
    CountDownLatch ready = new CountDownLatch(1);
    Thread reader = new Thread(() -> {
      try (BufferedReader in = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line; (line = in.readLine()) != null; ) {
          if (line.equals("READY")) {
            ready.countDown();
          } else if (line.startsWith("ACK ")) {
            String[] f = line.split(" ");
            acked.add(pairKey(Integer.parseInt(f[1]), Integer.parseInt(f[2]), Long.parseLong(f[3]), 'a'));
          }
        }
      } catch (IOException e) {
        // The child was killed: its stdout ends.
      }
    });
    reader.start();
    try {
      assertTrue(ready.await(30, TimeUnit.SECONDS), "child did not start");
      Thread.sleep(runMillis);
      assertTrue(child.isAlive(), () -> "child died before it was killed: " + child.exitValue());
      ChildJvm.kill(child);
      assertTrue(child.waitFor(60, TimeUnit.SECONDS));
    } finally {
      ChildJvm.kill(child);
    }
    ChildJvm.joinReader(reader);
    return acked;
  }

  /** Checks every pair, the per-writer prefixes, the acknowledged commits and the counter; returns the pairs found. */
  private static int checkInvariants(EmbeddedDatabase db, Set<String> acked) {
    List<KeyValue> kvs = db.read(tr -> tr.getRange(bytes(PREFIX), bytes("dk0")).asList().join());
    Map<String, String> values = new TreeMap<>();
    for (KeyValue kv : kvs) {
      values.put(new String(kv.getKey(), StandardCharsets.UTF_8), new String(kv.getValue(), StandardCharsets.UTF_8));
    }
    int pairs = 0;
    Map<String, Long> nextSeqPerWriter = new HashMap<>();
    for (Map.Entry<String, String> e : values.entrySet()) {
      String key = e.getKey();
      String base = key.substring(0, key.length() - 1);
      String other = base + (key.endsWith("a") ? "b" : "a");
      assertEquals(e.getValue(), values.get(other), "half-applied commit: " + key + " without " + other);
      if (key.endsWith("a")) {
        pairs++;
        // Each writer commits seq n only after n-1 was acknowledged: what survives is a prefix.
        String writer = base.substring(0, base.length() - 10);
        long seq = Long.parseLong(base.substring(base.length() - 9, base.length() - 1));
        long expected = nextSeqPerWriter.getOrDefault(writer, 0L);
        assertEquals(expected, seq, "gap in the commits of " + writer);
        nextSeqPerWriter.put(writer, seq + 1);
      }
    }
    for (String a : acked) {
      assertTrue(values.containsKey(a), "acknowledged commit lost: " + a);
    }
    byte[] counter = db.read(tr -> tr.get(COUNTER).join());
    long count = counter == null ? 0 : ByteBuffer.wrap(counter).order(ByteOrder.LITTLE_ENDIAN).getLong();
    assertEquals(pairs, count, "the counter and the pairs were committed together");
    assertTrue(pairs >= acked.size());
    return pairs;
  }

  @Test
  void everyAcknowledgedCommitSurvivesSigkill() throws Exception {
    Set<String> all = new java.util.HashSet<>();
    for (int round = 0; round < 2; round++) {
      // Round 1 runs past the MVCC window and truncates the log every few kilobytes, so the kill
      // is likely to hit an apply to the storage, a storage flush, a roll or a truncation.
      Set<String> acked = runAndKill(round, 8, round == 0 ? 256L << 20 : 4096, round == 0 ? 1500 : 9000);
      assertFalse(acked.isEmpty(), "the child acknowledged no commit");
      all.addAll(acked);
      try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.durable(dir))) {
        int pairs = checkInvariants(db, all);
        System.out.printf("DurabilityKillTest round %d: %d commits acknowledged in total, %d recovered%n", round,
            all.size(), pairs);
      }
      if (round == 1) {
        try (Stream<Path> s = Files.walk(dir.resolve(RocksStorage.DIRECTORY))) {
          assertTrue(s.anyMatch(p -> p.getFileName().toString().endsWith(".sst")),
              "round 1 moved commits into the storage and flushed it");
        }
      }
    }
  }

  @Test
  void closedDatabaseMovesItsLogIntoTheStorageAndRecoversEveryCommit() throws Exception {
    EmbeddedOptions options = EmbeddedOptions.builder().dataDirectory(dir).compactAfterLogBytes(2048).build();
    byte[] one = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(1).array();
    Map<String, String> expected = new TreeMap<>();
    try (EmbeddedDatabase db = EmbeddedDatabase.open(options)) {
      for (int i = 0; i < 400; i++) {
        int n = i;
        db.run(tr -> {
          tr.set(bytes(String.format("c/%04d", n)), bytes("v" + n));
          if (n % 3 == 0) {
            tr.clear(bytes(String.format("c/%04d", n / 2)));
          }
          tr.mutate(MutationType.ADD, COUNTER, one);
          return null;
        });
        expected.put(String.format("c/%04d", n), "v" + n);
        if (n % 3 == 0) {
          expected.remove(String.format("c/%04d", n / 2));
        }
      }
    }
    try (Stream<Path> s = Files.list(dir)) {
      List<String> names = s.map(p -> p.getFileName().toString()).sorted().toList();
      assertTrue(names.contains(RocksStorage.DIRECTORY), "the storage is in the data directory: " + names);
      assertEquals(1, names.stream().filter(n -> n.endsWith(".seg")).count(),
          "closing moved the log into the storage and truncated it: " + names);
    }
    for (int reopen = 0; reopen < 2; reopen++) {
      try (EmbeddedDatabase db = EmbeddedDatabase.open(options)) {
        Map<String, String> actual = new TreeMap<>();
        for (KeyValue kv : db.read(tr -> tr.getRange(bytes("c/"), bytes("c0")).asList().join())) {
          actual.put(new String(kv.getKey(), StandardCharsets.UTF_8), new String(kv.getValue(), StandardCharsets.UTF_8));
        }
        assertEquals(expected, actual);
        byte[] counter = db.read(tr -> tr.get(COUNTER).join());
        assertEquals(400 + reopen, ByteBuffer.wrap(counter).order(ByteOrder.LITTLE_ENDIAN).getLong());
        db.run(tr -> {
          tr.mutate(MutationType.ADD, COUNTER, one);
          return null;
        });
      }
    }
  }

  @Test
  void garbageAppendedToTheLastSegmentIsDropped() throws Exception {
    try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.durable(dir))) {
      for (int i = 0; i < 100; i++) {
        int n = i;
        db.run(tr -> {
          tr.set(bytes(String.format("g/%03d", n)), bytes("value-" + n));
          return null;
        });
      }
    }
    Path last;
    try (Stream<Path> s = Files.list(dir)) {
      last = s.filter(p -> p.getFileName().toString().endsWith(".seg")).max(Comparator.naturalOrder()).orElseThrow();
    }
    byte[] garbage = new byte[777];
    new java.util.Random(7).nextBytes(garbage);
    Files.write(last, garbage, StandardOpenOption.APPEND);
    try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.durable(dir))) {
      List<KeyValue> kvs = db.read(tr -> tr.getRange(bytes("g/"), bytes("g0")).asList().join());
      assertEquals(100, kvs.size());
      for (int i = 0; i < 100; i++) {
        assertEquals("value-" + i, new String(kvs.get(i).getValue(), StandardCharsets.UTF_8));
      }
      db.run(tr -> {
        tr.set(bytes("g/100"), bytes("after"));
        return null;
      });
    }
    try (EmbeddedDatabase db = EmbeddedDatabase.open(EmbeddedOptions.durable(dir))) {
      assertEquals(101, db.read(tr -> tr.getRange(bytes("g/"), bytes("g0")).asList().join()).size());
    }
  }
}
