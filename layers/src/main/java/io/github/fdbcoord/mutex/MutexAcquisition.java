package io.github.fdbcoord.mutex;

import com.apple.foundationdb.tuple.Versionstamp;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.fdb.FdbErrors;

import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The one wait for a grant, behind both {@link MutexService#acquire} (which wraps the grant in a
 * {@link HeartbeatingHandle}) and {@link MutexService#awaitGrant} (which hands it over as it is):
 * try, then wait on the mutex's watcher until granted, timed out or cancelled, heartbeating the
 * queue entry meanwhile. Every way out of the queue is one transaction, {@code leaveUnlessGranted}.
 */
final class MutexAcquisition implements MutexWait {
  /** A grant, with the ticket of the enqueue that led to it when the owner had to wait. */
  record Grant(FencingToken token, Versionstamp ticket) {}

  private final FdbMutexService service;
  private final String name;
  private final String owner;
  private final Duration timeout;
  private final long deadline;
  private final CompletableFuture<Grant> result = new CompletableFuture<>();
  /** Completes once the attempt has finished: out of the queue, or granted (and released if nobody took the grant). */
  private final CompletableFuture<Void> settled = new CompletableFuture<>();
  private volatile OwnershipWatcher.Waiter waiter;

  MutexAcquisition(FdbMutexService service, String name, String owner, Duration timeout) {
    this.service = service;
    this.name = name;
    this.owner = owner;
    this.timeout = timeout;
    // Durations beyond ~146 years do not fit in nanoseconds: they mean "no limit" in practice.
    long nanos = timeout == null || timeout.compareTo(Duration.ofDays(365L * 100)) > 0 ? Long.MAX_VALUE / 4 : timeout.toNanos();
    this.deadline = System.nanoTime() + nanos;
  }

  MutexAcquisition start() {
    attempt().whenComplete((grant, e) -> {
      if (e != null) {
        result.completeExceptionally(FdbErrors.unwrap(e));
        settled.complete(null);
      } else if (result.complete(grant)) {
        settled.complete(null);
      } else {
        // Cancelled while the grant was being made: do not leak a held mutex.
        service.release(name, owner, grant.token()).whenComplete((r, x) -> settled.complete(null));
      }
    });
    return this;
  }

  /** The grant, completed on the thread that read it (the watcher's, for a hand-off). */
  CompletableFuture<Grant> grant() {
    return result;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public String owner() {
    return owner;
  }

  @Override
  public CompletableFuture<FencingToken> granted() {
    return result.thenApply(Grant::token);
  }

  @Override
  public CompletableFuture<Boolean> cancel() {
    boolean ended = result.completeExceptionally(new CancellationException(
        "the wait of '" + owner + "' for mutex '" + name + "' was cancelled"));
    if (ended) {
      OwnershipWatcher.Waiter w = waiter;
      if (w != null) {
        w.complete(OwnershipWatcher.Outcome.gaveUp());
      }
    }
    return settled.thenApply(x -> ended);
  }

  private CompletableFuture<Grant> attempt() {
    return service.tryAcquire(name, owner).thenCompose(r -> r.isHeld()
        ? CompletableFuture.completedFuture(new Grant(r.token().get(), null))
        : await(r.ticket().get()));
  }

  private CompletableFuture<Grant> await(Versionstamp ticket) {
    long remaining = deadline - System.nanoTime();
    if (remaining <= 0 || result.isDone()) {
      return giveUp(ticket);
    }
    OwnershipWatcher.Waiter w = register(ticket);
    waiter = w;
    if (timeout != null) {
      ScheduledFuture<?> timer = service.scheduler.schedule(
          () -> w.complete(OwnershipWatcher.Outcome.gaveUp()), remaining, TimeUnit.NANOSECONDS);
      w.whenComplete((o, e) -> timer.cancel(false));
    }
    if (result.isDone()) {
      w.complete(OwnershipWatcher.Outcome.gaveUp());
    }
    keepQueued(w);
    // A grant is completed by the watcher on the executor's thread that read it: the grant is handed
    // over there, without waking another thread. The other outcomes run transactions and may come
    // from the timer or a caller's thread, so they start on the executor.
    return w.thenCompose(outcome -> outcome.kind() == OwnershipWatcher.Kind.GRANTED
        ? CompletableFuture.completedFuture(new Grant(outcome.owner().token(), ticket))
        : CompletableFuture.supplyAsync(() -> afterWait(outcome, ticket), service.executor).thenCompose(f -> f));
  }

  private CompletableFuture<Grant> afterWait(OwnershipWatcher.Outcome outcome, Versionstamp ticket) {
    switch (outcome.kind()) {
      case RETRY:
        return attempt();
      case CLOSED:
        return CompletableFuture.failedFuture(MutexException.closed(name));
      default:
        return giveUp(ticket);
    }
  }

  /**
   * Heartbeats the queue entry while {@code w} waits, as a handle does its grant: the reaper
   * removes entries nobody keeps alive. An entry found gone (reaped while this process stalled,
   * or removed by someone else) is made again at the back of the queue.
   */
  private void keepQueued(OwnershipWatcher.Waiter w) {
    if (w.isDone() || service.isClosed()) {
      return;
    }
    try {
      ScheduledFuture<?> beat = service.scheduler.schedule(() -> service.heartbeatWaiter(name, owner).whenComplete((r, e) -> {
        if (e instanceof MutexException && ((MutexException) e).kind() != MutexException.Kind.CLOSED) {
          w.complete(new OwnershipWatcher.Outcome(OwnershipWatcher.Kind.RETRY, null));
        } else {
          keepQueued(w);
        }
      }), service.options().heartbeatInterval().toNanos(), TimeUnit.NANOSECONDS);
      w.whenComplete((o, e) -> beat.cancel(false));
    } catch (RejectedExecutionException e) {
      // The scheduler stopped with the service; the watcher fails the wait.
    }
  }

  private OwnershipWatcher.Waiter register(Versionstamp ticket) {
    while (true) {
      OwnershipWatcher.Waiter w = service.watcher(name).await(owner, ticket);
      if (w != null) {
        return w;
      }
      // That watcher retired between lookup and registration: the next lookup makes a fresh one.
    }
  }

  /** Timed out or cancelled: leave the queue, unless the mutex was granted meanwhile. */
  private CompletableFuture<Grant> giveUp(Versionstamp ticket) {
    return service.leaveUnlessGranted(name, owner).thenApply(granted -> {
      if (granted != null) {
        return new Grant(granted.token(), ticket);
      }
      throw new MutexTimeoutException(name, owner, timeout == null ? Duration.ZERO : timeout);
    });
  }
}
