package io.github.fdbcoord.semaphore;

import com.apple.foundationdb.Transaction;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.fdb.FdbErrors;
import io.github.fdbcoord.semaphore.SemaphoreException.Kind;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/** A permit held through {@link SemaphoreService#acquire}: heartbeats it until released, found ended or closed. */
final class HeartbeatingPermit implements SemaphoreHandle {
  private final FdbSemaphoreService service;
  private final String name;
  private final String owner;
  private final FencingToken token;
  private volatile boolean held = true;
  private volatile ScheduledFuture<?> next;

  HeartbeatingPermit(FdbSemaphoreService service, String name, String owner, FencingToken token) {
    this.service = service;
    this.name = name;
    this.owner = owner;
    this.token = token;
  }

  void scheduleHeartbeat() {
    if (!held || service.isClosed()) {
      return;
    }
    try {
      next = service.scheduler.schedule(this::beat, service.options().heartbeatInterval().toNanos(), TimeUnit.NANOSECONDS);
    } catch (RuntimeException rejected) {
      // The scheduler was shut down with the service: the lease runs out.
    }
  }

  private void beat() {
    service.heartbeat(name, owner, token).whenComplete((v, e) -> {
      if (e instanceof SemaphoreException && ((SemaphoreException) e).kind() == Kind.NOT_HELD) {
        held = false;
        service.forget(this);
      } else {
        scheduleHeartbeat();
      }
    });
  }

  void stopHeartbeats() {
    ScheduledFuture<?> f = next;
    if (f != null) {
      f.cancel(false);
    }
  }

  @Override
  public String semaphore() {
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
  public boolean isHeld() {
    return held;
  }

  @Override
  public CompletableFuture<Void> release() {
    held = false;
    service.forget(this);
    stopHeartbeats();
    return service.release(name, owner, token);
  }

  @Override
  public CompletableFuture<Void> fence(Transaction tr) {
    return service.fence(tr, name, owner, token);
  }

  @Override
  public void close() {
    try {
      release().join();
    } catch (RuntimeException e) {
      Throwable cause = FdbErrors.unwrap(e);
      if (!(cause instanceof SemaphoreException && ((SemaphoreException) cause).kind() == Kind.NOT_HELD)) {
        throw e;
      }
    }
  }

  @Override
  public String toString() {
    return "SemaphoreHandle{" + name + ", " + owner + ", " + token + "}";
  }
}
