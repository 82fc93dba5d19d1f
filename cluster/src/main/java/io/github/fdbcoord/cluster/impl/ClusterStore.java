package io.github.fdbcoord.cluster.impl;

import io.github.fdbcoord.fdb.FdbErrors;
import com.apple.foundationdb.Database;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.directory.DirectoryLayer;
import io.vertx.core.Completable;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VertxException;
import io.vertx.core.internal.VertxInternal;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * One node's way to the store: its database, the store's executor, the cluster's key schema, and
 * the transaction helpers every part of the manager composes. Internal to the cluster manager.
 *
 * <p>Every transaction starts on the store's executor, never on the calling thread (an event loop).
 */
public final class ClusterStore {
  private final Database db;
  private final Executor executor;
  private final ClusterSchema schema;
  private final Duration operationTimeout;
  private final VertxInternal vertx;
  /** The batchers of the counters this node is writing to now (an idle one leaves). */
  private final ConcurrentHashMap<String, CounterBatcher> counters = new ConcurrentHashMap<>();
  /** Counter transactions committed and attempted (a conflict is one more attempt): tests compare them with the calls. */
  final LongAdder counterCommits = new LongAdder();
  final LongAdder counterAttempts = new LongAdder();
  /**
   * For tests: runs on every counter attempt between its writes and its commit, which waits for its
   * future (a failed future fails the attempt as the commit would). Null outside tests.
   */
  volatile Function<Transaction, CompletableFuture<Void>> counterBeforeCommit;

  ClusterStore(Database db, ClusterSchema schema, Duration operationTimeout, VertxInternal vertx) {
    this.db = db;
    this.executor = db.getExecutor();
    this.schema = schema;
    this.operationTimeout = operationTimeout;
    this.vertx = vertx;
  }

  /** Opens (creating if needed) the cluster's directory {@code directory} on {@code db}. */
  public static CompletableFuture<ClusterStore> open(Database db, List<String> directory, Duration operationTimeout, VertxInternal vertx) {
    return DirectoryLayer.getDefault().createOrOpen(db, directory)
        .thenApply(dir -> new ClusterStore(db, new ClusterSchema(dir), operationTimeout, vertx));
  }

  ClusterSchema schema() {
    return schema;
  }

  /** The store's executor: where every store call and its continuations run. */
  public Executor executor() {
    return executor;
  }

  /** The database this node works on. */
  public Database database() {
    return db;
  }

  /** How long an operation may wait for the store before it fails with {@code transaction_timed_out}. */
  Duration operationTimeout() {
    return operationTimeout;
  }

  /** Queues {@code call} on counter {@code name}'s batcher, behind the calls this node made before it. */
  void submit(String name, CounterBatcher.Call call) {
    for (;;) {
      CounterBatcher batcher = counter(name);
      if (batcher.offer(call)) {
        return;
      }
      counters.remove(name, batcher);
    }
  }

  /** Counter {@code name}'s batcher on this node (created when none is active); tests hook into it. */
  CounterBatcher counter(String name) {
    return counters.computeIfAbsent(name, n -> new CounterBatcher(this, n));
  }

  void retire(String name, CounterBatcher batcher) {
    counters.remove(name, batcher);
  }

  /**
   * A transaction (retry loop) bounded by the operation timeout: while the store is unavailable,
   * operations fail with FoundationDB's {@code transaction_timed_out} (1031) instead of waiting for ever.
   */
  <T> CompletableFuture<T> run(Function<Transaction, CompletableFuture<T>> body) {
    long timeout = operationTimeout.toMillis();
    return runUnbounded(tr -> {
      tr.options().setTimeout(timeout);
      return body.apply(tr);
    });
  }

  /**
   * Runs {@code writes} only while node {@code nodeId}'s record exists, read with a conflict, so that
   * an eviction that removes the node's keys can never leave one of these writes behind.
   */
  CompletableFuture<Void> whileNodeExists(String nodeId, Consumer<Transaction> writes) {
    return run(tr -> schema.readNodeRecord(tr, nodeId).thenApply(record -> {
      if (record != null) {
        writes.accept(tr);
      }
      return (Void) null;
    }));
  }

  <T> CompletableFuture<T> read(Function<ReadTransaction, CompletableFuture<T>> body) {
    return run(body::apply);
  }

  /** A transaction without a time limit: the watch loops, whose watches must outlive any timeout. */
  <T> CompletableFuture<T> runUnbounded(Function<Transaction, CompletableFuture<T>> body) {
    return CompletableFuture.supplyAsync(() -> db.runAsync(body, executor), executor).thenCompose(f -> f);
  }

  /** A Vert.x future of the caller's context, completed from {@code op} run on the store's executor. */
  <T> Future<T> future(Supplier<CompletableFuture<T>> op) {
    return toVertx(CompletableFuture.supplyAsync(op, executor).thenCompose(f -> f));
  }

  /** A Vert.x future of the caller's context, completed from {@code f}. */
  <T> Future<T> toVertx(CompletableFuture<T> f) {
    Promise<T> promise = vertx.getOrCreateContext().promise();
    f.whenComplete((r, e) -> {
      if (e != null) {
        promise.fail(FdbErrors.unwrap(e));
      } else {
        promise.complete(r);
      }
    });
    return promise.future();
  }

  /** Completes the SPI's promise from {@code f}, with the cause of a failure rather than its wrapper. */
  public static <T> void complete(CompletableFuture<T> f, Completable<T> promise) {
    f.whenComplete((r, e) -> {
      if (e != null) {
        promise.fail(FdbErrors.unwrap(e));
      } else {
        promise.succeed(r);
      }
    });
  }

  /** The failure of an operation that needs a joined, active node. */
  public static VertxException notActive() {
    return new VertxException("the cluster manager is not active", true);
  }
}
