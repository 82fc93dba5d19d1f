package io.github.fdbcoord.bench;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.Range;
import com.apple.foundationdb.async.AsyncUtil;
import com.apple.foundationdb.directory.DirectoryLayer;
import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.ByteArrayUtil;
import com.apple.foundationdb.tuple.Tuple;
import io.github.fdbcoord.directory.DirectoryService;
import io.github.fdbcoord.directory.DirectoryServiceOptions;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.embedded.EmbeddedOptions;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * Opens of one directory three levels deep, with the service's open-path cache on and off, on the
 * embedded engine with about 1 ms per read and commit. Shows what a hot open costs: one read of
 * the version key instead of a walk of the node tree.
 *
 * <p>Run: {@code mvn -q -o test-compile exec:java -Dexec.mainClass=io.github.fdbcoord.bench.DirectoryCacheBenchmark}
 */
public final class DirectoryCacheBenchmark {
  private DirectoryCacheBenchmark() {}

  public static void main(String[] args) throws Exception {
    double seconds = Double.parseDouble(System.getProperty("bench.seconds", "3"));
    long latencyMs = Long.parseLong(System.getProperty("bench.latencyMs", "1"));
    List<String> path = List.of("bench", "deeply", "nested");
    List<String> rows = new ArrayList<>();
    try (Database db = EmbeddedDatabase.open(EmbeddedOptions.builder().latency(Duration.ofMillis(latencyMs)).build())) {
      byte[] root = Tuple.from("bench", "directory", UUID.randomUUID().toString()).pack();
      DirectoryLayer layer = new DirectoryLayer(new Subspace(ByteArrayUtil.join(root, new byte[] {(byte) 0xfe})),
          new Subspace(root));
      Subspace metadata = new Subspace(ByteArrayUtil.join(root, Tuple.from("meta").pack()));
      for (long cacheSize : new long[] {0, 10_000}) {
        DirectoryService service = DirectoryService.create(db, DirectoryServiceOptions.builder()
            .directoryLayer(layer).metadata(metadata).cacheSize(cacheSize).build());
        service.createOrOpen(path).get(10, TimeUnit.SECONDS);
        for (int concurrency : new int[] {1, 16}) {
          LongAdder opens = new LongAdder();
          long start = System.nanoTime();
          long deadline = start + (long) (seconds * 1e9);
          List<CompletableFuture<Void>> loops = new ArrayList<>();
          for (int i = 0; i < concurrency; i++) {
            loops.add(AsyncUtil.whileTrue(() -> service.open(path).thenApply(info -> {
              opens.increment();
              return System.nanoTime() < deadline;
            }), db.getExecutor()));
          }
          CompletableFuture.allOf(loops.toArray(new CompletableFuture<?>[0])).get((long) seconds + 60, TimeUnit.SECONDS);
          double elapsed = (System.nanoTime() - start) / 1e9;
          String row = String.format("| %-5s | %3d | %7.0f | %6.2f |", cacheSize == 0 ? "off" : "on", concurrency,
              opens.sum() / elapsed, 1000.0 * elapsed * concurrency / opens.sum());
          System.out.println(row);
          rows.add(row);
        }
      }
      db.run(tr -> {
        tr.clear(Range.startsWith(root));
        return null;
      });
    }
    System.out.println();
    System.out.printf("open of a 3-level path, latency %d ms per read and commit, %.1f s per cell%n", latencyMs, seconds);
    System.out.println("| cache | concurrent | opens/s | ms per open |");
    System.out.println("|---|---:|---:|---:|");
    rows.forEach(System.out::println);
    System.exit(0);
  }
}
