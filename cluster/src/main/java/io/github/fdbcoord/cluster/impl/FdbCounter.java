package io.github.fdbcoord.cluster.impl;

import io.vertx.core.Future;
import io.vertx.core.shareddata.Counter;

/**
 * A cluster-wide counter: one key holding a 64-bit little-endian integer. Every operation is one
 * serializable transaction, so results are exact under any concurrency (a contended increment
 * conflicts and is retried; it is never lost or counted twice).
 */
public final class FdbCounter implements Counter {
  private final ClusterStore store;
  private final String name;

  /** The counter {@code name} of the cluster on {@code store}. */
  public FdbCounter(ClusterStore store, String name) {
    this.store = store;
    this.name = name;
  }

  @Override
  public Future<Long> get() {
    return store.future(() -> store.read(tr -> store.schema().readCounter(tr, name)));
  }

  @Override
  public Future<Long> incrementAndGet() {
    return addAndGet(1);
  }

  @Override
  public Future<Long> getAndIncrement() {
    return getAndAdd(1);
  }

  @Override
  public Future<Long> decrementAndGet() {
    return addAndGet(-1);
  }

  @Override
  public Future<Long> addAndGet(long value) {
    return store.future(() -> store.run(tr -> {
      // The atomic ADD followed by a read of the same key: the read sees the sum (read-your-writes)
      // and, being a read, makes the result exact for this commit.
      store.schema().addToCounter(tr, name, value);
      return store.schema().readCounter(tr, name);
    }));
  }

  @Override
  public Future<Long> getAndAdd(long value) {
    return store.future(() -> store.run(tr -> {
      store.schema().addToCounter(tr, name, value);
      return store.schema().readCounter(tr, name).thenApply(sum -> sum - value);
    }));
  }

  @Override
  public Future<Boolean> compareAndSet(long expected, long value) {
    return store.future(() -> store.run(tr -> store.schema().readCounter(tr, name).thenApply(current -> {
      if (current != expected) {
        return false;
      }
      store.schema().writeCounter(tr, name, value);
      return true;
    })));
  }
}
