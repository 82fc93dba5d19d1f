package io.github.fdbcoord.cluster.impl;

import io.vertx.core.Future;
import io.vertx.core.shareddata.Counter;

/**
 * A cluster-wide counter: one key holding a 64-bit little-endian integer, and a log of what each
 * write added. Writes made on one node while another of its writes commits share one transaction
 * ({@link CounterBatcher}): each caller gets its own value, exact and linearizable under any
 * concurrency; a batch is applied once or not at all, never twice.
 */
public final class FdbCounter implements Counter {
  private final ClusterStore store;
  private final String name;

  /** The counter {@code name} of the cluster on {@code store}. */
  public FdbCounter(ClusterStore store, String name) {
    this.store = store;
    this.name = name;
  }

  /**
   * A snapshot read at a fresh read version: the version is at least that of every commit
   * acknowledged before the call, so the value includes every write that completed before it (this
   * caller's own included), which is all Vert.x asks. The snapshot only drops the read conflict,
   * which a transaction that writes nothing never checks.
   */
  @Override
  public Future<Long> get() {
    return store.future(() -> store.read(tr -> store.schema().readCounter(tr.snapshot(), name)));
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
    return submit(CounterBatcher.Kind.ADD_AND_GET, value, 0);
  }

  @Override
  public Future<Long> getAndAdd(long value) {
    return submit(CounterBatcher.Kind.GET_AND_ADD, value, 0);
  }

  /**
   * Joins the batch like the other writes, in its order of arrival: it compares with the value the
   * calls before it leave, so a compare-and-set that follows this node's increments without waiting
   * for them sees them, as it would if each call ran alone.
   */
  @Override
  public Future<Boolean> compareAndSet(long expected, long value) {
    return submit(CounterBatcher.Kind.COMPARE_AND_SET, expected, value).map(matched -> matched == 1);
  }

  private Future<Long> submit(CounterBatcher.Kind kind, long a, long b) {
    CounterBatcher.Call call = new CounterBatcher.Call(kind, a, b);
    Future<Long> result = store.toVertx(call.result);
    store.submit(name, call);
    return result;
  }
}
