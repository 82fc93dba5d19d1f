package io.github.fdbcoord.election;

import com.apple.foundationdb.Transaction;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.fdb.FdbErrors;
import io.github.fdbcoord.mutex.MutexException;
import io.github.fdbcoord.mutex.MutexHandle;
import io.github.fdbcoord.mutex.MutexService;
import io.github.fdbcoord.mutex.MutexSubscription;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * {@link LeaderElection} over a {@link MutexService}: an election is the mutex of the same name, its leader the
 * mutex's holder, its epoch the grant's fencing token. What the mutex layer guarantees (FIFO hand-off, leases,
 * eviction of a silent holder, tokens from commit versionstamps) is what the election guarantees; this class only
 * names it.
 */
final class FdbLeaderElection implements LeaderElection {
  private final MutexService mutexes;
  private final boolean ownsMutexes;

  FdbLeaderElection(MutexService mutexes, boolean ownsMutexes) {
    this.mutexes = mutexes;
    this.ownsMutexes = ownsMutexes;
  }

  @Override
  public CompletableFuture<Leadership> campaign(String election, String candidate, Duration timeout) {
    MutexService.checkName(election, "election");
    MutexService.checkName(candidate, "candidate");
    CompletableFuture<MutexHandle> acquiring = mutexes.acquire(election, candidate, timeout);
    CompletableFuture<Leadership> campaign = FdbErrors.unwrapped(acquiring.thenApply(h -> new MutexLeadership(election, h)));
    // Cancelling the campaign withdraws the candidate (the acquire resigns a leadership that raced the cancel).
    campaign.whenComplete((l, e) -> {
      if (campaign.isCancelled()) {
        acquiring.cancel(false);
      }
    });
    return campaign;
  }

  @Override
  public CompletableFuture<Optional<Leader>> leader(String election) {
    MutexService.checkName(election, "election");
    return FdbErrors.unwrapped(mutexes.state(election).thenApply(state ->
        state.owner().map(owner -> new Leader(election, owner.owner(), owner.token()))));
  }

  @Override
  public CompletableFuture<ElectionSubscription> observe(String election, Consumer<Optional<Leader>> listener) {
    MutexService.checkName(election, "election");
    if (listener == null) {
      throw new IllegalArgumentException("an observer needs a listener, got null");
    }
    Observer observer = new Observer(election, listener);
    // Subscribed first, then the current leader read: no change falls between the two, and the observer drops
    // whatever is older than what it already told.
    return mutexes.subscribe(election, observer::onEvent).thenCompose(subscription -> {
      observer.subscription = subscription;
      return mutexes.latestEvent(election).thenCompose(latest -> latest.isPresent()
          ? CompletableFuture.completedFuture(observer.tell(latest.get().sequence(), leaderAfter(latest.get())))
          : leader(election).thenApply(current -> observer.tell(current.map(Leader::epoch).orElse(null), current)))
          .thenApply(ignored -> observer);
    });
  }


  private static Optional<Leader> leaderAfter(LockEvent event) {
    return event.owner().map(owner -> new Leader(event.mutex(), owner, event.sequence()));
  }

  @Override
  public void close() {
    if (ownsMutexes) {
      mutexes.close();
    }
  }

  /** Delivers leaders in epoch order: a change older than one already told is dropped. */
  private static final class Observer implements ElectionSubscription {
    private final String election;
    private final Consumer<Optional<Leader>> listener;
    private volatile MutexSubscription subscription;
    /** The sequence of the newest change told, or null before the first. Guarded by this. */
    private FencingToken told;
    private boolean toldAnything;
    private volatile boolean closed;

    Observer(String election, Consumer<Optional<Leader>> listener) {
      this.election = election;
      this.listener = listener;
    }

    void onEvent(LockEvent event) {
      tell(event.sequence(), leaderAfter(event));
    }

    /** Tells {@code leader} as of {@code sequence} (null: unknown, told only as the first news). */
    synchronized Void tell(FencingToken sequence, Optional<Leader> leader) {
      if (closed) {
        return null;
      }
      boolean newer = sequence == null ? !toldAnything : told == null || sequence.isNewerThan(told);
      if (newer) {
        if (sequence != null) {
          told = sequence;
        }
        toldAnything = true;
        listener.accept(leader);
      }
      return null;
    }

    @Override
    public String election() {
      return election;
    }

    @Override
    public void close() {
      closed = true;
      MutexSubscription s = subscription;
      if (s != null) {
        s.close();
      }
    }
  }

  /** A leadership: the mutex handle, named. */
  private static final class MutexLeadership implements Leadership {
    private final Leader leader;
    private final MutexHandle handle;

    MutexLeadership(String election, MutexHandle handle) {
      this.leader = new Leader(election, handle.owner(), handle.token());
      this.handle = handle;
    }

    @Override
    public Leader leader() {
      return leader;
    }

    @Override
    public boolean isLeading() {
      return handle.isHeld();
    }

    @Override
    public CompletableFuture<Void> fence(Transaction tr) {
      return handle.fence(tr);
    }

    @Override
    public CompletableFuture<Void> resign() {
      return FdbErrors.unwrapped(handle.release().thenApply(event -> null));
    }

    @Override
    public CompletableFuture<Leader> handOver(String candidate) {
      MutexService.checkName(candidate, "candidate");
      if (candidate.equals(leader.candidate())) {
        throw new IllegalArgumentException("'" + candidate + "' leads election '" + leader.election()
            + "' already: hand over to a candidate that is campaigning");
      }
      return FdbErrors.unwrapped(handle.releaseTo(candidate)
          .thenApply(event -> new Leader(leader.election(), candidate, event.sequence())));
    }

    @Override
    public CompletableFuture<MutexException> lost() {
      return handle.lost();
    }

    @Override
    public CompletableFuture<Void> confirm() {
      return FdbErrors.unwrapped(handle.heartbeat().thenApply(owner -> null));
    }

    @Override
    public OptionalLong exclusiveUntilNanos() {
      return handle.exclusiveUntilNanos();
    }

    @Override
    public String toString() {
      return "Leadership(" + leader.election() + ", " + leader.candidate() + ", epoch " + leader.epoch() + ")";
    }
  }
}
