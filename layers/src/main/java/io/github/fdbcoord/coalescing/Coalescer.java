package io.github.fdbcoord.coalescing;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.ToLongFunction;

/**
 * Serves concurrent requests of one kind (interns on one namespace, allocations) with as few transactions as they allow,
 * the way FoundationDB's own client batches reads: a request that finds fewer than
 * {@code maxInFlight} transactions running starts one at once (a lone client waits for nothing);
 * requests that arrive while that many are running wait, and the next transaction to start takes
 * all of them that fit its bounds ({@code maxKeys} keys, {@code maxWeight} bytes) together. The wait
 * is bounded by the transactions in flight, which are bounded by the store's timeout.
 *
 * <p>Each request gets the whole batch's map and picks its own keys from it. A failure of a shared
 * transaction is not passed on to its requests unless every one of them would have met it alone
 * ({@code sharedFailure}: the namespace is gone, the store timed out): otherwise each request is
 * run again alone, so one request's problem (a batch too large for one transaction, say) stays its
 * own and never fails its neighbours.
 *
 * <p>Waiting pays when a transaction's fixed cost (its read version, its commit) is large beside its
 * per-key cost, i.e. for small requests; a request as large as {@code fullBatch} keys gains little
 * from sharing and loses the concurrency it waits for. So requests that bring the waiting keys to
 * {@code fullBatch} start a transaction at once as long as fewer than {@code maxInFlightFull} run:
 * many callers with large batches get as many transactions as they would with a coalescer each,
 * many callers with small ones still share.
 *
 * <p>On a store whose transactions complete before they return (the in-memory engine), no request
 * ever finds one running, so each would run alone however many arrive together. A {@code window}
 * executor fixes that: the request that would start a transaction at once hands its start to the
 * window instead, and every request submitted before the window runs it joins that transaction. An
 * executor that queues the start behind the work already queued on the caller's event loop batches
 * the requests the loop received together; one that runs the task at once is the same as no window.
 *
 * @param <K> what a request asks about (a string, an id)
 * @param <V> what the store answers for it
 */
public final class Coalescer<K, V> {
  private final Function<List<K>, CompletableFuture<Map<K, V>>> transaction;
  private final Predicate<Throwable> sharedFailure;
  private final ToLongFunction<K> weight;
  private final int maxKeys;
  private final long maxWeight;
  private final int maxInFlight;
  private final int fullBatch;
  private final int maxInFlightFull;
  private final Executor executor;
  /** Where a transaction that may start at once starts (null: on the submitting thread, at once). */
  private final Executor window;
  private final ArrayDeque<Request<K, V>> waiting = new ArrayDeque<>();
  /** Keys of the {@link #waiting} requests, counted with repeats. */
  private long waitingKeys;
  private int inFlight;
  /** Whether a start handed to {@link #window} has not run yet: later requests join it. */
  private boolean startInWindow;
  /** Transactions started, batched or alone; tests compare it with the requests served. */
  public final LongAdder transactions = new LongAdder();

  public Coalescer(Function<List<K>, CompletableFuture<Map<K, V>>> transaction, Predicate<Throwable> sharedFailure,
      ToLongFunction<K> weight, int maxKeys, long maxWeight, int maxInFlight, Executor executor) {
    this(transaction, sharedFailure, weight, maxKeys, maxWeight, maxInFlight, executor, null);
  }

  /** As the other constructor, with transactions that may start at once started through {@code window} (null: none). */
  public Coalescer(Function<List<K>, CompletableFuture<Map<K, V>>> transaction, Predicate<Throwable> sharedFailure,
      ToLongFunction<K> weight, int maxKeys, long maxWeight, int maxInFlight, Executor executor, Executor window) {
    this(transaction, sharedFailure, weight, maxKeys, maxWeight, maxInFlight, Integer.MAX_VALUE, maxInFlight, executor,
        window);
  }

  /**
   * As the other constructors, with waiting requests that hold {@code fullBatch} keys or more started
   * at once while fewer than {@code maxInFlightFull} transactions run (at least {@code maxInFlight}).
   */
  public Coalescer(Function<List<K>, CompletableFuture<Map<K, V>>> transaction, Predicate<Throwable> sharedFailure,
      ToLongFunction<K> weight, int maxKeys, long maxWeight, int maxInFlight, int fullBatch, int maxInFlightFull,
      Executor executor, Executor window) {
    if (maxInFlight < 1 || maxInFlightFull < maxInFlight || fullBatch < 1) {
      throw new IllegalArgumentException("need 1 <= maxInFlight <= maxInFlightFull and fullBatch >= 1, got "
          + maxInFlight + ", " + maxInFlightFull + ", " + fullBatch);
    }
    this.fullBatch = fullBatch;
    this.maxInFlightFull = maxInFlightFull;
    this.window = window;
    this.transaction = transaction;
    this.sharedFailure = sharedFailure;
    this.weight = weight;
    this.maxKeys = maxKeys;
    this.maxWeight = maxWeight;
    this.maxInFlight = maxInFlight;
    this.executor = executor;
  }

  private record Request<K, V>(List<K> keys, long weight, CompletableFuture<Map<K, V>> result) {}

  /** The store's answers for {@code keys} (distinct, already validated), among those of the batch that served them. */
  public CompletableFuture<Map<K, V>> submit(List<K> keys) {
    long w = 0;
    for (K k : keys) {
      w += weight.applyAsLong(k);
    }
    Request<K, V> request = new Request<>(keys, w, new CompletableFuture<>());
    List<Request<K, V>> batch;
    synchronized (this) {
      waiting.add(request);
      waitingKeys += keys.size();
      if (startInWindow || !mayStart()) {
        return request.result();
      }
      inFlight++;
      if (window != null) {
        startInWindow = true;
        batch = null;
      } else {
        batch = take();
      }
    }
    if (batch != null) {
      run(batch);
      return request.result();
    }
    try {
      window.execute(this::startFromWindow);
    } catch (RuntimeException rejected) {
      startFromWindow(); // a window that takes no task (shut down) must not leave the requests waiting
    }
    return request.result();
  }

  /** Whether another transaction may start now: below the coalescing limit, or a full batch waits. */
  private boolean mayStart() {
    return inFlight < maxInFlight || (waitingKeys >= fullBatch && inFlight < maxInFlightFull);
  }

  /** The start handed to the window: takes every request that arrived meanwhile (and fits). */
  private void startFromWindow() {
    List<Request<K, V>> batch;
    synchronized (this) {
      if (!startInWindow) {
        return;
      }
      startInWindow = false;
      if (waiting.isEmpty()) {
        // A transaction that completed meanwhile took them (next()).
        inFlight--;
        return;
      }
      batch = take();
    }
    run(batch);
  }

  /** The waiting requests the next transaction takes: at least one, then as many as fit its bounds. */
  private List<Request<K, V>> take() {
    List<Request<K, V>> batch = new ArrayList<>();
    int keys = 0;
    long w = 0;
    while (!waiting.isEmpty()) {
      Request<K, V> next = waiting.peek();
      if (!batch.isEmpty() && (keys + next.keys().size() > maxKeys || w + next.weight() > maxWeight)) {
        break;
      }
      batch.add(waiting.poll());
      waitingKeys -= next.keys().size();
      keys += next.keys().size();
      w += next.weight();
    }
    return batch;
  }

  private void run(List<Request<K, V>> batch) {
    List<K> keys;
    if (batch.size() == 1) {
      keys = batch.get(0).keys();
    } else {
      LinkedHashSet<K> union = new LinkedHashSet<>();
      batch.forEach(r -> union.addAll(r.keys()));
      keys = new ArrayList<>(union);
    }
    start(keys).whenComplete((answers, error) -> {
      if (error == null) {
        batch.forEach(r -> r.result().complete(answers));
      } else if (batch.size() > 1 && !sharedFailure.test(unwrap(error))) {
        batch.forEach(r -> start(r.keys()).whenComplete((alone, e) -> complete(r, alone, e)));
      } else {
        batch.forEach(r -> r.result().completeExceptionally(unwrap(error)));
      }
      next();
    });
  }

  /** Starts the next batch when requests wait, on the executor: the completing thread may be the store's own. */
  private void next() {
    List<Request<K, V>> batch;
    synchronized (this) {
      if (waiting.isEmpty()) {
        inFlight--;
        return;
      }
      batch = take();
    }
    try {
      executor.execute(() -> run(batch));
    } catch (RuntimeException rejected) {
      synchronized (this) {
        inFlight--;
      }
      batch.forEach(r -> r.result().completeExceptionally(rejected));
    }
  }

  private CompletableFuture<Map<K, V>> start(List<K> keys) {
    transactions.increment();
    try {
      return transaction.apply(keys);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  private static <K, V> void complete(Request<K, V> r, Map<K, V> answers, Throwable error) {
    if (error == null) {
      r.result().complete(answers);
    } else {
      r.result().completeExceptionally(unwrap(error));
    }
  }

  private static Throwable unwrap(Throwable t) {
    return t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
  }
}
