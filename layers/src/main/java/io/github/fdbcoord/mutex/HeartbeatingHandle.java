package io.github.fdbcoord.mutex;

import io.github.fdbcoord.fdb.FdbErrors;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.tuple.Versionstamp;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.api.MutexOwner;

import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A grant held through {@link MutexService#acquire}: heartbeats it every
 * {@link MutexOptions#heartbeatInterval()} until released, closed with the service, or lost (a
 * heartbeat refused: the reaper ended the grant).
 */
final class HeartbeatingHandle implements MutexHandle {
  private final FdbMutexService service;
  private final String name;
  private final String owner;
  private final FencingToken token;
  private final Versionstamp ticket;
  private final CompletableFuture<MutexException> lost = new CompletableFuture<>();
  private volatile boolean released;
  private volatile ScheduledFuture<?> next;
  /** See {@link #exclusiveUntilNanos()}; guarded by {@code this}. */
  private boolean confirmed;
  private long exclusiveUntil;
  /** Hand-overs in flight: a refusal seen meanwhile may be their own commit's doing, so it waits for their outcome. */
  private final AtomicInteger handingOver = new AtomicInteger();
  /** A refusal seen while a hand-over was in flight; guarded by {@code this}. */
  private MutexException refusedMeanwhile;

  HeartbeatingHandle(FdbMutexService service, String name, String owner, FencingToken token, Versionstamp ticket) {
    this.service = service;
    this.name = name;
    this.owner = owner;
    this.token = token;
    this.ticket = ticket;
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
  public FencingToken token() {
    return token;
  }

  @Override
  public Optional<Versionstamp> ticket() {
    return Optional.ofNullable(ticket);
  }

  @Override
  public boolean isHeld() {
    return !released && !lost.isDone();
  }

  @Override
  public CompletableFuture<LockEvent> release() {
    markReleased();
    return service.release(name, owner, token);
  }

  @Override
  public CompletableFuture<LockEvent> releaseTo(String successor) {
    handingOver.incrementAndGet();
    CompletableFuture<LockEvent> handedOver;
    try {
      handedOver = service.releaseTo(name, owner, token, successor);
    } catch (RuntimeException e) {
      handingOver.decrementAndGet();
      throw e;
    }
    return handedOver.whenComplete((event, e) -> handOverDone(e));
  }

  private void handOverDone(Throwable failure) {
    MutexException lostBy = null;
    synchronized (this) {
      if (failure == null) {
        markReleased();
      }
      handingOver.decrementAndGet();
      Throwable cause = failure instanceof CompletionException ? failure.getCause() : failure;
      if (cause instanceof MutexException refusal && refusal.kind() != MutexException.Kind.NOT_QUEUED) {
        lostBy = refusal;
      } else if (failure != null) {
        // The hand-over did not happen, so a heartbeat or fence refused meanwhile saw the grant end otherwise.
        lostBy = refusedMeanwhile;
      }
    }
    if (lostBy != null) {
      refused(lostBy);
    }
  }

  /**
   * A heartbeat, fence or hand-over found the grant ended: the handle lost it, unless it released it, or a hand-over
   * in flight may have ended it (then that hand-over's outcome decides).
   */
  private void refused(MutexException refusal) {
    synchronized (this) {
      if (released) {
        return;
      }
      if (handingOver.get() > 0) {
        refusedMeanwhile = refusal;
        return;
      }
    }
    stopHeartbeats();
    lost.complete(refusal);
  }

  /** Stops heartbeating for a release the caller makes itself (several grants released in one transaction). */
  void markReleased() {
    released = true;
    stopHeartbeats();
  }

  @Override
  public CompletableFuture<MutexOwner> heartbeat() {
    long started = System.nanoTime();
    return service.heartbeat(name, owner, token).whenComplete((r, e) -> {
      if (e == null) {
        confirmedAt(started);
      }
      if (e instanceof MutexException refusal) {
        refused(refusal);
      }
    });
  }

  @Override
  public CompletableFuture<Void> fence(Transaction tr) {
    return FdbErrors.unwrapped(service.fence(tr, name, owner, token).whenComplete((r, e) -> {
      // A grant found ended at a read version stays ended: no later read can find it current again.
      Throwable cause = e instanceof CompletionException ? e.getCause() : e;
      if (cause instanceof MutexException refusal) {
        refused(refusal);
      }
    }));
  }

  @Override
  public CompletableFuture<MutexException> lost() {
    return lost;
  }

  private synchronized void confirmedAt(long startedNanos) {
    long until = startedNanos + service.options().lease().toNanos();
    if (!confirmed || until - exclusiveUntil > 0) {
      exclusiveUntil = until;
      confirmed = true;
    }
  }

  @Override
  public synchronized OptionalLong exclusiveUntilNanos() {
    return confirmed ? OptionalLong.of(exclusiveUntil) : OptionalLong.empty();
  }

  void startHeartbeats() {
    service.track(this);
    schedule();
  }

  private void schedule() {
    if (released || lost.isDone() || service.isClosed()) {
      service.untrack(this);
      return;
    }
    try {
      next = service.scheduler.schedule(this::beat, service.options().heartbeatInterval().toNanos(), TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      service.untrack(this); // scheduler shut down with the service
    }
  }

  private void beat() {
    if (released || lost.isDone()) {
      return;
    }
    // Transient storage errors are retried at the next interval; only a refusal ends the grant.
    heartbeat().whenComplete((r, e) -> schedule());
  }

  void stopHeartbeats() {
    ScheduledFuture<?> n = next;
    if (n != null) {
      n.cancel(false);
    }
    service.untrack(this);
  }

  @Override
  public String toString() {
    return "MutexHandle(" + name + ", " + owner + ", " + token + ")";
  }
}
