package io.github.fdbcoord.mutex;

import com.apple.foundationdb.tuple.Versionstamp;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.fdb.FdbErrors;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
/**
 * One acquire: try, then wait on the mutex's watcher until granted, timed out or cancelled. While
 * it waits it heartbeats its queue entry; once granted it hands over a {@link HeartbeatingHandle}.
 */
final class MutexAcquisition {
  private final FdbMutexService service;
  private final String name;
  private final String owner;
  private final Duration timeout;
  private final long deadline;
  private final CompletableFuture<MutexHandle> result = new CompletableFuture<>();
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

  CompletableFuture<MutexHandle> start() {
    attempt().whenComplete((handle, e) -> {
      if (e != null) {
        result.completeExceptionally(FdbErrors.unwrap(e));
      } else if (!result.complete(handle)) {
        // Cancelled while the grant was being made: do not leak a held mutex.
        handle.release();
      }
    });
    result.whenComplete((h, e) -> {
      OwnershipWatcher.Waiter w = waiter;
      if (result.isCancelled() && w != null) {
        w.complete(OwnershipWatcher.Outcome.gaveUp());
      }
    });
    return result;
  }

  private CompletableFuture<MutexHandle> attempt() {
    return service.tryAcquire(name, owner).thenCompose(r -> r.isHeld()
        ? CompletableFuture.completedFuture(newHandle(r.token().get(), null))
        : await(r.ticket().get()));
  }

  private CompletableFuture<MutexHandle> await(Versionstamp ticket) {
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
    // A grant is completed by the watcher on the executor's thread that read it: the handle is made
    // there, without waking another thread. The other outcomes run transactions and may come from
    // the timer or a caller's thread, so they start on the executor.
    return w.thenCompose(outcome -> outcome.kind() == OwnershipWatcher.Kind.GRANTED
        ? CompletableFuture.completedFuture(newHandle(outcome.owner().token(), ticket))
        : CompletableFuture.supplyAsync(() -> afterWait(outcome, ticket), service.executor).thenCompose(f -> f));
  }

  private CompletableFuture<MutexHandle> afterWait(OwnershipWatcher.Outcome outcome, Versionstamp ticket) {
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
    } catch (java.util.concurrent.RejectedExecutionException e) {
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
  private CompletableFuture<MutexHandle> giveUp(Versionstamp ticket) {
    return service.leaveUnlessGranted(name, owner).thenApply(granted -> {
      if (granted != null) {
        return newHandle(granted.token(), ticket);
      }
      throw new MutexTimeoutException(name, owner, timeout == null ? Duration.ZERO : timeout);
    });
  }

  private MutexHandle newHandle(FencingToken token, Versionstamp ticket) {
    HeartbeatingHandle h = new HeartbeatingHandle(service, name, owner, token, ticket);
    h.startHeartbeats();
    return h;
  }
}
