package io.github.fdbcoord.semaphore;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.directory.DirectoryLayer;
import com.apple.foundationdb.subspace.Subspace;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.lease.StateSubscription;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * Named fenced counting semaphores on FoundationDB: at most N holders per semaphore, each grant with its own
 * fencing token (the versionstamp of the granting commit, so strictly increasing per semaphore), a FIFO queue of
 * waiters, leases kept by heartbeats, and a reaper that removes silent holders and waiters and hands a freed permit
 * to the next waiter. All operations are asynchronous; futures complete on the service's executor.
 *
 * <p>Failures: bad input fails with {@link IllegalArgumentException}; refusals with a {@link SemaphoreException}
 * (NOT_HELD, TIMED_OUT, CLOSED, PERMITS_MISMATCH, QUEUE_FULL); anything else is a storage error ({@code FDBException}).
 */
public interface SemaphoreService extends AutoCloseable {
  /** Most permits a semaphore may have. */
  int MAX_PERMITS = 10_000;

  /** Opens (creating if needed) the directory {@link SemaphoreOptions#directory()} and a service over it. */
  static CompletableFuture<SemaphoreService> open(Database db, SemaphoreOptions options) {
    return DirectoryLayer.getDefault().createOrOpen(db, options.directory()).thenApply(dir -> create(db, dir, options));
  }

  /** A service whose semaphores live under {@code root} ({@link SemaphoreOptions#directory()} is ignored). */
  static SemaphoreService create(Database db, Subspace root, SemaphoreOptions options) {
    return new FdbSemaphoreService(db, root, options);
  }

  /**
   * Completes when {@code owner} holds one of the {@code permits} permits of semaphore {@code name}, with a handle
   * that heartbeats until released. A permit is granted at once when fewer than {@code permits} are held and nobody
   * waits; otherwise the owner joins the FIFO queue, keeps its entry alive every heartbeat interval, and is granted a
   * permit when one is released or taken from a silent holder and it is first in the queue. Waiting is woken by a
   * watch on the semaphore's generation key, with a read every heartbeat interval as fallback. An owner that already
   * holds a permit gets its current grant back (one permit per owner and semaphore).
   *
   * @param permits the semaphore's number of permits (1 to {@value #MAX_PERMITS}); every user of a semaphore must
   *     name the same while it has holders or waiters, otherwise PERMITS_MISMATCH
   * @param timeout how long to wait; {@code Duration.ZERO} tries once without queueing; null waits without limit. On
   *     timeout the owner leaves the queue and the future fails with TIMED_OUT, unless it was granted meanwhile.
   *     Cancelling the future also leaves the queue (and releases a grant that raced the cancellation).
   */
  CompletableFuture<SemaphoreHandle> acquire(String name, int permits, String owner, Duration timeout);

  /**
   * Waits for a permit as {@link #acquire} does, but hands the grant over as a bare token that nothing heartbeats:
   * for a holder elsewhere (a service's remote requester) that heartbeats it itself and whose grant must lapse after
   * the lease when it goes away. Same arguments and refusals as {@link #acquire}.
   */
  SemaphoreWait awaitGrant(String name, int permits, String owner, Duration timeout);

  /** Ends {@code owner}'s grant {@code token}; the first waiter gets the permit in the same transaction. */
  CompletableFuture<Void> release(String name, String owner, FencingToken token);

  /** Records that the holder of grant {@code token} is alive (NOT_HELD once the grant has ended). */
  CompletableFuture<Void> heartbeat(String name, String owner, FencingToken token);

  /**
   * Fences the caller's own transaction {@code tr} with {@code owner}'s grant {@code token}: completes when the grant
   * is current at {@code tr}'s read version, and reads the holder key with a read conflict, so {@code tr} commits
   * only if the grant has not ended (released, or taken over after its lease) in between; otherwise its commit fails
   * with {@code not_committed} (1020) and its retry is refused here with NOT_HELD. The holder key is written only when
   * a grant starts or ends, so heartbeats never conflict with a fenced transaction.
   */
  CompletableFuture<Void> fence(Transaction tr, String name, String owner, FencingToken token);

  /** Holders and waiters of semaphore {@code name}, read in one transaction. */
  CompletableFuture<SemaphoreState> state(String name);

  /**
   * A hint, typically from another process's {@link io.github.fdbcoord.lease.GrantNotifier}, that {@code owner} was
   * granted a permit of {@code name}: a wait of this service for it reads the semaphore again now instead of when its
   * watch fires. Returns whether such a wait was found. Changes nothing in the store.
   */
  boolean recheck(String name, String owner);

  /**
   * Tells {@code listener} the semaphore's state ({@link #state}) and then each change of its holders or queue, until the
   * subscription is closed: pushed when the change commits (a watch), not polled; never an older state after a
   * newer; changes that come faster than the reads are coalesced into the newest state. The future completes once
   * the subscription is set up; the current state follows. A failed read or watch (store unavailable,
   * {@code too_many_watches}) is retried after a back-off. Listeners run on the service's executor and must not block.
   */
  default CompletableFuture<StateSubscription> observe(String name, Consumer<SemaphoreState> listener) {
    if (listener == null) {
      throw new IllegalArgumentException("an observer needs a listener, got null");
    }
    return observeVersions(name, (version, state) -> listener.accept(state));
  }

  /**
   * {@link #observe}, with each state's version: the versionstamp of the last commit that changed the holders or queue
   * (all zeros before any did). Versions order states across observers and processes.
   */
  CompletableFuture<StateSubscription> observeVersions(String name, BiConsumer<FencingToken, SemaphoreState> listener);

  SemaphoreOptions options();

  /**
   * Stops the reaper and the heartbeats of this service's handles, and fails waiting acquires with CLOSED. Held
   * permits are not released: their leases expire.
   */
  @Override
  void close();

  /** A semaphore's permit count (0 when unused), holders in key order, and waiters in queue order. */
  record SemaphoreState(int permits, List<Holder> holders, List<String> waiters) {
    public SemaphoreState {
      holders = List.copyOf(holders);
      waiters = List.copyOf(waiters);
    }
  }

  /** A holder and its grant's token. */
  record Holder(String owner, FencingToken token) {}
}
