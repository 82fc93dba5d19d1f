package io.github.fdbcoord.rwlock;

import io.github.fdbcoord.lease.GrantHints;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/** One waiting acquire: re-reads on every change of holders (a watch) and renews its queue entry every heartbeat interval. */
final class ReadWriteLockWait implements GrantHints.Wait {
  private final FdbReadWriteLockService service;
  final String name;
  final String owner;
  final LockMode mode;
  final Duration timeout;
  final long deadline;
  final CompletableFuture<ReadWriteGrant> result = new CompletableFuture<>();
  /** Completed by close and when the result completes (cancellation): the wait stops waiting. */
  final CompletableFuture<Void> wake = new CompletableFuture<>();
  /** Completes once a wait ended without a grant has left the queue, and released a grant that raced its end. */
  final CompletableFuture<Void> left = new CompletableFuture<>();
  volatile long lastRenewal = System.nanoTime();
  boolean first = true;
  /** Hints of a grant received; a step that began before the last one does not wait for a change. */
  private final AtomicLong nudges = new AtomicLong();
  private volatile long nudgesAtStep;
  /** Completed by a hint to end the current wait between steps. */
  private volatile CompletableFuture<Boolean> nudged;

  ReadWriteLockWait(FdbReadWriteLockService service, String name, String owner, LockMode mode, Duration timeout) {
    this.service = service;
    this.name = name;
    this.owner = owner;
    this.mode = mode;
    this.timeout = timeout;
    this.deadline = timeout == null ? Long.MAX_VALUE : System.nanoTime() + timeout.toNanos();
    result.whenComplete((h, e) -> wake.complete(null));
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public String owner() {
    return owner;
  }

  /** A grant was committed for this owner: the wait reads again now rather than when its watch fires. */
  @Override
  public void nudge() {
    nudges.incrementAndGet();
    CompletableFuture<Boolean> n = nudged;
    if (n != null) {
      n.complete(false);
    }
  }

  void step(boolean renew) {
    if (result.isDone()) {
      // Cancelled: leave, and release a grant that raced the cancellation.
      leaveQuietly();
      return;
    }
    if (service.isClosed()) {
      result.completeExceptionally(ReadWriteLockException.closed(name));
      return;
    }
    if (!first && System.nanoTime() - deadline >= 0) {
      timeOut();
      return;
    }
    first = false;
    if (renew) {
      lastRenewal = System.nanoTime();
    }
    nudgesAtStep = nudges.get();
    AtomicReference<CompletableFuture<Void>> watch = new AtomicReference<>();
    service.transact(tr -> service.acquireIn(tr, name, owner, mode, renew).thenApply(s -> {
      if (s.versionstamp() == null && s.value().isEmpty()) {
        watch.set(service.watchesDisabled ? new CompletableFuture<>() : service.schema().watchGrant(tr, name, owner));
      }
      return s;
    })).whenComplete((granted, e) -> {
      if (e != null) {
        FdbReadWriteLockService.cancel(watch.get());
        result.completeExceptionally(e);
        leaveQuietly();
      } else if (granted.isPresent()) {
        FdbReadWriteLockService.cancel(watch.get());
        handOver(granted.get());
      } else {
        await(watch.get());
      }
    });
  }

  private void await(CompletableFuture<Void> watch) {
    long renewIn = service.options().heartbeatInterval().toNanos() - (System.nanoTime() - lastRenewal);
    long delay = Math.max(0, Math.min(renewIn, deadline - System.nanoTime()));
    CompletableFuture<Boolean> timer = new CompletableFuture<>();
    ScheduledFuture<?> scheduled = null;
    try {
      scheduled = service.scheduler().schedule(() -> timer.complete(true), delay, TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException closing) {
      timer.complete(true);
    }
    // A failed watch is left to the timer, so that a watch failing at once cannot spin.
    CompletableFuture<Boolean> fired = new CompletableFuture<>();
    watch.whenComplete((v, e) -> {
      if (e == null) {
        fired.complete(false);
      }
    });
    CompletableFuture<Boolean> hinted = new CompletableFuture<>();
    nudged = hinted;
    // A hint that came while the step ran may be of a grant the step read too early to see.
    if (nudges.get() != nudgesAtStep) {
      hinted.complete(false);
    }
    ScheduledFuture<?> s = scheduled;
    CompletableFuture.anyOf(timer, fired, wake, hinted).whenCompleteAsync((v, e) -> {
      if (s != null) {
        s.cancel(false);
      }
      FdbReadWriteLockService.cancel(watch);
      boolean renew = System.nanoTime() - lastRenewal >= service.options().heartbeatInterval().toNanos();
      step(renew);
    }, service.executor());
  }

  private void handOver(ReadWriteGrant grant) {
    if (!result.complete(grant)) {
      service.release(grant).handle((v, e) -> left.complete(null));
    }
  }

  private void timeOut() {
    service.transact(tr -> service.leaveIn(tr, name, owner)).whenComplete((left, e) -> {
      if (e != null) {
        result.completeExceptionally(e);
      } else if (left.held() != null) {
        handOver(left.held());
      } else {
        result.completeExceptionally(new ReadWriteLockException(ReadWriteLockException.Kind.TIMED_OUT, name,
            "'" + owner + "' was not granted lock '" + name + "' in " + mode + " mode within "
                + timeout.toMillis() + " ms and left its queue"));
      }
    });
  }

  private void leaveQuietly() {
    if (service.isClosed()) {
      left.complete(null);
      return;
    }
    service.transact(tr -> service.leaveIn(tr, name, owner)).whenComplete((l, e) -> {
      if (e == null && l.held() != null && l.held().mode() == mode) {
        service.release(l.held()).handle((v, x) -> left.complete(null));
      } else {
        left.complete(null);
      }
    });
  }
}
