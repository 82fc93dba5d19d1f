package io.github.fdbcoord.embedded.engine;

import io.github.fdbcoord.embedded.bytes.Bytes;

import io.github.fdbcoord.fdb.FdbErrors;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Registered watches, by key. A watch fires when a commit leaves its key with a value different
 * from the one its transaction saw. Registration and checks happen under the commit lock, so no
 * change can slip between the comparison and the registration; futures complete on each watch's
 * executor, never on the committing thread.
 */
public final class Watches {
  public static final class Watch {
    public final byte[] key;
    public final byte[] seen;
    public final CompletableFuture<Void> future;
    final Executor executor;

    public Watch(byte[] key, byte[] seen, CompletableFuture<Void> future, Executor executor) {
      this.key = key;
      this.seen = seen;
      this.future = future;
      this.executor = executor;
    }
  }

  private final ConcurrentSkipListMap<byte[], List<Watch>> byKey = new ConcurrentSkipListMap<>(Bytes.ORDER);
  /** Watches created and not yet fired, failed or cancelled: what the max-watches limit counts. */
  private final AtomicInteger outstanding = new AtomicInteger();
  private volatile int maxWatches = 10_000;

  public void setMaxWatches(int max) {
    this.maxWatches = max;
  }

  /** Reserves room for one more watch; false when the limit is reached (1032). */
  public boolean reserve() {
    while (true) {
      int n = outstanding.get();
      if (n >= maxWatches) {
        return false;
      }
      if (outstanding.compareAndSet(n, n + 1)) {
        return true;
      }
    }
  }

  public void unreserve() {
    outstanding.decrementAndGet();
  }

  int outstanding() {
    return outstanding.get();
  }

  boolean isEmpty() {
    return byKey.isEmpty();
  }

  /**
   * Registers {@code w} unless the current value already differs from what it saw, in which case
   * it is returned for the caller to fire. Caller holds the commit lock.
   */
  Watch register(Watch w, byte[] current) {
    if (!Arrays.equals(current, w.seen)) {
      return w;
    }
    synchronized (this) {
      byKey.computeIfAbsent(w.key, k -> new ArrayList<>(1)).add(w);
    }
    w.future.whenComplete((v, t) -> {
      if (w.future.isCancelled()) {
        remove(w);
      }
    });
    return null;
  }

  private synchronized void remove(Watch w) {
    List<Watch> list = byKey.get(w.key);
    if (list != null && list.remove(w)) {
      if (list.isEmpty()) {
        byKey.remove(w.key);
      }
      outstanding.decrementAndGet();
    }
  }

  /** Collects (and unregisters) the watches on {@code key} whose value changed. Caller holds the commit lock. */
  synchronized void changed(byte[] key, byte[] value, List<Watch> fired) {
    List<Watch> list = byKey.get(key);
    if (list == null) {
      return;
    }
    list.removeIf(w -> {
      if (!Arrays.equals(w.seen, value)) {
        fired.add(w);
        return true;
      }
      return false;
    });
    if (list.isEmpty()) {
      byKey.remove(key);
    }
  }

  /** Keys in [begin, end) that have watches. */
  synchronized List<byte[]> keysIn(byte[] begin, byte[] end) {
    return new ArrayList<>(byKey.subMap(begin, true, end, false).keySet());
  }

  /** Completes fired watches, each on its own executor. */
  void fire(List<Watch> fired) {
    for (Watch w : fired) {
      // Watches reach here only after leaving the map, so each is counted off exactly once.
      outstanding.decrementAndGet();
      if (w.future.isDone()) {
        continue;
      }
      run(w, () -> w.future.complete(null));
    }
  }

  /**
   * Completes a watch on its executor; when that executor was shut down (its owner stopped without
   * cancelling the watch), on the common pool instead: a watch left behind must neither fail the
   * commit that fires it nor run its callbacks on the committing thread.
   */
  private static void run(Watch w, Runnable completion) {
    try {
      w.executor.execute(completion);
    } catch (RejectedExecutionException stopped) {
      ForkJoinPool.commonPool().execute(completion);
    }
  }

  /** Fails every registered watch (engine closing). */
  synchronized void failAll() {
    for (Map.Entry<byte[], List<Watch>> e : byKey.entrySet()) {
      for (Watch w : e.getValue()) {
        outstanding.decrementAndGet();
        run(w, () -> w.future.completeExceptionally(FdbErrors.error(FdbErrors.OPERATION_CANCELLED)));
      }
    }
    byKey.clear();
  }
}
