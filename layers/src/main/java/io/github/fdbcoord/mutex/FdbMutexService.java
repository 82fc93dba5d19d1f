package io.github.fdbcoord.mutex;

import io.github.fdbcoord.fdb.FdbErrors;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.api.MutexInspection;
import io.github.fdbcoord.api.MutexOwner;
import io.github.fdbcoord.api.MutexState;
import io.github.fdbcoord.api.QueueEntry;
import com.apple.foundationdb.Database;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.Versionstamp;
import io.github.fdbcoord.mutex.MutexSchema.Incarnation;
import io.github.fdbcoord.mutex.MutexSchema.Waiter;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Consumer;
import java.util.function.Function;

import static io.github.fdbcoord.mutex.MutexSchema.checkName;

/**
 * {@link MutexService} over fdb-java's {@link Database}: composes the queries of {@link MutexSchema}
 * into the service's operations. An acquire that waits is a {@link MutexAcquisition}, a held grant
 * heartbeats through a {@link HeartbeatingHandle}, and every change of owner is one of
 * {@link MutexTransitions}.
 */
final class FdbMutexService implements MutexService {
  /** Versions per second of FoundationDB's commit clock, to turn the event retention into versions. */
  private static final long VERSIONS_PER_SECOND = 1_000_000L;

  final Database db;
  final MutexSchema schema;
  final Executor executor;
  final ScheduledExecutorService scheduler;
  private final MutexOptions options;
  private final boolean ownsScheduler;
  private final ConcurrentHashMap<String, OwnershipWatcher> watchers = new ConcurrentHashMap<>();
  private final Set<HeartbeatingHandle> handles = ConcurrentHashMap.newKeySet();
  private final MutexTransitions transitions;
  private final QueueFloors floors = new QueueFloors();
  private final MutexReaper reaper;
  private final OwnerRemoval ownerRemoval;
  private final OwnerRelease ownerRelease;
  private final EventLogReader eventLog;
  /** This start of the service: recorded with every grant and queue entry made or kept alive through it. */
  final Incarnation incarnation;
  private volatile boolean closed;

  FdbMutexService(Database db, Subspace root, MutexOptions options) {
    this.db = db;
    this.schema = new MutexSchema(root);
    this.options = options;
    this.executor = options.executor() != null ? options.executor() : db.getExecutor();
    this.ownsScheduler = options.scheduler() == null;
    this.scheduler = ownsScheduler ? Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "fdb-mutex-scheduler");
      t.setDaemon(true);
      return t;
    }) : options.scheduler();
    this.incarnation = new Incarnation(options.hostId(), UUID.randomUUID().toString());
    long retentionVersions = options.eventRetention().toMillis() * (VERSIONS_PER_SECOND / 1000);
    this.transitions = new MutexTransitions(schema, incarnation, retentionVersions, floors, db, executor,
        new HandOffHints(options.handOffNotifier()));
    this.ownerRemoval = new OwnerRemoval(schema, transitions);
    this.ownerRelease = new OwnerRelease(schema, transitions);
    this.eventLog = new EventLogReader(db, schema, executor, retentionVersions);
    this.reaper = options.reaperEnabled() ? new MutexReaper(this, options.lease(), options.reaperInterval()) : null;
    if (reaper != null) {
      reaper.start();
    }
  }

  @Override
  public MutexOptions options() {
    return options;
  }

  MutexReaper reaper() {
    return reaper;
  }

  // ================================================================ operations

  @Override
  public CompletableFuture<AcquireResult> tryAcquire(String name, String owner) {
    checkName(name, "mutex name");
    checkName(owner, "owner");
    return transact(tr -> tryAcquireIn(tr, name, owner));
  }

  /**
   * Reads the owner record, {@code owner}'s queue entry and the queue together, in one round trip:
   * which of them decides is known only once the owner record is, and waiting for it first made an
   * enqueue three reads in a row. A free mutex (the usual case) reads an empty queue for nothing.
   */
  CompletableFuture<AfterCommit<AcquireResult>> tryAcquireIn(Transaction tr, String name, String owner) {
    CompletableFuture<MutexOwner> currentRead = schema.readOwner(tr, name);
    CompletableFuture<Versionstamp> ticketRead = schema.readTicket(tr, name, owner);
    CompletableFuture<List<Versionstamp>> queueRead = schema.readTicketsBefore(tr.snapshot(), name, floors.of(name), null);
    return currentRead.thenCombine(ticketRead, (current, ticket) -> {
      if (current == null) {
        return CompletableFuture.completedFuture(
            transitions.grantFree(tr, name, owner).map(e -> AcquireResult.held(e.sequence())));
      }
      if (current.owner().equals(owner)) {
        return CompletableFuture.completedFuture(AfterCommit.now(AcquireResult.held(current.token())));
      }
      return queueRead.thenApply(queue -> joinQueue(tr, name, owner, ticket, queue));
    }).thenCompose(f -> f);
  }

  /**
   * Enqueues {@code owner} unless it already waits under {@code ticket} (so a retried commit never
   * enqueues twice); {@code queue} is every ticket from the queue's floor, by a snapshot read of {@code tr}.
   */
  private AfterCommit<AcquireResult> joinQueue(Transaction tr, String name, String owner, Versionstamp ticket,
      List<Versionstamp> queue) {
    if (!queue.isEmpty()) {
      // The first of them becomes the floor once tr commits.
      floors.learnOnCommit(tr, name, queue.get(0));
    }
    if (ticket != null) {
      long ahead = queue.stream().filter(t -> t.compareTo(ticket) < 0).count();
      return AfterCommit.now(AcquireResult.queued((int) ahead + 1, ticket));
    }
    // Counted before writing: the new entry's key is unreadable until commit.
    int ahead = queue.size();
    if (ahead >= options.maxQueueLength()) {
      throw new MutexQueueFullException(name, owner, options.maxQueueLength());
    }
    schema.enqueue(tr, name, owner, incarnation);
    return AfterCommit.stamped(tr.getVersionstamp(),
        vs -> AcquireResult.queued(ahead + 1, Versionstamp.complete(vs, 0)));
  }

  /**
   * How many wait ahead of {@code ticket} (all waiters when null), by a snapshot read from the
   * queue's floor; the first of them becomes the floor once {@code tr} commits.
   */
  private CompletableFuture<Integer> countAhead(Transaction tr, String name, Versionstamp ticket) {
    return schema.readTicketsBefore(tr.snapshot(), name, floors.of(name), ticket).thenApply(ahead -> {
      if (!ahead.isEmpty()) {
        floors.learnOnCommit(tr, name, ahead.get(0));
      }
      return ahead.size();
    });
  }

  @Override
  public CompletableFuture<MutexHandle> acquire(String name, String owner, Duration timeout) {
    checkName(name, "mutex name");
    checkName(owner, "owner");
    if (timeout != null && timeout.isNegative()) {
      throw new IllegalArgumentException("timeout must not be negative, got " + timeout);
    }
    checkOpen(name);
    MutexAcquisition wait = new MutexAcquisition(this, name, owner, timeout).start();
    CompletableFuture<MutexHandle> handle = new CompletableFuture<>();
    wait.grant().whenComplete((grant, e) -> {
      if (e != null) {
        handle.completeExceptionally(e);
        return;
      }
      HeartbeatingHandle h = new HeartbeatingHandle(this, name, owner, grant.token(), grant.ticket());
      h.startHeartbeats();
      if (!handle.complete(h)) {
        h.release(); // the caller cancelled while the grant was being made
      }
    });
    handle.whenComplete((h, e) -> {
      if (handle.isCancelled()) {
        wait.cancel();
      }
    });
    return handle;
  }

  @Override
  public CompletableFuture<MultiMutexHandle> acquireAll(Collection<String> names, String owner, Duration timeout) {
    MultiAcquisition wait = MultiAcquisition.start(this, names, owner, timeout, false);
    CompletableFuture<MultiMutexHandle> handle = wait.held().thenApply(handles -> new MultiGrant(this, owner, handles));
    handle.whenComplete((h, e) -> {
      if (handle.isCancelled()) {
        wait.cancel();
      }
    });
    return handle;
  }

  @Override
  public MultiMutexWait awaitAllGrants(Collection<String> names, String owner, Duration timeout) {
    return MultiAcquisition.start(this, names, owner, timeout, true);
  }

  @Override
  public MutexWait awaitGrant(String name, String owner, Duration timeout) {
    checkName(name, "mutex name");
    checkName(owner, "owner");
    if (timeout != null && timeout.isNegative()) {
      throw new IllegalArgumentException("timeout must not be negative, got " + timeout);
    }
    checkOpen(name);
    return new MutexAcquisition(this, name, owner, timeout).start();
  }

  @Override
  public CompletableFuture<LockEvent> release(String name, String owner) {
    return release(name, owner, null);
  }

  @Override
  public CompletableFuture<LockEvent> release(String name, String owner, FencingToken token) {
    checkName(name, "mutex name");
    checkName(owner, "owner");
    return transact(tr -> releaseIn(tr, name, owner, token));
  }

  /** See {@link OwnerRelease#releaseIn}. */
  CompletableFuture<AfterCommit<LockEvent>> releaseIn(Transaction tr, String name, String owner, FencingToken token) {
    return ownerRelease.releaseIn(tr, name, owner, token);
  }

  @Override
  public CompletableFuture<List<LockEvent>> releaseAll(Map<String, FencingToken> tokens, String owner) {
    checkName(owner, "owner");
    if (tokens == null || tokens.isEmpty() || tokens.size() > MAX_NAMES_PER_CALL) {
      throw new IllegalArgumentException("releaseAll takes 1 to " + MAX_NAMES_PER_CALL + " grants, got "
          + (tokens == null ? null : tokens.size()));
    }
    tokens.forEach((name, token) -> {
      checkName(name, "mutex name");
      if (token == null) {
        throw new IllegalArgumentException("the grant of mutex '" + name + "' needs its fencing token, got null");
      }
    });
    return MultiGrant.releaseAll(this, owner, new LinkedHashMap<>(tokens));
  }

  @Override
  public CompletableFuture<LockEvent> releaseTo(String name, String owner, FencingToken token, String successor) {
    checkName(name, "mutex name");
    checkName(owner, "owner");
    checkName(successor, "successor");
    if (token == null) {
      throw new IllegalArgumentException("a hand-over needs the grant's fencing token, got null");
    }
    if (successor.equals(owner)) {
      throw new IllegalArgumentException("'" + owner + "' cannot hand mutex '" + name + "' over to itself: name a"
          + " waiter as the successor");
    }
    return transact(tr -> releaseToIn(tr, name, owner, token, successor));
  }

  /** See {@link OwnerRelease#releaseToIn}. */
  CompletableFuture<AfterCommit<LockEvent>> releaseToIn(Transaction tr, String name, String owner, FencingToken token,
      String successor) {
    return ownerRelease.releaseToIn(tr, name, owner, token, successor);
  }

  @Override
  public CompletableFuture<MutexOwner> heartbeat(String name, String owner) {
    return heartbeat(name, owner, null);
  }

  @Override
  public CompletableFuture<MutexOwner> heartbeat(String name, String owner, FencingToken token) {
    checkName(name, "mutex name");
    checkName(owner, "owner");
    // Reading the owner record (with conflict) and rewriting it in one transaction: a hand-off that
    // commits first makes this conflict, and the retry then sees another owner and refuses.
    return transact(tr -> schema.readOwner(tr, name).thenApply(current -> {
      if (!MutexTransitions.isGrant(current, owner, token)) {
        throw MutexTransitions.refusal(name, owner, token, current);
      }
      MutexOwner next = new MutexOwner(owner, current.token(), current.heartbeats() + 1);
      schema.writeOwner(tr, name, next, incarnation);
      return AfterCommit.now(next);
    }));
  }

  @Override
  public CompletableFuture<Boolean> leave(String name, String owner) {
    checkName(name, "mutex name");
    checkName(owner, "owner");
    return transact(tr -> schema.readTicket(tr, name, owner).thenApply(ticket -> {
      if (ticket == null) {
        return AfterCommit.now(false);
      }
      schema.dequeue(tr, name, new QueueEntry(owner, MutexSchema.token(ticket)));
      return AfterCommit.now(true);
    }));
  }

  @Override
  public CompletableFuture<AcquireResult> heartbeatWaiter(String name, String owner) {
    checkName(name, "mutex name");
    checkName(owner, "owner");
    return transact(tr -> schema.readOwner(tr, name).thenCombine(schema.readTicket(tr, name, owner), (current, ticket) -> {
      if (current != null && current.owner().equals(owner)) {
        return CompletableFuture.completedFuture(AfterCommit.now(AcquireResult.held(current.token())));
      }
      if (ticket == null) {
        throw MutexTransitions.refusal(name, owner, null, current);
      }
      return schema.readWaiter(tr, name, ticket).thenCombine(countAhead(tr, name, ticket),
          (waiter, ahead) -> {
            schema.writeWaiter(tr, name, new Waiter(ticket, owner, incarnation, waiter == null ? 1 : waiter.beats() + 1));
            return AfterCommit.now(AcquireResult.queued(ahead + 1, ticket));
          });
    }).thenCompose(f -> f));
  }

  @Override
  public CompletableFuture<List<LockEvent>> events(String name, FencingToken from, int limit) {
    return eventLog.events(name, from, limit);
  }

  @Override
  public CompletableFuture<FencingToken> currentPosition() {
    return eventLog.currentPosition();
  }

  @Override
  public CompletableFuture<EventLogRead> eventsSince(String name, FencingToken position, int limit) {
    return eventLog.eventsSince(name, position, limit);
  }

  @Override
  public CompletableFuture<Optional<LockEvent>> latestEvent(String name) {
    return eventLog.latestEvent(name);
  }

  /** See {@link IncarnationCleanup}: run once at open. */
  CompletableFuture<Integer> removeEarlierIncarnations() {
    return new IncarnationCleanup(this, schema, incarnation).run();
  }

  @Override
  public CompletableFuture<Integer> removeOwnersIn(Transaction tr, String ownerPrefix) {
    checkName(ownerPrefix, "owner prefix");
    return ownerRemoval.removeIn(tr, ownerPrefix);
  }

  @Override
  public CompletableFuture<Void> fence(Transaction tr, String name, String owner, FencingToken token) {
    checkName(name, "mutex name");
    checkName(owner, "owner");
    if (token == null) {
      throw new IllegalArgumentException("a fence needs the grant's fencing token, got null");
    }
    // The generation with conflict: it changes with every change of owner and only then. The owner record
    // without: heartbeats rewrite it, and a fenced transaction must not conflict with its own holder's heartbeats.
    CompletableFuture<FencingToken> generationRead = schema.readGeneration(tr, name);
    CompletableFuture<MutexOwner> currentRead = schema.readOwner(tr.snapshot(), name);
    return FdbErrors.unwrapped(generationRead.thenCombine(currentRead, (generation, current) ->
        token.equals(generation) && MutexTransitions.isGrant(current, owner, token)
            ? null : MutexTransitions.refusal(name, owner, token, current))
        .thenCompose(refusal -> refusal == null ? CompletableFuture.completedFuture(null)
            : CompletableFuture.failedFuture(refusal)));
  }

  /** Leaves the queue unless the mutex was granted meanwhile: then completes with the grant, else null. */
  CompletableFuture<MutexOwner> leaveUnlessGranted(String name, String owner) {
    return transact(tr -> schema.readOwner(tr, name).thenCombine(schema.readTicket(tr, name, owner), (current, ticket) -> {
      if (current != null && current.owner().equals(owner)) {
        return AfterCommit.now(current);
      }
      if (ticket != null) {
        schema.dequeue(tr, name, new QueueEntry(owner, MutexSchema.token(ticket)));
      }
      return AfterCommit.<MutexOwner>now(null);
    }));
  }

  @Override
  public CompletableFuture<MutexState> state(String name) {
    checkName(name, "mutex name");
    return FdbErrors.unwrapped(db.readAsync(tr -> readState(tr, name), executor));
  }

  @Override
  public CompletableFuture<MutexInspection> inspect(String name) {
    checkName(name, "mutex name");
    return FdbErrors.unwrapped(db.readAsync(tr -> schema.readOwnerBytes(tr, name)
        .thenCombine(schema.readQueue(tr, name, ReadTransaction.ROW_LIMIT_UNLIMITED),
            (record, queue) -> new Object[] {record, queue})
        .thenCombine(tr.getReadVersion(), (rq, readVersion) -> {
          byte[] record = (byte[]) rq[0];
          @SuppressWarnings("unchecked")
          List<QueueEntry> queue = (List<QueueEntry>) rq[1];
          MutexOwner owner = record == null ? null : schema.unpackOwnerValue(record);
          MutexState state = new MutexState(name, Optional.ofNullable(owner), queue);
          if (owner == null) {
            return new MutexInspection(state, Optional.empty(), Optional.empty());
          }
          long versions = Math.max(0, readVersion - owner.token().commitVersion());
          Duration heldFor = Duration.ofNanos(versions * (1_000_000_000L / VERSIONS_PER_SECOND));
          return new MutexInspection(state, Optional.of(heldFor),
              reaper == null ? Optional.empty() : Optional.of(reaper.leaseLeft(name, record)));
        }), executor));
  }

  @Override
  public CompletableFuture<List<String>> heldMutexes(String after, int limit) {
    if (after != null) {
      checkName(after, "after");
    }
    if (limit < 1 || limit > 10_000) {
      throw new IllegalArgumentException("limit must be between 1 and 10000, got " + limit);
    }
    return FdbErrors.unwrapped(db.readAsync(tr -> schema.readHeld(tr, after, limit), executor));
  }

  private CompletableFuture<MutexState> readState(ReadTransaction tr, String name) {
    return schema.readOwner(tr, name).thenCombine(
        schema.readQueue(tr, name, ReadTransaction.ROW_LIMIT_UNLIMITED),
        (owner, queue) -> new MutexState(name, Optional.ofNullable(owner), queue));
  }

  @Override
  public CompletableFuture<MutexSubscription> subscribe(String name, Consumer<LockEvent> listener) {
    checkName(name, "mutex name");
    if (listener == null) {
      throw new IllegalArgumentException("listener must not be null");
    }
    checkOpen(name);
    while (true) {
      CompletableFuture<MutexSubscription> s = watcher(name).subscribe(listener);
      if (s != null) {
        return s;
      }
    }
  }

  @Override
  public boolean recheck(String name, String owner) {
    checkName(name, "mutex name");
    checkName(owner, "owner");
    OwnershipWatcher w = watchers.get(name);
    return w != null && w.recheck(owner);
  }

  // ================================================================ transitions

  /** See {@link MutexTransitions#endGrant}; the reaper and the clean-up at open end grants through it. */
  CompletableFuture<AfterCommit<LockEvent>> endGrant(Transaction tr, String name, MutexOwner current, boolean released) {
    return transitions.endGrant(tr, name, current, released);
  }

  /** {@link #endGrant}, with the queue head's read ({@link #readQueueHead}) already started in {@code tr}. */
  CompletableFuture<AfterCommit<LockEvent>> endGrant(Transaction tr, String name, MutexOwner current, boolean released,
      CompletableFuture<Waiter> queueHead) {
    return transitions.endGrant(tr, name, current, released, queueHead);
  }

  /** See {@link MutexTransitions#readQueueHead}. */
  CompletableFuture<Waiter> readQueueHead(Transaction tr, String name) {
    return transitions.readQueueHead(tr, name);
  }

  // ================================================================ plumbing

  /**
   * For tests: runs on every attempt between the body and the commit, which waits for its future; tests
   * use it to force two transactions to interleave. Null outside tests (a volatile read per attempt).
   */
  volatile Function<Transaction, CompletableFuture<Void>> beforeCommit;

  /**
   * Runs {@code body} in a retry loop, then resolves its versionstamp-dependent result.
   *
   * <p>A first attempt that conflicts is retried at once, later ones after the usual back-off. On
   * a contended mutex the typical conflict is one other party's transition (a release that finds
   * the queue empty against a waiter's enqueue, or an enqueue that read the owner against the
   * release): that transaction has committed, so the retry sees its outcome and commits. The
   * back-off of {@code onError} (a random wait of up to 10 ms on the first conflict) protects a
   * key many clients hammer; here it only delayed the next owner, about one hand-off in ten under
   * ping-pong between two nodes.
   */
  <T> CompletableFuture<T> transact(Function<Transaction, CompletableFuture<AfterCommit<T>>> body) {
    Function<Transaction, CompletableFuture<AfterCommit<T>>> hooked = tr -> {
      Function<Transaction, CompletableFuture<Void>> hook = beforeCommit;
      CompletableFuture<AfterCommit<T>> result = body.apply(tr);
      return hook == null ? result : result.thenCompose(r -> hook.apply(tr).thenApply(v -> r));
    };
    Transaction first = db.createTransaction(executor);
    CompletableFuture<AfterCommit<T>> attempt;
    try {
      attempt = hooked.apply(first).thenCompose(r -> first.commit().thenApply(v -> r));
    } catch (RuntimeException e) {
      attempt = CompletableFuture.failedFuture(e);
    }
    CompletableFuture<AfterCommit<T>> committed = attempt.handle((r, e) -> {
      if (e == null) {
        return CompletableFuture.completedFuture(r);
      }
      if (FdbErrors.fdbException(e) == null) {
        return CompletableFuture.<AfterCommit<T>>failedFuture(FdbErrors.unwrap(e));
      }
      if (FdbErrors.fdbException(e).getCode() == FdbErrors.NOT_COMMITTED) {
        return db.runAsync(hooked, executor);
      }
      // Anything else as the retry loop would have it: onError backs off, or fails when not retryable.
      return first.onError(FdbErrors.unwrap(e)).thenCompose(t -> db.runAsync(hooked, executor));
    }).thenCompose(f -> f);
    committed.whenComplete((r, e) -> first.close());
    return FdbErrors.unwrapped(committed.thenCompose(AfterCommit::resolve));
  }

  /**
   * For tests: when set, watchers set no watch (waiting on a future that never completes instead),
   * so a waiter learns of its grant only through {@link #recheck} (or its own new reads).
   */
  volatile boolean watchesDisabled;

  OwnershipWatcher watcher(String name) {
    return watchers.computeIfAbsent(name, n -> new OwnershipWatcher(this, n));
  }

  /** An idle watcher leaves the map, so watching many names over time keeps no garbage. */
  void retire(OwnershipWatcher w, String name) {
    watchers.remove(name, w);
  }

  /** A handle starts heartbeating: tracked so that {@link #close()} stops it. */
  void track(HeartbeatingHandle h) {
    handles.add(h);
  }

  void untrack(HeartbeatingHandle h) {
    handles.remove(h);
  }

  boolean isClosed() {
    return closed;
  }

  void checkOpen(String name) {
    if (closed) {
      throw MutexException.closed(name);
    }
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    transitions.stop();
    if (reaper != null) {
      reaper.stop();
    }
    for (HeartbeatingHandle h : handles) {
      h.stopHeartbeats();
    }
    for (OwnershipWatcher w : watchers.values()) {
      w.close();
    }
    if (ownsScheduler) {
      scheduler.shutdownNow();
    }
  }

  /** For tests: how often this service's watcher of {@code name} has read it (0 when never watched). */
  long watcherReads(String name) {
    OwnershipWatcher w = watchers.get(name);
    return w == null ? 0 : w.reads();
  }

  /**
   * For tests: how many waiters the pass of this service's watcher of {@code name} served before
   * it began waiting for its watch, or -1 while a pass runs or nothing watches the mutex.
   */
  int watcherParkedWith(String name) {
    OwnershipWatcher w = watchers.get(name);
    return w == null ? -1 : w.parkedWith();
  }

  /** For tests: the handles currently heartbeating. */
  int heartbeatingHandles() {
    return handles.size();
  }
}
