package io.github.fdbcoord.election;

import com.apple.foundationdb.Transaction;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.mutex.MutexException;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;

/**
 * The leadership of one candidate, won by {@link LeaderElection#campaign}: kept alive by heartbeats until resigned,
 * or lost (the leader was silent for a lease, for example paused, and the next candidate was made leader).
 */
public interface Leadership {
  Leader leader();

  /** The epoch of this leadership: strictly greater than every earlier leadership's of the same election. */
  default FencingToken epoch() {
    return leader().epoch();
  }

  /** Whether this process believes it leads: neither resigned nor known lost. */
  boolean isLeading();

  /**
   * Fences the caller's own transaction {@code tr} with this epoch: it commits only while this leadership is the
   * election's current one (see {@code MutexService.fence}). A refusal completes {@link #lost()}.
   */
  CompletableFuture<Void> fence(Transaction tr);

  /** Ends this leadership; the next candidate in line (FIFO) becomes leader in the same transaction. */
  CompletableFuture<Void> resign();

  /**
   * Ends this leadership and makes {@code candidate}, which must be campaigning (waiting in the election's line), the
   * leader in the same transaction, with a strictly greater epoch (completes with it); the candidates that queued
   * before it keep their places. Fails, changing nothing, with a {@code NotQueuedException} naming {@code candidate}
   * when it is not campaigning (this leadership stays, heartbeating); with an {@link IllegalArgumentException} when
   * it is this leader's own name; as {@link #resign()} does when this leadership was lost (which completes
   * {@link #lost()}). Safe to retry: a hand-over already done completes with the same leader.
   */
  CompletableFuture<Leader> handOver(String candidate);

  /**
   * Completes, with the refusal that revealed it, when this process learns it lost the leadership (a heartbeat or a
   * fence found a newer epoch or none): after a pause past the lease, at the first heartbeat on resuming. Never
   * completes after {@link #resign()} or a {@link #handOver}.
   */
  CompletableFuture<MutexException> lost();

  /**
   * Heartbeats now (the leadership heartbeats on its own too), so that {@link #exclusiveUntilNanos()} is known at
   * once; a refusal completes {@link #lost()}.
   */
  CompletableFuture<Void> confirm();

  /**
   * Until when, on {@link System#nanoTime()}, no other candidate can lead in this election (see
   * {@code MutexHandle.exclusiveUntilNanos}); empty until a heartbeat committed.
   */
  OptionalLong exclusiveUntilNanos();
}
