package io.github.fdbcoord.mutex;

import com.apple.foundationdb.Transaction;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.api.MutexInspection;
import io.github.fdbcoord.api.MutexOwner;
import io.github.fdbcoord.api.MutexState;
import com.apple.foundationdb.Database;
import com.apple.foundationdb.directory.DirectoryLayer;
import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.Versionstamp;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Consumer;

/**
 * Named distributed mutexes on FoundationDB: FIFO queue, heartbeats, stale-owner hand-off by a
 * reaper, fencing tokens and lock events. All operations are asynchronous and safe to call from
 * any thread; futures complete on the service's executor.
 *
 * <p>Failures: bad input fails with {@link IllegalArgumentException}; refusals with a
 * {@link MutexException} whose {@link MutexException#kind()} is NOT_HELD, NOT_OWNER, TIMED_OUT,
 * CLOSED or QUEUE_FULL; anything else is a storage error ({@code FDBException}, see {@code FdbErrors}).
 */
public interface MutexService extends AutoCloseable {
  /** Longest mutex, owner or host name accepted, in UTF-8 bytes; names are part of keys. */
  int MAX_NAME_BYTES = 1024;

  /**
   * {@code value}, checked as a mutex, owner or host name (non-null, non-empty, at most
   * {@link #MAX_NAME_BYTES} UTF-8 bytes); otherwise an {@link IllegalArgumentException} naming
   * {@code what}. Lets a caller refuse a bad name before it calls the service.
   */
  static String checkName(String value, String what) {
    return MutexSchema.checkName(value, what);
  }

  /**
   * The versionstamp a fencing token or queue ticket was taken from (user version 0): the commit
   * position at which the grant or the queue entry was made.
   */
  static Versionstamp versionstamp(FencingToken token) {
    return MutexSchema.versionstamp(token);
  }

  /** Opens (creating if needed) the directory {@link MutexOptions#directory()} and a service over it. */
  static CompletableFuture<MutexService> open(Database db, MutexOptions options) {
    return DirectoryLayer.getDefault()
        .createOrOpen(db, options.directory())
        .thenApply(dir -> (FdbMutexService) create(db, dir, options))
        .thenCompose(service -> service.removeEarlierIncarnations().handle((n, e) -> {
          if (e != null) {
            service.close();
            throw e instanceof CompletionException ? (CompletionException) e
                : new CompletionException(e);
          }
          return service;
        }));
  }

  /** A service whose mutexes live under {@code root} ({@link MutexOptions#directory()} is ignored). */
  static MutexService create(Database db, Subspace root, MutexOptions options) {
    return new FdbMutexService(db, root, options);
  }

  /**
   * Takes the mutex when it is free, otherwise joins its queue, in one transaction. Idempotent:
   * when {@code owner} already holds it the result is its current grant; when it already waits, its
   * current position (so a retry after {@code commit_unknown_result} never enqueues twice).
   *
   * <p>No heartbeat is started: a holder obtained this way must call {@link #heartbeat} more often
   * than the lease, and so must a waiter once it has been granted the mutex through the queue. A
   * waiter calls {@link #heartbeatWaiter} as often, or the reaper removes it from the queue. Fails
   * with {@link MutexQueueFullException} when the queue already holds
   * {@link MutexOptions#maxQueueLength()} waiters.
   */
  CompletableFuture<AcquireResult> tryAcquire(String name, String owner);

  /**
   * Completes when {@code owner} holds the mutex, with a handle that heartbeats until released.
   * Waiting is woken by a watch on the mutex's generation key, never by polling; while waiting, the
   * queue entry is heartbeated every {@link MutexOptions#heartbeatInterval()} (and made again at the
   * back if it was removed meanwhile).
   *
   * @param timeout how long to wait; {@code Duration.ZERO} tries once without staying queued;
   *     null waits without limit. On timeout the owner leaves the queue and the future fails with
   *     {@link MutexTimeoutException}; if the mutex was granted in the meantime the handle is
   *     returned instead. Cancelling the future also leaves the queue (and releases a grant that
   *     raced the cancellation).
   */
  CompletableFuture<MutexHandle> acquire(String name, String owner, Duration timeout);

  /**
   * Acquires every mutex of {@code names} for {@code owner}, all or none. The owner joins every queue (or takes every
   * free mutex) in one transaction, in the names' order, so all its entries carry one commit's ticket: two callers
   * asking for overlapping sets are queued in the same order on every mutex they share, and neither can hold one
   * while waiting for the other's (no deadlock among {@code acquireAll} callers, whatever order they list names in).
   * Completes once every grant is held, each heartbeating as {@link #acquire} does; when one cannot be had (timeout,
   * cancellation, a refusal) the grants already made are released and the other queues left, and the future fails.
   *
   * @param names one or more distinct mutex names (duplicates count once), at most {@value #MAX_NAMES_PER_CALL}
   * @param timeout for the whole set; {@code Duration.ZERO} tries once; null waits without limit
   */
  CompletableFuture<MultiMutexHandle> acquireAll(Collection<String> names, String owner, Duration timeout);

  /** Most mutexes one {@link #acquireAll} takes: their enqueues share one transaction. */
  int MAX_NAMES_PER_CALL = 100;

  /**
   * Waits as {@link #acquireAll} does (every queue joined in one transaction, all or none, the same timeout for the
   * whole set, every queue left and every grant released when the set cannot be had), but hands the grants over
   * without heartbeating them: for a holder that heartbeats each grant itself, such as a requester on another node
   * that acquires through the event bus. While some grants are awaited, those already made are heartbeated by the
   * wait; once all are held, the holder has a lease (less at most one {@link MutexOptions#heartbeatInterval()}) to
   * send its first heartbeat of each. The wait ends when {@link MultiMutexWait#cancel()} is called; dropping it keeps
   * the owner queued (and its early grants held) until the time runs out.
   *
   * @param names as for {@link #acquireAll}
   * @param timeout for the whole set; {@code Duration.ZERO} tries once; null waits without limit
   */
  MultiMutexWait awaitAllGrants(Collection<String> names, String owner, Duration timeout);

  /**
   * Waits as {@link #acquire(String, String, Duration)} does (the same queue entry kept alive, the
   * same timeout, cancellation and one-transaction leave), but hands the grant over without
   * heartbeating it: for a holder that heartbeats its grant itself, such as a requester on another
   * node that acquires through the event bus. The wait ends when {@link MutexWait#cancel()} is
   * called; dropping it keeps the owner queued until the time runs out.
   *
   * @param timeout how long to wait; {@code Duration.ZERO} tries once; null waits without limit
   */
  MutexWait awaitGrant(String name, String owner, Duration timeout);

  /** {@link #acquire(String, String, Duration)} without a time limit. */
  default CompletableFuture<MutexHandle> acquire(String name, String owner) {
    return acquire(name, owner, null);
  }

  /**
   * Releases the mutex held by {@code owner}; the head of the queue becomes owner in the same
   * transaction. Completes with the transition (RELEASED or HANDED_OFF). Fails with
   * {@link MutexNotHeldException} when nobody holds it, {@link NotOwnerException} when someone else does.
   */
  CompletableFuture<LockEvent> release(String name, String owner);

  /**
   * As {@link #release(String, String)}, but only the grant {@code token} is released: an owner
   * evicted and granted again under a newer token gets {@link NotOwnerException}. Idempotent: if a
   * retried commit finds this grant already released by an earlier attempt, it completes with that release.
   */
  CompletableFuture<LockEvent> release(String name, String owner, FencingToken token);

  /**
   * Releases the grants {@code tokens} (fencing token by mutex name, 1 to {@value #MAX_NAMES_PER_CALL}) of
   * {@code owner} in one transaction, each mutex handed to its next waiter or freed, as {@link MultiMutexHandle#release}
   * does for {@link #acquireAll}: for the holder of an {@link #awaitAllGrants}. Completes with the transitions. Fails,
   * releasing nothing, as {@link #release(String, String, FencingToken)} when any of the grants has ended.
   */
  CompletableFuture<List<LockEvent>> releaseAll(Map<String, FencingToken> tokens, String owner);

  /**
   * Ends the grant {@code token} of {@code owner} and makes {@code successor}, which must wait in the mutex's queue,
   * the owner in the same transaction, whatever its place in the queue: the waiters queued before it keep their
   * places (and get the mutex in FIFO order after it). The new grant's token is this commit's versionstamp; the lock
   * event is HANDED_OFF to {@code successor}, and the {@link HandOffNotifier} is told as for a release. Completes
   * with that event.
   *
   * <p>Fails, changing nothing, with {@link NotQueuedException} (kind NOT_QUEUED) when {@code successor} does not
   * wait (the owner keeps its grant), and as {@link #release(String, String, FencingToken)} when the grant has ended
   * ({@link MutexNotHeldException}, {@link NotOwnerException}); {@code successor} equal to {@code owner} is an
   * {@link IllegalArgumentException}. Idempotent: a retried commit that finds this very hand-over done completes with it.
   */
  CompletableFuture<LockEvent> releaseTo(String name, String owner, FencingToken token, String successor);

  /** Records that {@code owner} is alive; completes with the updated owner record. Errors as release. */
  CompletableFuture<MutexOwner> heartbeat(String name, String owner);

  /** Heartbeat of the grant {@code token} only. */
  CompletableFuture<MutexOwner> heartbeat(String name, String owner, FencingToken token);

  /**
   * Keeps {@code owner}'s queue entry alive: a waiter that does not call this (or wait through
   * {@link #acquire}, which does it by itself) more often than the lease is removed from the queue by
   * the reaper. Completes with the waiter's position and ticket, or with its grant (held, with the
   * token; the grant itself is not heartbeated by this call) when it was granted the mutex meanwhile.
   * Fails with NOT_HELD / NOT_OWNER when {@code owner} neither waits nor holds the mutex.
   */
  CompletableFuture<AcquireResult> heartbeatWaiter(String name, String owner);

  /**
   * Up to {@code limit} (1 to 10,000) events of the mutex's log with a sequence at or after
   * {@code from}, oldest first. The log keeps events for {@link MutexOptions#eventRetention()}: when
   * the first event returned is not {@code from} itself, events after {@code from} may have been trimmed.
   */
  CompletableFuture<List<LockEvent>> events(String name, FencingToken from, int limit);

  /**
   * The event log's current position: every lock event committed after this completes has a newer
   * sequence, and none committed before it has. A reader that keeps it can later ask for every event
   * since with {@link #eventsSince}, without having known the mutex's name at the time.
   */
  CompletableFuture<FencingToken> currentPosition();

  /**
   * Up to {@code limit} (1 to 10,000) events of the mutex's log newer than {@code position} (a
   * {@link #currentPosition} or an event's sequence), oldest first, read in one transaction with
   * whether they are all that were logged since: not when {@code position} is older than {@link
   * MutexOptions#eventRetention()} allows the log to keep, or newer than this store's current version.
   */
  CompletableFuture<EventLogRead> eventsSince(String name, FencingToken position, int limit);

  /** The newest event of the mutex's log, if any is retained. */
  CompletableFuture<Optional<LockEvent>> latestEvent(String name);

  /** Removes {@code owner} from the queue; completes with whether it was waiting. */
  CompletableFuture<Boolean> leave(String name, String owner);

  /** The owner record and the queue, read in one transaction. */
  CompletableFuture<MutexState> state(String name);

  /**
   * The owner record and queue (read in one transaction, as {@link #state}), with the age of the
   * grant and the lease this service's reaper still gives it (see {@link MutexInspection}).
   */
  CompletableFuture<MutexInspection> inspect(String name);

  /**
   * Names of the mutexes that currently have an owner, in key order, starting after {@code after}
   * (from the first when null), at most {@code limit} (1 to 10,000) of them: page by passing the
   * last name of the previous page.
   */
  CompletableFuture<List<String>> heldMutexes(String after, int limit);

  /**
   * Delivers every ownership transition of mutex {@code name} committed after the returned future
   * completes (by any process), in commit order, to {@code listener} on the service's executor,
   * until the subscription is closed. Transitions are read from the mutex's event log when its
   * generation key's watch fires, so none is skipped unless delivery falls behind the event
   * retention. A listener that throws is logged and keeps its subscription.
   */
  CompletableFuture<MutexSubscription> subscribe(String name, Consumer<LockEvent> listener);

  /**
   * Inside the caller's transaction {@code tr} (on this service's database): removes every queue
   * entry of an owner whose name starts with {@code ownerPrefix}, and ends every grant such an owner
   * holds, handing the mutex to its next waiter that stays (an EXPIRED event), as the reaper would
   * after the lease. Nothing happens unless {@code tr} commits: a caller evicting a dead process
   * makes this part of one transaction with the rest of the eviction. Completes with how many
   * grants and queue entries it removed.
   */
  CompletableFuture<Integer> removeOwnersIn(Transaction tr, String ownerPrefix);

  /**
   * Fences the caller's own transaction {@code tr} (on this service's database) with the grant {@code token} of
   * {@code owner}: completes when the grant is the mutex's current one at {@code tr}'s read version, and makes
   * {@code tr} commit only if no change of owner commits in between. The grant is read from the mutex's
   * generation key, which every change of owner writes and heartbeats never touch, with a read conflict: a hand-off
   * or an expiry committed after the read makes {@code tr}'s commit fail with {@code not_committed} (1020), and the
   * retry of a retry loop is then refused here. So a holder paused past its lease and replaced cannot commit a
   * fenced write to its own data, whether or not it has learnt that it lost the grant.
   *
   * <p>Fails with {@link MutexNotHeldException} (the mutex is free) or {@link NotOwnerException} (another grant is
   * current) when the grant has ended; the caller's transaction must then not commit, as {@code Database.run} and
   * {@code runAsync} ensure by failing with it. Costs one read, issued beside the caller's own.
   */
  CompletableFuture<Void> fence(Transaction tr, String name, String owner, FencingToken token);

  /**
   * A hint, typically from another process's {@link HandOffNotifier}, that mutex {@code name} was
   * handed to {@code owner}: when an acquire of {@code owner} on this service waits for {@code name},
   * reads the mutex again now rather than when its watch fires, and completes the acquire if the
   * committed owner record names {@code owner}. Grants nothing by itself: a stale, duplicated or
   * forged hint costs one read. Returns at once; whether such an acquire waits here.
   */
  boolean recheck(String name, String owner);

  MutexOptions options();

  /**
   * Stops the reaper, the watches and the heartbeats of this service's handles, and fails waiting
   * acquires with a {@link MutexException} of kind CLOSED. Held mutexes are not released: their leases expire.
   */
  @Override
  void close();
}
