package io.github.fdbcoord.mutex;

import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.tuple.Versionstamp;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.api.MutexOwner;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;

/**
 * A grant held by this process, returned by {@link MutexService#acquire}. It heartbeats every
 * {@link MutexOptions#heartbeatInterval()} until released or until it learns it lost the grant.
 */
public interface MutexHandle {
  String name();

  String owner();

  /** Strictly greater than the token of every earlier grant of this mutex. */
  FencingToken token();

  /** The versionstamp of the enqueue that led to this grant, when the caller had to wait. */
  Optional<Versionstamp> ticket();

  /** Whether the handle believes it holds the grant: neither released nor known lost. */
  boolean isHeld();

  /** Stops heartbeating and releases; fails with {@link NotOwnerException}/{@link MutexNotHeldException} if the grant was lost. */
  CompletableFuture<LockEvent> release();

  /**
   * Hands the grant over to {@code successor}, which waits in this mutex's queue ({@link MutexService#releaseTo}):
   * heartbeats stop once that commits. When {@code successor} does not wait ({@link NotQueuedException}) nothing
   * changes and the grant stays held, heartbeating; a grant found ended completes {@link #lost()}.
   */
  CompletableFuture<LockEvent> releaseTo(String successor);

  /** Heartbeats now, in addition to the scheduled heartbeats. */
  CompletableFuture<MutexOwner> heartbeat();

  /**
   * {@link MutexService#fence} with this grant: {@code tr}, the caller's own transaction, commits only while this
   * grant is the mutex's current one. A refusal also completes {@link #lost()}.
   */
  CompletableFuture<Void> fence(Transaction tr);

  /**
   * Completes, with the refusal that revealed it, when a heartbeat finds the grant ended (the
   * reaper evicted this owner). Never completes for a grant released through {@link #release()}.
   */
  CompletableFuture<MutexException> lost();

  /**
   * Until when, on this process's {@link System#nanoTime()} clock, no other owner can have been given this grant:
   * the start of the last heartbeat that committed, plus the lease. A reaper hands a mutex on only once the owner
   * record has stayed unchanged for a lease from when that reaper first saw it, which is after that heartbeat
   * committed, so while the processes' monotonic clocks run at one rate and every service of the directory has the
   * same lease, the grant is this handle's alone before this instant. Empty until a heartbeat committed (call
   * {@link #heartbeat()} to learn it at once). A holder that must never overlap its successor (a singleton) stops
   * its work before this instant: {@link #lost()} tells only what a heartbeat could read, and a holder cut off from
   * the store reads nothing.
   */
  default OptionalLong exclusiveUntilNanos() {
    return OptionalLong.empty();
  }
}
