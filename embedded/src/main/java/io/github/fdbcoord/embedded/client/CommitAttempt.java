package io.github.fdbcoord.embedded.client;

import io.github.fdbcoord.embedded.engine.CommitRequest;
import io.github.fdbcoord.embedded.engine.CommitResult;
import io.github.fdbcoord.embedded.engine.StampedOperands;
import io.github.fdbcoord.embedded.engine.TransactionEngine;
import io.github.fdbcoord.embedded.engine.Watches;

import com.apple.foundationdb.FDBException;
import io.github.fdbcoord.fdb.FdbErrors;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * One transaction's commit: hands its writes, conflict ranges and watches to the engine, withdraws it
 * when the transaction is cancelled while the engine holds it back, and records the outcome (committed
 * version, versionstamp). Reset with the transaction for each retry. Guarded by the transaction's
 * monitor.
 */
final class CommitAttempt {
  private final EmbeddedTransaction tx;
  private final TransactionEngine engine;
  private long committedVersion = -1;
  private CompletableFuture<byte[]> versionstamp = new CompletableFuture<>();
  /** What the caller of {@link #start} waits on while the commit is in flight, else null. */
  private CompletableFuture<Void> pending;
  /** The engine's future of {@link #pending} while the engine holds it back, else null. */
  private CompletableFuture<CommitResult> held;

  CommitAttempt(EmbeddedTransaction tx) {
    this.tx = tx;
    this.engine = tx.engine;
  }

  long committedVersion() {
    return committedVersion;
  }

  CompletableFuture<byte[]> versionstamp() {
    return versionstamp;
  }

  /** The transaction is closed: a versionstamp still awaited fails as FoundationDB's does when it is destroyed (1025). */
  void close() {
    versionstamp.completeExceptionally(FdbErrors.error(FdbErrors.TRANSACTION_CANCELLED));
  }

  boolean isHeld() {
    return held != null;
  }

  /**
   * Back to no commit (the transaction was reset for a retry), keeping the committed version, as
   * NativeAPI keeps it in the transaction state that only a full reset replaces. Caller holds the
   * monitor.
   */
  void reset() {
    // The old versionstamp will never come: NativeAPI's reset replaces the promise behind it before
    // the read-your-writes reset fails what waits on it, so it breaks (1100).
    versionstamp.completeExceptionally(new FDBException("Broken promise", FdbErrors.BROKEN_PROMISE));
    versionstamp = new CompletableFuture<>();
  }

  CompletableFuture<Void> start() {
    CommitRequest req;
    CompletableFuture<Void> result = new CompletableFuture<>();
    synchronized (tx) {
      tx.ensureOpen();
      FDBException err = tx.readError();
      if (err != null) {
        // Refused before it starts: its watches and versionstamp wait, as FoundationDB's do, for the
        // transaction's reset or end, which fails them with 1025.
        return CompletableFuture.failedFuture(err);
      }
      tx.commitStarted = true;
      if (tx.approximateSize() > tx.settings.sizeLimit) {
        err = FdbErrors.error(FdbErrors.TRANSACTION_TOO_LARGE);
        tx.state = EmbeddedTransaction.State.COMMITTED;
        tx.watches.failAll(err);
        versionstamp.completeExceptionally(err);
        return CompletableFuture.failedFuture(err);
      }
      tx.state = EmbeddedTransaction.State.COMMITTING;
      pending = result;
      req = new CommitRequest();
      req.writes = tx.writes.points;
      req.clearedRanges = tx.writes.cleared;
      req.stampedKeys = tx.writes.stampedKeys;
      req.clearsAfterStamps = tx.writes.clearsAfterStamps;
      req.readConflicts = tx.conflicts.reads();
      req.writeConflicts = tx.conflicts.writes();
      req.watches = tx.watches.handOver();
      req.causalWriteRisky = tx.settings.causalWriteRisky;
      req.readVersionAtCommit = !tx.hasReadVersion();
      boolean readOnly = req.writeConflicts.isEmpty() && tx.writes.isEmpty();
      if (!readOnly) {
        try {
          req.readVersion = tx.readVersion();
        } catch (RuntimeException e) {
          return finish(null, e, result, req.watches);
        }
      }
    }
    if (engine.commitLatencyNanos() > 0) {
      engine.scheduleOnTimer(engine.commitLatencyNanos(), () -> resolve(req, result));
      return result;
    }
    return resolve(req, result);
  }

  private CompletableFuture<Void> resolve(CommitRequest req, CompletableFuture<Void> result) {
    CompletableFuture<CommitResult> applied;
    try {
      applied = engine.commit(req);
    } catch (RuntimeException e) {
      applied = CompletableFuture.failedFuture(e);
    }
    if (engine.isHeld(applied)) {
      // Cancelled or timed out while held back (the disk is low on space, the storage lags), the
      // commit leaves the queue and never happens, rather than committing after its caller gave up.
      boolean cancelled;
      FDBException why;
      synchronized (tx) {
        cancelled = tx.state == EmbeddedTransaction.State.CANCELLED;
        why = tx.cancelError;
        if (!cancelled) {
          held = applied;
        }
      }
      if (cancelled) {
        engine.withdraw(applied, why);
      }
    }
    if (applied.isDone() && engine.commitLatencyNanos() == 0) {
      // In memory with no latency the commit is complete here, off the commit lock: finish inline.
      CommitResult r = null;
      Throwable t = null;
      try {
        r = applied.join();
      } catch (CompletionException e) {
        t = e.getCause();
      }
      return finish(r, t, result, req.watches);
    }
    applied.whenCompleteAsync((r, t) -> finish(r, t instanceof CompletionException ? t.getCause() : t, result,
        req.watches), tx.executor);
    return result;
  }

  private CompletableFuture<Void> finish(CommitResult r, Throwable t, CompletableFuture<Void> result,
      List<Watches.Watch> handed) {
    synchronized (tx) {
      if (t == null) {
        committedVersion = r.version;
        tx.state = EmbeddedTransaction.State.COMMITTED;
        if (r.version < 0) {
          versionstamp.completeExceptionally(FdbErrors.error(FdbErrors.NO_COMMIT_VERSION));
        } else {
          versionstamp.complete(StampedOperands.versionstamp(r.version));
        }
      } else {
        FDBException error = t instanceof FDBException ? (FDBException) t
            : new FDBException("Commit failed: " + t, FdbErrors.INTERNAL_ERROR);
        t = error;
        versionstamp.completeExceptionally(error);
        tx.watches.fail(handed, error);
        if (tx.state == EmbeddedTransaction.State.COMMITTING) {
          tx.state = EmbeddedTransaction.State.COMMITTED;
        }
      }
      pending = null;
      held = null;
    }
    if (t == null) {
      result.complete(null);
    } else {
      result.completeExceptionally(t);
    }
    return result;
  }

  /**
   * The transaction was just cancelled with {@code error} (its state and cancel error are set): a commit
   * the engine still holds back is withdrawn, and the transaction's cancel error then says why it waited.
   * Returns the in-flight commit's future for the caller to fail, or null.
   */
  CompletableFuture<Void> cancel(FDBException error) {
    CompletableFuture<Void> inFlight = pending;
    CompletableFuture<CommitResult> commitHeld = held;
    String lowOnSpace = commitHeld == null ? null : engine.lowOnSpace();
    if (lowOnSpace != null) {
      // Withdrawn, so certainly not committed, and the caller learns why it waited: set before the
      // withdrawal completes the commit (onError, on another thread, answers cancelError).
      tx.cancelError = tx.heldError(error, lowOnSpace);
    }
    if (commitHeld != null && !engine.withdraw(commitHeld, tx.cancelError)) {
      tx.cancelError = error; // let through just now: its outcome is the commit's
    }
    return inFlight;
  }
}
