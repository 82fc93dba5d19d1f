package io.github.fdbcoord.service;

import io.vertx.core.Context;
import io.vertx.core.Future;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The worker threads every FoundationDB call runs on. The store gets {@link #executor()} as its
 * transactions' executor, so fdb-java completions run here too; and since the embedded engine
 * completes a read synchronously on the calling thread, the layer call itself is started here as
 * well ({@link #call}). Results come back on the caller's Vert.x context.
 */
public final class StoreWorkers implements AutoCloseable {
  /** Prefix of the worker threads' names. */
  public static final String THREAD_PREFIX = "fdb-coord-worker-";

  private final ExecutorService executor;

  public StoreWorkers(int threads) {
    AtomicInteger n = new AtomicInteger();
    ThreadFactory factory = r -> {
      Thread t = new Thread(r, THREAD_PREFIX + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
    this.executor = new ThreadPoolExecutor(threads, threads, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
        factory);
  }

  public ExecutorService executor() {
    return executor;
  }

  /** Runs {@code call} on a worker thread; the returned future completes on {@code context}. */
  public <T> Future<T> call(Context context, Supplier<? extends CompletableFuture<T>> call) {
    CompletableFuture<T> stage;
    try {
      stage = CompletableFuture.supplyAsync(call, executor).thenCompose(f -> f);
    } catch (RuntimeException e) {
      return Future.failedFuture(e);
    }
    return Future.fromCompletionStage(stage, context);
  }

  /**
   * Runs {@code call} on a worker thread; the returned future completes (and runs its callbacks)
   * on the worker thread that completed the call. For code whose callbacks are thread-safe and
   * must not hop (the layer verticles reply straight from there).
   */
  public <T> Future<T> callAndStay(Supplier<? extends CompletableFuture<T>> call) {
    CompletableFuture<T> stage;
    try {
      stage = CompletableFuture.supplyAsync(call, executor).thenCompose(f -> f);
    } catch (RuntimeException e) {
      return Future.failedFuture(e);
    }
    return Future.fromCompletionStage(stage);
  }

  /** Runs {@code task} on a worker thread (for blocking work such as opening the store). */
  public <T> Future<T> blocking(Context context, Supplier<T> task) {
    CompletableFuture<T> stage;
    try {
      stage = CompletableFuture.supplyAsync(task, executor);
    } catch (RuntimeException e) {
      return Future.failedFuture(e);
    }
    return Future.fromCompletionStage(stage, context);
  }

  @Override
  public void close() {
    executor.shutdown();
  }
}
