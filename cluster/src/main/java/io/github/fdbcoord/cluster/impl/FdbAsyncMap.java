package io.github.fdbcoord.cluster.impl;

import com.apple.foundationdb.Transaction;
import io.vertx.core.Future;
import io.vertx.core.shareddata.AsyncMap;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * A cluster-wide {@link AsyncMap}: each operation is one transaction. TTLs are deadlines on the
 * database's version clock; an entry whose deadline is at or below a transaction's read version is
 * treated as absent by every operation, whether or not the sweeper has removed it yet.
 */
public final class FdbAsyncMap<K, V> implements AsyncMap<K, V> {
  private final ClusterStore store;
  private final ClusterSchema schema;
  private final String name;

  /** The async map {@code name} of the cluster on {@code store}. */
  public FdbAsyncMap(ClusterStore store, String name) {
    this.store = store;
    this.schema = store.schema();
    this.name = name;
  }

  @Override
  public Future<V> get(K k) {
    byte[] key = ClusterValues.encode(k);
    return store.future(() -> store.read(tr -> tr.getReadVersion().thenCompose(rv ->
        schema.readMapEntry(tr, name, key).thenApply(e -> e != null && e.liveAt(rv) ? ClusterValues.<V>decode(e.value()) : null))));
  }

  @Override
  public Future<Void> put(K k, V v) {
    return put(k, v, 0);
  }

  @Override
  public Future<Void> put(K k, V v, long ttl) {
    byte[] key = ClusterValues.encode(k);
    byte[] value = ClusterValues.encode(v);
    return store.future(() -> store.run(tr -> tr.getReadVersion().thenApply(rv -> {
      schema.writeMapEntry(tr, name, key, new ClusterSchema.MapEntry(ClusterSchema.deadline(rv, ttl), value));
      return null;
    })));
  }

  @Override
  public Future<V> putIfAbsent(K k, V v) {
    return putIfAbsent(k, v, 0);
  }

  @Override
  public Future<V> putIfAbsent(K k, V v, long ttl) {
    byte[] key = ClusterValues.encode(k);
    byte[] value = ClusterValues.encode(v);
    return update(key, (tr, rv, e) -> {
      if (e != null && e.liveAt(rv)) {
        return ClusterValues.<V>decode(e.value());
      }
      schema.writeMapEntry(tr, name, key, new ClusterSchema.MapEntry(ClusterSchema.deadline(rv, ttl), value));
      return null;
    });
  }

  @Override
  public Future<V> remove(K k) {
    byte[] key = ClusterValues.encode(k);
    return update(key, (tr, rv, e) -> {
      if (e == null) {
        return null;
      }
      schema.clearMapEntry(tr, name, key);
      return e.liveAt(rv) ? ClusterValues.<V>decode(e.value()) : null;
    });
  }

  @Override
  public Future<Boolean> removeIfPresent(K k, V v) {
    byte[] key = ClusterValues.encode(k);
    byte[] value = ClusterValues.encode(v);
    return update(key, (tr, rv, e) -> {
      if (e == null || !e.liveAt(rv) || !sameValue(e.value(), value)) {
        return false;
      }
      schema.clearMapEntry(tr, name, key);
      return true;
    });
  }

  @Override
  public Future<V> replace(K k, V v) {
    return replace(k, v, 0);
  }

  @Override
  public Future<V> replace(K k, V v, long ttl) {
    byte[] key = ClusterValues.encode(k);
    byte[] value = ClusterValues.encode(v);
    return update(key, (tr, rv, e) -> {
      if (e == null || !e.liveAt(rv)) {
        return null;
      }
      schema.writeMapEntry(tr, name, key, new ClusterSchema.MapEntry(ClusterSchema.deadline(rv, ttl), value));
      return ClusterValues.<V>decode(e.value());
    });
  }

  @Override
  public Future<Boolean> replaceIfPresent(K k, V oldValue, V newValue) {
    return replaceIfPresent(k, oldValue, newValue, 0);
  }

  @Override
  public Future<Boolean> replaceIfPresent(K k, V oldValue, V newValue, long ttl) {
    byte[] key = ClusterValues.encode(k);
    byte[] expected = ClusterValues.encode(oldValue);
    byte[] value = ClusterValues.encode(newValue);
    return update(key, (tr, rv, e) -> {
      if (e == null || !e.liveAt(rv) || !sameValue(e.value(), expected)) {
        return false;
      }
      schema.writeMapEntry(tr, name, key, new ClusterSchema.MapEntry(ClusterSchema.deadline(rv, ttl), value));
      return true;
    });
  }

  @Override
  public Future<Void> clear() {
    return store.future(() -> store.run(tr -> {
      schema.clearMap(tr, name);
      return CompletableFuture.completedFuture(null);
    }));
  }

  @Override
  public Future<Integer> size() {
    return store.future(() -> live().thenApply(List::size));
  }

  @Override
  public Future<Set<K>> keys() {
    return store.future(() -> live().thenApply(entries -> {
      Set<K> out = new HashSet<>();
      for (Map.Entry<byte[], ClusterSchema.MapEntry> e : entries) {
        out.add(ClusterValues.decode(e.getKey()));
      }
      return out;
    }));
  }

  @Override
  public Future<List<V>> values() {
    return store.future(() -> live().thenApply(entries -> {
      List<V> out = new ArrayList<>();
      for (Map.Entry<byte[], ClusterSchema.MapEntry> e : entries) {
        out.add(ClusterValues.decode(e.getValue().value()));
      }
      return out;
    }));
  }

  @Override
  public Future<Map<K, V>> entries() {
    return store.future(() -> live().thenApply(entries -> {
      Map<K, V> out = new HashMap<>();
      for (Map.Entry<byte[], ClusterSchema.MapEntry> e : entries) {
        out.put(ClusterValues.decode(e.getKey()), ClusterValues.decode(e.getValue().value()));
      }
      return out;
    }));
  }

  /** What a read-modify-write operation does with {@code key}'s entry (null when absent) at read version {@code rv}. */
  @FunctionalInterface
  private interface EntryUpdate<T> {
    T apply(Transaction tr, long rv, ClusterSchema.MapEntry entry);
  }

  /** Reads {@code key}'s entry and applies {@code update} to it, in one transaction (retried on conflict). */
  private <T> Future<T> update(byte[] key, EntryUpdate<T> update) {
    return store.future(() -> store.run(tr -> tr.getReadVersion().thenCompose(rv ->
        schema.readMapEntry(tr, name, key).thenApply(e -> update.apply(tr, rv, e)))));
  }

  /** The live entries of the map, read in one transaction. */
  private CompletableFuture<List<Map.Entry<byte[], ClusterSchema.MapEntry>>> live() {
    return store.read(tr -> tr.getReadVersion().thenCompose(rv ->
        schema.readMapEntries(tr, name, store.executor()).thenApply(all -> {
          List<Map.Entry<byte[], ClusterSchema.MapEntry>> out = new ArrayList<>(all.size());
          for (Map.Entry<byte[], ClusterSchema.MapEntry> e : all) {
            if (e.getValue().liveAt(rv)) {
              out.add(e);
            }
          }
          return out;
        })));
  }

  /** Values compare by their encoded bytes (equal values of the supported types encode equally). */
  private static boolean sameValue(byte[] stored, byte[] given) {
    return Arrays.equals(stored, given);
  }
}
