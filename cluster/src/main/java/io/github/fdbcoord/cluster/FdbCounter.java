package io.github.fdbcoord.cluster;

import io.vertx.core.Future;
import io.vertx.core.shareddata.Counter;

/**
 * A cluster-wide counter: one key holding a 64-bit little-endian integer. Every operation is one
 * serializable transaction, so results are exact under any concurrency (a contended increment
 * conflicts and is retried; it is never lost or counted twice).
 */
final class FdbCounter implements Counter {
  private final FdbClusterManager manager;
  private final String name;

  FdbCounter(FdbClusterManager manager, String name) {
    this.manager = manager;
    this.name = name;
  }

  @Override
  public Future<Long> get() {
    return manager.future(() -> manager.read(tr -> manager.schema().readCounter(tr, name)));
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
    return manager.future(() -> manager.run(tr -> {
      // The atomic ADD followed by a read of the same key: the read sees the sum (read-your-writes)
      // and, being a read, makes the result exact for this commit.
      manager.schema().addToCounter(tr, name, value);
      return manager.schema().readCounter(tr, name);
    }));
  }

  @Override
  public Future<Long> getAndAdd(long value) {
    return manager.future(() -> manager.run(tr -> {
      manager.schema().addToCounter(tr, name, value);
      return manager.schema().readCounter(tr, name).thenApply(sum -> sum - value);
    }));
  }

  @Override
  public Future<Boolean> compareAndSet(long expected, long value) {
    return manager.future(() -> manager.run(tr -> manager.schema().readCounter(tr, name).thenApply(current -> {
      if (current != expected) {
        return false;
      }
      manager.schema().writeCounter(tr, name, value);
      return true;
    })));
  }
}
