package io.github.fdbcoord.rwlock;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.directory.DirectoryLayer;
import com.apple.foundationdb.subspace.Subspace;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.lease.StateSubscription;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * Named, fenced read-write locks on FoundationDB: many readers or one writer per lock, a FIFO queue
 * (a reader arriving while a writer waits queues behind it, so no writer starves), a fencing token
 * per grant, leases kept by heartbeats and ended by a reaper, hand-off on release and expiry,
 * downgrade of a writer to a reader, and {@link #fence} of the holder's own transaction. All
 * operations are asynchronous and safe to call from any thread; futures complete on the service's
 * executor.
 *
 * <p>Failures: bad input fails with {@link IllegalArgumentException} (thrown, not in the future);
 * refusals with a {@link ReadWriteLockException} whose kind is NOT_HELD, TIMED_OUT, CLOSED or
 * QUEUE_FULL; anything else is a storage error ({@code FDBException}).
 */
public interface ReadWriteLockService extends AutoCloseable {
  /** Opens (creating if needed) the directory {@link ReadWriteLockOptions#directory()} and a service over it. */
  static CompletableFuture<ReadWriteLockService> open(Database db, ReadWriteLockOptions options) {
    return DirectoryLayer.getDefault().createOrOpen(db, options.directory())
        .thenApply(dir -> create(db, dir, options));
  }

  /** A service whose locks live under {@code root} ({@link ReadWriteLockOptions#directory()} is ignored). */
  static ReadWriteLockService create(Database db, Subspace root, ReadWriteLockOptions options) {
    return new FdbReadWriteLockService(db, root, options);
  }

  /**
   * Completes when {@code owner} holds lock {@code name} in {@code mode}, with a handle that
   * heartbeats the grant until it is released. The request is granted at once when it is
   * compatible with every holder and nobody waits; otherwise it joins the back of the queue, which
   * is granted in order: a writer when nobody holds the lock, a run of readers when no writer does.
   * While waiting, the queue entry is heartbeated every {@link ReadWriteLockOptions#heartbeatInterval()}
   * (and made again at the back if the reaper removed it); the grant is noticed by a watch on the
   * lock's generation key, or at the latest at the next heartbeat.
   *
   * <p>Idempotent per owner: when {@code owner} already holds the lock the result is its current
   * grant (whatever its mode); when it already waits, it keeps its place.
   *
   * @param timeout how long to wait; {@code Duration.ZERO} tries once without staying queued; null
   *     waits without limit. On timeout the owner leaves the queue and the future fails with
   *     TIMED_OUT, unless it was granted meanwhile. Cancelling the future leaves the queue too (and
   *     releases a grant that raced the cancellation).
   */
  CompletableFuture<ReadWriteLockHandle> acquire(String name, String owner, LockMode mode, Duration timeout);

  /**
   * {@link #acquire} for a holder that heartbeats its grant itself (a remote client, through the service's event bus
   * or HTTP): the same wait, the queue entry kept alive while it waits, but the grant is handed over without a
   * handle, and nothing heartbeats it; its holder calls {@link #heartbeat} more often than the lease, or the reaper
   * ends it. Cancelling the future leaves the queue (and releases a grant that raced the cancellation).
   */
  CompletableFuture<ReadWriteGrant> awaitGrant(String name, String owner, LockMode mode, Duration timeout);

  /**
   * Ends {@code wait}, a wait of {@link #awaitGrant} on this service, unless it already ended: the owner leaves the
   * queue, and a grant that raced the end is released. Completes once that is done, with whether this call ended it.
   */
  CompletableFuture<Boolean> withdraw(CompletableFuture<ReadWriteGrant> wait);

  /** {@link #acquire} in READ mode. */
  default CompletableFuture<ReadWriteLockHandle> acquireRead(String name, String owner, Duration timeout) {
    return acquire(name, owner, LockMode.READ, timeout);
  }

  /** {@link #acquire} in WRITE mode. */
  default CompletableFuture<ReadWriteLockHandle> acquireWrite(String name, String owner, Duration timeout) {
    return acquire(name, owner, LockMode.WRITE, timeout);
  }

  /**
   * Takes the lock when the request may be granted at once, otherwise joins the queue, in one
   * transaction; completes with the grant, or empty when queued. Starts no heartbeat: the caller
   * must {@link #heartbeat} a grant, and {@link #heartbeatWaiter} a queue entry, more often than the
   * lease, or the reaper removes them. Fails with QUEUE_FULL when the queue is full.
   */
  CompletableFuture<Optional<ReadWriteGrant>> tryAcquire(String name, String owner, LockMode mode);

  /**
   * Keeps {@code owner}'s queue entry alive for another lease; completes empty while it waits, or
   * with its grant once it holds the lock (the grant itself is not heartbeated by this call). Fails
   * with NOT_HELD when {@code owner} neither waits nor holds the lock.
   */
  CompletableFuture<Optional<ReadWriteGrant>> heartbeatWaiter(String name, String owner);

  /** Removes {@code owner} from the lock's queue (granting whoever may now go); completes with whether it waited. */
  CompletableFuture<Boolean> leave(String name, String owner);

  /**
   * Keeps {@code grant} alive for another lease. Fails with NOT_HELD when the grant has ended
   * (released, expired, or replaced by a downgrade).
   */
  CompletableFuture<ReadWriteGrant> heartbeat(ReadWriteGrant grant);

  /**
   * Ends {@code grant} and, in the same transaction, grants the queue's head while compatible: the
   * next writer, or the run of readers at the head. Fails with NOT_HELD when the grant has ended.
   */
  CompletableFuture<Void> release(ReadWriteGrant grant);

  /**
   * Turns the WRITE grant {@code grant} into a READ grant with a new token, in one transaction, and
   * grants the run of readers at the queue's head: no writer can take the lock in between. The
   * lease is renewed. Fails with NOT_HELD when the grant has ended, IllegalArgumentException when it
   * is a READ grant.
   */
  CompletableFuture<ReadWriteGrant> downgrade(ReadWriteGrant grant);

  /**
   * Fences the caller's own transaction {@code tr} (on this service's database) with {@code grant}:
   * completes when the grant is current at {@code tr}'s read version, and makes {@code tr} commit
   * only if the grant does not end (release, expiry, downgrade) before it commits. The grant key is
   * read with a read conflict; heartbeats never write it, so a holder's own heartbeats do not
   * disturb its fenced transactions. Fails with NOT_HELD when the grant has ended; the caller's
   * transaction must then not commit, as {@code Database.run} and {@code runAsync} ensure.
   */
  CompletableFuture<Void> fence(Transaction tr, ReadWriteGrant grant);

  /** The lock's holders and queue, read in one transaction. */
  CompletableFuture<ReadWriteLockState> state(String name);

  /**
   * A hint, typically from another process's {@link io.github.fdbcoord.lease.GrantNotifier}, that {@code owner} was
   * granted lock {@code name}: a wait of this service for it reads the lock again now instead of when its watch
   * fires. Returns whether such a wait was found. Changes nothing in the store.
   */
  boolean recheck(String name, String owner);

  /**
   * Tells {@code listener} the lock's state ({@link #state}) and then each change of its holders (and their modes) or queue, until the
   * subscription is closed: pushed when the change commits (a watch), not polled; never an older state after a
   * newer; changes that come faster than the reads are coalesced into the newest state. The future completes once
   * the subscription is set up; the current state follows. A failed read or watch (store unavailable,
   * {@code too_many_watches}) is retried after a back-off. Listeners run on the service's executor and must not block.
   */
  default CompletableFuture<StateSubscription> observe(String name, Consumer<ReadWriteLockState> listener) {
    if (listener == null) {
      throw new IllegalArgumentException("an observer needs a listener, got null");
    }
    return observeVersions(name, (version, state) -> listener.accept(state));
  }

  /**
   * {@link #observe}, with each state's version: the versionstamp of the last commit that changed the holders (and their modes) or queue
   * (all zeros before any did). Versions order states across observers and processes.
   */
  CompletableFuture<StateSubscription> observeVersions(String name, BiConsumer<FencingToken, ReadWriteLockState> listener);

  ReadWriteLockOptions options();

  /**
   * Stops the reaper and the heartbeats of this service's handles, and fails waiting acquires with
   * CLOSED. Grants and queue entries are not removed: their leases expire.
   */
  @Override
  void close();
}
