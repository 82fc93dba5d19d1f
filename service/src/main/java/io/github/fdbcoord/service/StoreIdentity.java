package io.github.fdbcoord.service;

import com.apple.foundationdb.TransactionContext;
import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.Tuple;

import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * The keys the service keeps in its root directory ({@code rootDirectory}) itself, next to the
 * layers' subdirectories: the store's identity and the health probe's key.
 *
 * <p>The identity is a random id written at the first start over a store and read at every later
 * one. Hosts that answer on the same event-bus prefix must present the same id: equal ids mean the
 * same data (the same cluster, data directory or shared {@code Database}, and the same root).
 */
final class StoreIdentity {
  private StoreIdentity() {}

  static byte[] idKey(Subspace root) {
    return root.pack(Tuple.from("storeId"));
  }

  static byte[] packId(String id) {
    return id.getBytes(StandardCharsets.UTF_8);
  }

  static String unpackId(byte[] value) {
    return new String(value, StandardCharsets.UTF_8);
  }

  static byte[] healthKey(Subspace root) {
    return root.pack(Tuple.from("health"));
  }

  static byte[] packHealth(long epochMillis) {
    return Tuple.from(epochMillis).pack();
  }

  /** The store's id, written (a fresh random UUID) in the same transaction when there is none yet. */
  static CompletableFuture<String> readOrCreate(TransactionContext tcx, Subspace root) {
    return tcx.runAsync(tr -> tr.get(idKey(root)).thenApply(value -> {
      if (value != null) {
        return unpackId(value);
      }
      String id = UUID.randomUUID().toString();
      tr.set(idKey(root), packId(id));
      return id;
    }));
  }

  /**
   * A blind write of the health key: proves the store accepts commits. Blind (no read), so probes
   * of several hosts never conflict. With a transaction timeout, so that a probe the store holds back
   * (the embedded engine holds commits while its disk is low on space) is withdrawn, not left queued.
   */
  static CompletableFuture<Void> writeHealth(TransactionContext tcx, Subspace root, long epochMillis, long timeoutMillis) {
    return tcx.runAsync(tr -> {
      tr.options().setTimeout(timeoutMillis);
      tr.set(healthKey(root), packHealth(epochMillis));
      return CompletableFuture.completedFuture(null);
    });
  }
}
