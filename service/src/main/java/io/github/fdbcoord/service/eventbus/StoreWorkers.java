package io.github.fdbcoord.service.eventbus;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The worker threads of the store. The store gets {@link #executor()} as its transactions'
 * executor, so fdb-java completions run here. A layer call starts here too when the store may
 * block its caller (the durable embedded engine reads its storage synchronously on the calling
 * thread); on a store that never blocks it starts on the caller's thread
 * ({@link #startCallsOnCallerThread}), since a hand-off would only add a thread wake-up per request.
 */
public final class StoreWorkers implements AutoCloseable {
  /** Prefix of the worker threads' names. */
  public static final String THREAD_PREFIX = "fdb-coord-worker-";

  private final ExecutorService executor;
  /**
   * Whether layer calls start on the calling thread: true once the store is known never to block
   * its caller (fdb-java's client, the in-memory engine); a durable embedded engine reads its
   * storage on the calling thread, so its calls start on a worker.
   */
  private volatile boolean onCallerThread;

  /** A pool of {@code threads} daemon threads named {@link #THREAD_PREFIX}{@code n}. */
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

  /** The pool itself: the store's transactions complete on it. */
  public ExecutorService executor() {
    return executor;
  }

  /**
   * Lets {@link #callAndStay} start calls on the calling thread (an event loop): for stores whose
   * calls never block (their work completes on {@link #executor()} or at once), where a hand-off to
   * a worker only adds a thread wake-up to every request.
   */
  public void startCallsOnCallerThread(boolean enabled) {
    this.onCallerThread = enabled;
  }

  /** Whether {@link #callAndStay} starts calls on the calling thread. */
  public boolean startsCallsOnCallerThread() {
    return onCallerThread;
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
   * must not hop (the layer verticles reply straight from there). With
   * {@link #startCallsOnCallerThread} the call starts on the calling thread instead, and a call that
   * completes at once (a cached answer, an in-memory transaction) completes the future before this
   * returns.
   */
  public <T> Future<T> callAndStay(Supplier<? extends CompletableFuture<T>> call) {
    return callAndStay(call, onCallerThread);
  }

  private <T> Future<T> callAndStay(Supplier<? extends CompletableFuture<T>> call, boolean here) {
    CompletableFuture<T> stage;
    try {
      stage = here ? call.get() : CompletableFuture.supplyAsync(call, executor).thenCompose(f -> f);
      if (stage.isDone()) {
        // Done already: a plain succeeded future, without CompletionStage bridging.
        return stage.isCompletedExceptionally() ? Future.failedFuture(causeOf(stage)) : Future.succeededFuture(stage.join());
      }
    } catch (RuntimeException e) {
      return Future.failedFuture(e);
    }
    return Future.fromCompletionStage(stage);
  }

  private static Throwable causeOf(CompletableFuture<?> failed) {
    try {
      failed.join();
      return new IllegalStateException("not failed");
    } catch (CompletionException | CancellationException e) {
      return e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    }
  }

  /**
   * The layers' batch window ({@code InternerOptions.batchWindow}): called on an event loop, it
   * queues the task behind the work already queued there, so the requests that loop received
   * together (an HTTP read of many connections, a burst of event-bus messages) share the
   * transaction the task starts; on any other thread it runs the task at once. Calls start on an
   * event loop only on stores that never block it ({@link #startCallsOnCallerThread}), so it never
   * moves a store call onto an event loop that would not have run it anyway.
   */
  public static final Executor BEHIND_EVENT_LOOP_WORK = task -> {
    Context context = Vertx.currentContext();
    if (context != null && Context.isOnEventLoopThread()) {
      context.runOnContext(v -> task.run());
    } else {
      task.run();
    }
  };

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

  /** Shuts the pool down (queued tasks still run). */
  @Override
  public void close() {
    executor.shutdown();
  }
}
