package io.github.fdbcoord.embedded.engine;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

/**
 * Commits held back while the storage lags or the disk is low on space, oldest first; the applier lets
 * them through once it has caught up and space is back. A queue rather than a parked thread: the caller
 * is usually a thread of the transactions' executor, which the completions of every other commit need too.
 */
final class HeldCommits {
  /**
   * A held commit: what its caller waits on. Taken once, either by the applier releasing it or by its
   * caller withdrawing it.
   */
  private static final class HeldCommit extends CompletableFuture<CommitResult> {
    final CommitRequest request;
    private final AtomicBoolean taken = new AtomicBoolean();

    HeldCommit(CommitRequest request) {
      this.request = request;
    }

    boolean take() {
      return taken.compareAndSet(false, true);
    }
  }

  private final ConcurrentLinkedQueue<HeldCommit> queue = new ConcurrentLinkedQueue<>();
  /** Commits a released request now (the engine's commit pipeline, past the hold). */
  private final Function<CommitRequest, CompletableFuture<CommitResult>> committer;

  HeldCommits(Function<CommitRequest, CompletableFuture<CommitResult>> committer) {
    this.committer = committer;
  }

  boolean isEmpty() {
    return queue.isEmpty();
  }

  /** Queues {@code request} behind the commits already held; its caller waits on the result. */
  CompletableFuture<CommitResult> hold(CommitRequest request) {
    HeldCommit commit = new HeldCommit(request);
    queue.add(commit);
    return commit;
  }

  static boolean isHeld(CompletableFuture<CommitResult> commit) {
    return commit instanceof HeldCommit h && !h.taken.get();
  }

  boolean withdraw(CompletableFuture<CommitResult> commit, Throwable why) {
    if (!(commit instanceof HeldCommit h) || !h.take()) {
      return false;
    }
    queue.remove(h);
    h.completeExceptionally(why);
    return true;
  }

  /** Lets held commits through, oldest first, while {@code mayGo} says so. */
  void release(BooleanSupplier mayGo) {
    HeldCommit commit;
    // The queue first: the applier asks after every batch, almost always with nothing held.
    while (!queue.isEmpty() && mayGo.getAsBoolean() && (commit = queue.poll()) != null) {
      if (commit.take()) { // else withdrawn by its caller
        release(commit);
      }
    }
  }

  /** Commits a held commit now and hands its outcome to the caller waiting on it. */
  private void release(HeldCommit commit) {
    CompletableFuture<CommitResult> outcome;
    try {
      outcome = committer.apply(commit.request);
    } catch (RuntimeException e) {
      // This commit's own failure, as it would have reached its caller: not the applier's.
      outcome = CompletableFuture.failedFuture(e);
    }
    outcome.whenComplete((r, t) -> {
      if (t != null) {
        commit.completeExceptionally(t instanceof CompletionException ? t.getCause() : t);
      } else {
        commit.complete(r);
      }
    });
  }
}
