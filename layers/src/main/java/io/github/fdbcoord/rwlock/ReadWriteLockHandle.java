package io.github.fdbcoord.rwlock;

import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.tuple.Versionstamp;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A grant of a read-write lock that heartbeats itself every
 * {@link ReadWriteLockOptions#heartbeatInterval()} until released, downgraded away, lost or its
 * service closed. {@link #lost()} completes when a heartbeat finds the grant ended.
 */
public final class ReadWriteLockHandle {
  private final FdbReadWriteLockService service;
  private final CompletableFuture<Void> lost = new CompletableFuture<>();
  private volatile ReadWriteGrant grant;
  private volatile boolean stopped;
  private ScheduledFuture<?> next;

  ReadWriteLockHandle(FdbReadWriteLockService service, ReadWriteGrant grant) {
    this.service = service;
    this.grant = grant;
  }

  /** The current grant (a downgrade replaces it). */
  public ReadWriteGrant grant() {
    return grant;
  }

  public String lock() {
    return grant.lock();
  }

  public String owner() {
    return grant.owner();
  }

  public LockMode mode() {
    return grant.mode();
  }

  /** The current grant's fencing token. */
  public Versionstamp token() {
    return grant.token();
  }

  /** Whether this handle still heartbeats a grant it believes held (no release, no loss, no close). */
  public boolean isHeld() {
    return !stopped;
  }

  /** Completes when a heartbeat found the grant ended (expired and handed on, typically). */
  public CompletableFuture<Void> lost() {
    return lost;
  }

  /** Stops heartbeating and releases the grant (see {@link ReadWriteLockService#release}). */
  public CompletableFuture<Void> release() {
    stopHeartbeats();
    return service.release(grant);
  }

  /** Downgrades the WRITE grant to READ (see {@link ReadWriteLockService#downgrade}); this handle then heartbeats the new grant. */
  public CompletableFuture<ReadWriteLockHandle> downgrade() {
    return service.downgrade(grant).thenApply(g -> {
      grant = g;
      return this;
    });
  }

  /** Fences {@code tr} with the current grant (see {@link ReadWriteLockService#fence}). */
  public CompletableFuture<Void> fence(Transaction tr) {
    return service.fence(tr, grant);
  }

  synchronized void startHeartbeats() {
    if (!stopped) {
      try {
        next = service.scheduler().schedule(this::beat, service.options().heartbeatInterval().toMillis(), TimeUnit.MILLISECONDS);
      } catch (RejectedExecutionException closing) {
        stopped = true;
      }
    }
  }

  private void beat() {
    ReadWriteGrant beating = grant;
    service.heartbeat(beating).whenComplete((g, e) -> {
      if (e instanceof ReadWriteLockException r && r.kind() == ReadWriteLockException.Kind.NOT_HELD && beating == grant) {
        stopHeartbeats();
        lost.complete(null);
      } else {
        startHeartbeats();
      }
    });
  }

  /** Stops heartbeating (the grant stays until released or expired). */
  synchronized void stopHeartbeats() {
    stopped = true;
    if (next != null) {
      next.cancel(false);
    }
    service.untrack(this);
  }
}
