package io.github.fdbcoord.embedded.engine;

import io.github.fdbcoord.embedded.storage.VersionedStore;

import com.apple.foundationdb.FDBException;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledFuture;

/**
 * What a transaction needs of the engine, as FoundationDB's client needs of a cluster: read versions,
 * reads at a version, commits, the watch limit and timers. One implementation ({@link Engine}), so calls
 * cost what a direct call costs.
 */
public interface TransactionEngine {
  /** A read version: the newest visible version (moved on with the clock when the database is idle). */
  long grantReadVersion();

  /** Newest version whose commit is applied and (when durable) on disk. */
  long visibleVersion();

  /** Whether a transaction reading at {@code readVersion} is past FoundationDB's 5-second window. */
  boolean tooOld(long readVersion);

  /** A key's value at {@code version}; throws {@link VersionedStore.TooOld} once the window left it. */
  byte[] get(byte[] key, long version);

  /** The stored rows of [begin, end) at {@code version}, in key order (or reversed). */
  VersionedStore.Cursor cursor(byte[] begin, byte[] end, boolean reverse, long version);

  /** Delay added to every read that goes to storage, in nanoseconds. */
  long readLatencyNanos();

  /** Delay added to every commit before it is resolved, in nanoseconds. */
  long commitLatencyNanos();

  /** Runs {@code task} after {@code nanos} on the engine's timer, then on {@code executor}. */
  void schedule(long nanos, Executor executor, Runnable task);

  /** Runs {@code task} after {@code nanos} on the engine's timer thread itself (it must be short). */
  ScheduledFuture<?> scheduleOnTimer(long nanos, Runnable task);

  /** Reserves room for one more watch; false when the database's limit is reached (1032). */
  boolean reserveWatch();

  /** Gives back a watch's room: it fired, failed or was cancelled outside the engine. */
  void unreserveWatch();

  /**
   * Resolves and applies a commit. The future completes (on the commit log's thread, or at once in
   * memory) once the commit is visible; the caller moves completion to its executor.
   */
  CompletableFuture<CommitResult> commit(CommitRequest request);

  /** Whether {@code commit} (what {@link #commit} returned) is held back and may still be withdrawn. */
  boolean isHeld(CompletableFuture<CommitResult> commit);

  /**
   * Withdraws a commit that {@link #commit} is still holding back: it fails with {@code why} and is never
   * committed. False (nothing done) when it was not held or has already been let through.
   */
  boolean withdraw(CompletableFuture<CommitResult> commit, Throwable why);

  /** Why commits are held back for lack of disk space, or null. */
  String lowOnSpace();

  /** Why the engine stopped (its log or storage failed), or null while it works. */
  FDBException failure();
}
