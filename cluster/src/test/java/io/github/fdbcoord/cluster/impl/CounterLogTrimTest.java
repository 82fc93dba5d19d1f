package io.github.fdbcoord.cluster.impl;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.Tuple;
import io.github.fdbcoord.embedded.EmbeddedDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The counter log's trim bound. A new FoundationDB cluster's versions start near 0 (the embedded engine's start at
 * the wall clock in microseconds), so for a fresh cluster's first minute "the read version less the retention" is
 * negative; on a real fdbserver such a trim cleared the whole log and failed the callers of batches still being
 * answered from it (found by {@code ClusterManagerBenchmark counter} on a fresh server). Bounds at or below 0 clear
 * nothing; a positive bound clears exactly the entries committed at or before it.
 */
class CounterLogTrimTest {
  private final EmbeddedDatabase db = EmbeddedDatabase.inMemory();
  private final ClusterSchema schema = new ClusterSchema(new Subspace(Tuple.from("trim-test", UUID.randomUUID().toString())));

  @AfterEach
  void close() {
    db.close();
  }

  @Test
  void aBoundAtOrBelowVersionZeroClearsNothingAndAPositiveOneClearsOnlyOlderEntries() {
    List<Long> versions = new ArrayList<>();
    List<byte[]> stamps = new ArrayList<>();
    for (long delta = 1; delta <= 3; delta++) {
      long d = delta;
      Transaction tr = db.createTransaction();
      CompletableFuture<byte[]> stamp = tr.getVersionstamp();
      schema.appendCounterLog(tr, "hits", d);
      tr.commit().join();
      versions.add(tr.getCommittedVersion());
      stamps.add(stamp.join());
      tr.close();
    }

    for (long bound : new long[] {0, -1, -60_000_000L}) {
      trim(db, bound);
      assertEquals(List.of(1L, 2L, 3L), deltasFrom(db, stamps.get(0)), "a trim below version " + bound + " keeps every entry");
    }

    trim(db, versions.get(0)); // the entries committed at or before the first one's version
    assertEquals(List.of(2L, 3L), deltasFrom(db, stamps.get(1)));
    assertEquals(List.of(2L, 3L), deltasFrom(db, new byte[10]), "the first entry, and only it, is gone");
  }

  private void trim(Database db, long bound) {
    db.run(tr -> {
      schema.trimCounterLog(tr, "hits", bound);
      return null;
    });
  }

  private List<Long> deltasFrom(Database db, byte[] stamp) {
    List<KeyValue> log = db.read(tr -> schema.readCounterLogFrom(tr, "hits", stamp).join());
    List<Long> deltas = new ArrayList<>();
    for (KeyValue kv : log) {
      deltas.add(ClusterSchema.unpackCounterValue(kv.getValue()));
    }
    return deltas;
  }
}
