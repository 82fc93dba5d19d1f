package io.github.fdbcoord.cluster.impl;

import io.github.fdbcoord.fdb.FdbErrors;
import com.apple.foundationdb.KeyValue;
import io.vertx.core.VertxException;

import java.util.AbstractMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The cluster-wide synchronous map of the SPI (Vert.x HA keeps {@code __vertx.haInfo} in it).
 * {@code java.util.Map} is a blocking interface: each call runs one transaction on the store's
 * executor and waits for it (at most {@link #TIMEOUT_SECONDS} s, then fails with a
 * {@link VertxException}). Iteration works on a snapshot read in one transaction.
 */
public final class FdbSyncMap<K, V> extends AbstractMap<K, V> {
  static final long TIMEOUT_SECONDS = 30;

  private final ClusterStore store;
  private final ClusterSchema schema;
  private final String name;

  /** The sync map {@code name} of the cluster on {@code store}. */
  public FdbSyncMap(ClusterStore store, String name) {
    this.store = store;
    this.schema = store.schema();
    this.name = name;
  }

  @Override
  public V get(Object k) {
    byte[] key = ClusterValues.encode(k);
    return await(store.read(tr -> schema.readSyncValue(tr, name, key)).thenApply(ClusterValues::<V>decode));
  }

  @Override
  public boolean containsKey(Object k) {
    byte[] key = ClusterValues.encode(k);
    return await(store.read(tr -> schema.readSyncValue(tr, name, key)).thenApply(v -> v != null));
  }

  @Override
  public V put(K k, V v) {
    byte[] key = ClusterValues.encode(k);
    byte[] value = ClusterValues.encode(v);
    return await(store.run(tr -> schema.readSyncValue(tr, name, key).thenApply(old -> {
      schema.writeSyncValue(tr, name, key, value);
      return ClusterValues.<V>decode(old);
    })));
  }

  @Override
  public V putIfAbsent(K k, V v) {
    byte[] key = ClusterValues.encode(k);
    byte[] value = ClusterValues.encode(v);
    return await(store.run(tr -> schema.readSyncValue(tr, name, key).thenApply(old -> {
      if (old == null) {
        schema.writeSyncValue(tr, name, key, value);
      }
      return ClusterValues.<V>decode(old);
    })));
  }

  @Override
  public V remove(Object k) {
    byte[] key = ClusterValues.encode(k);
    return await(store.run(tr -> schema.readSyncValue(tr, name, key).thenApply(old -> {
      if (old != null) {
        schema.clearSyncValue(tr, name, key);
      }
      return ClusterValues.<V>decode(old);
    })));
  }

  @Override
  public void clear() {
    await(store.run(tr -> {
      schema.clearSyncMap(tr, name);
      return CompletableFuture.completedFuture(null);
    }));
  }

  @Override
  public int size() {
    return snapshot().size();
  }

  @Override
  public Set<Entry<K, V>> entrySet() {
    return snapshot().entrySet();
  }

  private Map<K, V> snapshot() {
    return await(store.read(tr -> schema.readSyncEntries(tr, name)).thenApply(kvs -> {
      Map<K, V> out = new LinkedHashMap<>();
      for (KeyValue kv : kvs) {
        out.put(ClusterValues.decode(schema.unpackSyncKey(name, kv.getKey())), ClusterValues.decode(kv.getValue()));
      }
      return out;
    }));
  }

  private static <T> T await(CompletableFuture<T> f) {
    try {
      return f.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new VertxException("interrupted while waiting for the store", e);
    } catch (ExecutionException e) {
      throw new VertxException("sync map operation failed: " + FdbErrors.unwrap(e.getCause()), e.getCause());
    } catch (TimeoutException e) {
      throw new VertxException("sync map operation got no answer from the store within " + TIMEOUT_SECONDS + " s", e);
    }
  }
}
