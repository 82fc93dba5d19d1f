package io.github.fdbcoord.election;

import com.apple.foundationdb.Database;
import io.github.fdbcoord.mutex.MutexOptions;
import io.github.fdbcoord.mutex.MutexService;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * Leader elections on FoundationDB: each election is a mutex of the mutex layer, whose holder leads. Candidates
 * queue in FIFO order; the leader keeps its leadership alive by heartbeats and a leader silent for a lease (dead or
 * paused) is replaced by the next candidate; the epoch is the leadership's fencing token, strictly increasing, and
 * fences the leader's own transactions ({@link Leadership#fence}). Futures complete on the mutex service's executor.
 */
public interface LeaderElection extends AutoCloseable {
  /** Default directory of {@link #open}: {@code ["fdbcoord", "election"]}. */
  List<String> DEFAULT_DIRECTORY = List.of("fdbcoord", "election");

  /**
   * Opens elections in {@code options}' directory ({@link #DEFAULT_DIRECTORY} when it is the mutex layer's
   * default), with their lease, heartbeat and reaper; closing the elections closes the mutex service under them.
   */
  static CompletableFuture<LeaderElection> open(Database db, MutexOptions options) {
    MutexOptions electionOptions = options.directory().equals(MutexOptions.DEFAULT_DIRECTORY)
        ? options.toBuilder().directory(DEFAULT_DIRECTORY).build() : options;
    return MutexService.open(db, electionOptions).thenApply(mutexes -> new FdbLeaderElection(mutexes, true));
  }

  /** Elections over the mutexes of {@code mutexes}, named as the elections; closing the elections leaves it open. */
  static LeaderElection over(MutexService mutexes) {
    return new FdbLeaderElection(mutexes, false);
  }

  /**
   * Waits until {@code candidate} leads {@code election}, in FIFO order among the candidates. When it already
   * leads, completes with its current leadership.
   *
   * @param timeout how long to wait; {@code Duration.ZERO} tries once; null waits without limit. On timeout the
   *     candidate withdraws and the future fails with a {@code MutexTimeoutException}
   */
  CompletableFuture<Leadership> campaign(String election, String candidate, Duration timeout);

  /** The current leader, if any, read at once. */
  CompletableFuture<Optional<Leader>> leader(String election);

  /**
   * Tells {@code listener} the current leader (or none) and then every change, in epoch order and never an older
   * one after a newer, until the subscription is closed. The future completes once the subscription is set up; the
   * current leader follows.
   */
  CompletableFuture<ElectionSubscription> observe(String election, Consumer<Optional<Leader>> listener);

  /** Stops the heartbeats and watches of this process's campaigns; leaderships are not resigned (leases run out). */
  @Override
  void close();
}
