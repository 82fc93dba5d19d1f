package io.github.fdbcoord.lease;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.Transaction;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.fdb.FdbErrors;
import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * The observe loop the semaphore and the read-write lock share: one transaction reads the state, its version (the
 * versionstamp of the last commit that changed it) and sets watches on the keys every such commit writes; the
 * listener is told the state when its version is newer than the last told; the next read runs when a watch fires.
 * The watches are set in the reading transaction, so no change between the read and the watch is missed. A failed
 * read or watch (store unavailable, {@code too_many_watches}) is followed by another read after a back-off, so the
 * listener still hears of changes, later. Internal: the services' {@code observe} is the API.
 *
 * <p>One read at a time and versions compared before telling: the listener never hears an older state after a
 * newer, and hears each state at most once; changes that come faster than the reads are coalesced into the newest.
 */
public final class StateObserver<S> implements StateSubscription {
  private static final Logger LOG = LoggerFactory.getLogger(StateObserver.class);
  private static final long FIRST_BACKOFF_MS = 20;
  private static final long MAX_BACKOFF_MS = 1000;

  /** One read: the state at {@code version}, and the watches set in the same transaction. */
  public record Read<S>(FencingToken version, S state, List<CompletableFuture<Void>> watches) {}

  private final String name;
  private final Database db;
  private final Executor executor;
  private final ScheduledExecutorService scheduler;
  private final Function<Transaction, CompletableFuture<Read<S>>> read;
  private final BiConsumer<FencingToken, S> listener;
  /** Guarded by this: the newest version told (null before the first), the watches outstanding, closed. */
  private FencingToken told;
  private List<CompletableFuture<Void>> watches = List.of();
  private boolean closed;
  private long backoffMs = FIRST_BACKOFF_MS;

  private StateObserver(String name, Database db, Executor executor, ScheduledExecutorService scheduler,
      Function<Transaction, CompletableFuture<Read<S>>> read, BiConsumer<FencingToken, S> listener) {
    this.name = name;
    this.db = db;
    this.executor = executor;
    this.scheduler = scheduler;
    this.read = read;
    this.listener = listener;
  }

  /**
   * Starts observing {@code name}: {@code read} is the one transaction's reads and watches, {@code listener} gets
   * each newer state with its version, on a thread of {@code executor}, the current one first. The future completes
   * at once; the current state follows.
   */
  public static <S> CompletableFuture<StateSubscription> start(String name, Database db, Executor executor,
      ScheduledExecutorService scheduler, Function<Transaction, CompletableFuture<Read<S>>> read,
      BiConsumer<FencingToken, S> listener) {
    if (listener == null) {
      throw new IllegalArgumentException("an observer needs a listener, got null");
    }
    StateObserver<S> observer = new StateObserver<>(name, db, executor, scheduler, read, listener);
    try {
      executor.execute(observer::readOnce);
    } catch (RejectedExecutionException e) {
      return CompletableFuture.failedFuture(new IllegalStateException("the service is closed", e));
    }
    return CompletableFuture.completedFuture(observer);
  }

  private void readOnce() {
    synchronized (this) {
      if (closed) {
        return;
      }
    }
    CompletableFuture<Read<S>> r;
    try {
      r = FdbErrors.unwrapped(db.runAsync(read, executor));
    } catch (RuntimeException e) {
      retryLater(e);
      return;
    }
    r.whenComplete((snap, e) -> {
      if (e != null) {
        retryLater(e);
        return;
      }
      synchronized (this) {
        if (closed) {
          snap.watches().forEach(w -> w.cancel(false));
          return;
        }
        watches = snap.watches();
      }
      tell(snap.version(), snap.state());
      CompletableFuture.anyOf(snap.watches().toArray(new CompletableFuture<?>[0])).whenComplete((v, we) -> {
        // One fired (or failed): the others would only fire for what the next read sees anyway.
        snap.watches().forEach(w -> w.cancel(false));
        if (we != null) {
          retryLater(we);
        } else {
          // Only a watch that worked ends the back-off: a store refusing watches is read ever less often.
          synchronized (this) {
            backoffMs = FIRST_BACKOFF_MS;
          }
          execute(this::readOnce);
        }
      });
    });
  }

  private void tell(FencingToken version, S state) {
    synchronized (this) {
      if (closed || (told != null && !version.isNewerThan(told))) {
        return;
      }
      told = version;
      try {
        listener.accept(version, state);
      } catch (RuntimeException e) {
        LOG.warn("the observer of '" + name + "' failed on " + state, e);
      }
    }
  }

  private void retryLater(Throwable cause) {
    long delay;
    synchronized (this) {
      if (closed) {
        return;
      }
      delay = backoffMs;
      backoffMs = Math.min(MAX_BACKOFF_MS, backoffMs * 2);
    }
    LOG.debug("observing '" + name + "' failed, reading again in " + delay + " ms", cause);
    try {
      scheduler.schedule(() -> execute(this::readOnce), delay, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      close(); // the service closed its scheduler: nothing more will be read
    }
  }

  private void execute(Runnable task) {
    try {
      executor.execute(task);
    } catch (RejectedExecutionException e) {
      close();
    }
  }

  @Override
  public String name() {
    return name;
  }

  /** Stops delivery and cancels the outstanding watches; a read in flight is dropped. */
  @Override
  public void close() {
    List<CompletableFuture<Void>> outstanding;
    synchronized (this) {
      closed = true;
      outstanding = watches;
      watches = List.of();
    }
    outstanding.forEach(w -> w.cancel(false));
  }
}
