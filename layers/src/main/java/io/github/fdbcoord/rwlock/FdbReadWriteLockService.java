package io.github.fdbcoord.rwlock;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.Range;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.ByteArrayUtil;
import com.apple.foundationdb.tuple.Versionstamp;
import io.github.fdbcoord.fdb.FdbErrors;
import io.github.fdbcoord.lease.GrantHints;
import io.github.fdbcoord.rwlock.ReadWriteLockSchema.Holder;
import io.github.fdbcoord.rwlock.ReadWriteLockSchema.Waiter;
import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * {@link ReadWriteLockService} over {@link ReadWriteLockSchema}. Every state change (acquire,
 * release, downgrade, leave, expiry) is one transaction that reads the holders and the queue with
 * conflicts and, after its own change, grants the queue's head while it is compatible with the
 * holders ({@link #grantHeads}); so the head of a non-empty queue is always a request the holders
 * block, and a new request is granted at once only when the queue is empty.
 */
final class FdbReadWriteLockService implements ReadWriteLockService {
  private static final Logger LOG = LoggerFactory.getLogger(FdbReadWriteLockService.class);
  /** Active locks one reaper pass looks at; the next pass continues after the last. */
  static final int REAPER_PAGE = 100;

  private final Database db;
  private final ReadWriteLockSchema schema;
  private final ReadWriteLockOptions options;
  private final Executor executor;
  private final ScheduledExecutorService scheduler;
  private final boolean ownsScheduler;
  private final Set<ReadWriteLockHandle> handles = ConcurrentHashMap.newKeySet();
  private final Set<ReadWriteLockWait> waits = ConcurrentHashMap.newKeySet();
  private final GrantHints hints;
  private volatile boolean closed;
  /** For tests: waits set no watch, so only a hint (or their heartbeat timer) wakes them. */
  volatile boolean watchesDisabled;
  private volatile ScheduledFuture<?> reaperTask;
  private String reapAfter;

  /** For tests: the clock of lease deadlines (ms since the epoch). */
  volatile LongSupplier clock = System::currentTimeMillis;

  FdbReadWriteLockService(Database db, Subspace root, ReadWriteLockOptions options) {
    this.db = db;
    this.schema = new ReadWriteLockSchema(root);
    this.options = options;
    this.executor = options.executor() != null ? options.executor() : db.getExecutor();
    this.ownsScheduler = options.scheduler() == null;
    this.scheduler = options.schedulerOrOwn("fdbcoord-rwlock-scheduler");
    this.hints = new GrantHints(options.grantNotifier());
    if (options.reaperEnabled()) {
      scheduleReap();
    }
  }

  // ================================================================ public operations

  @Override
  public CompletableFuture<ReadWriteLockHandle> acquire(String name, String owner, LockMode mode, Duration timeout) {
    CompletableFuture<ReadWriteGrant> granted = awaitGrant(name, owner, mode, timeout);
    CompletableFuture<ReadWriteLockHandle> result = new CompletableFuture<>();
    granted.whenComplete((grant, e) -> {
      if (e != null) {
        result.completeExceptionally(e);
        return;
      }
      ReadWriteLockHandle handle = new ReadWriteLockHandle(this, grant);
      handles.add(handle);
      if (result.complete(handle)) {
        handle.startHeartbeats();
      } else {
        // The caller cancelled as the grant came: nobody will use it.
        handle.stopHeartbeats();
        release(grant).exceptionally(x -> null);
      }
    });
    result.whenComplete((h, e) -> {
      if (result.isCancelled()) {
        granted.cancel(false);
      }
    });
    return result;
  }

  @Override
  public CompletableFuture<ReadWriteGrant> awaitGrant(String name, String owner, LockMode mode, Duration timeout) {
    checkRequest(name, owner, mode);
    if (timeout != null && timeout.isNegative()) {
      throw new IllegalArgumentException("timeout must not be negative, got " + timeout);
    }
    checkOpen(name);
    ReadWriteLockWait w = new ReadWriteLockWait(this, name, owner, mode, timeout);
    waits.add(w);
    hints.add(w);
    w.result.whenComplete((h, e) -> {
      waits.remove(w);
      hints.remove(w);
    });
    w.step(false);
    return w.result;
  }

  @Override
  public CompletableFuture<Boolean> withdraw(CompletableFuture<ReadWriteGrant> wait) {
    for (ReadWriteLockWait w : waits) {
      if (w.result == wait) {
        return wait.cancel(false) ? w.left.thenApply(v -> true) : CompletableFuture.completedFuture(false);
      }
    }
    return CompletableFuture.completedFuture(false);
  }

  @Override
  public CompletableFuture<Optional<ReadWriteGrant>> tryAcquire(String name, String owner, LockMode mode) {
    checkRequest(name, owner, mode);
    checkOpen(name);
    return transact(tr -> acquireIn(tr, name, owner, mode, true));
  }

  @Override
  public CompletableFuture<Optional<ReadWriteGrant>> heartbeatWaiter(String name, String owner) {
    checkName(name, owner);
    return transact(tr -> heartbeatWaiterIn(tr, name, owner));
  }

  @Override
  public CompletableFuture<Boolean> leave(String name, String owner) {
    checkName(name, owner);
    return transact(tr -> leaveIn(tr, name, owner)).thenApply(Left::waited);
  }

  @Override
  public CompletableFuture<ReadWriteGrant> heartbeat(ReadWriteGrant grant) {
    checkGrant(grant);
    return transact(tr -> heartbeatIn(tr, grant));
  }

  @Override
  public CompletableFuture<Void> release(ReadWriteGrant grant) {
    checkGrant(grant);
    return transact(tr -> releaseIn(tr, grant));
  }

  @Override
  public CompletableFuture<ReadWriteGrant> downgrade(ReadWriteGrant grant) {
    checkGrant(grant);
    if (grant.mode() != LockMode.WRITE) {
      throw new IllegalArgumentException("only a WRITE grant can be downgraded; '" + grant.owner()
          + "' holds lock '" + grant.lock() + "' in READ mode");
    }
    return transact(tr -> downgradeIn(tr, grant));
  }

  @Override
  public CompletableFuture<Void> fence(Transaction tr, ReadWriteGrant grant) {
    if (tr == null) {
      throw new IllegalArgumentException("a fence needs the caller's transaction, got null");
    }
    checkGrant(grant);
    // With a read conflict: the grant key changes only when this grant ends, never on a heartbeat.
    return FdbErrors.unwrapped(schema.readGrant(tr, grant.lock(), grant.owner()).thenCompose(current -> isGrant(current, grant)
        ? CompletableFuture.<Void>completedFuture(null)
        : CompletableFuture.<Void>failedFuture(notHeld(grant))));
  }

  @Override
  public CompletableFuture<ReadWriteLockState> state(String name) {
    ReadWriteLockSchema.checkName(name, "lock name");
    return FdbErrors.unwrapped(db.readAsync(tr -> schema.readHolders(tr, name)
        .thenCombine(schema.readQueue(tr, name, ReadTransaction.ROW_LIMIT_UNLIMITED), (holders, queue) ->
            new ReadWriteLockState(name, holders.stream().map(h -> h.toGrant(name)).toList(),
                queue.stream().map(w -> new ReadWriteLockState.Request(w.owner(), w.mode())).toList())), executor));
  }

  @Override
  public boolean recheck(String name, String owner) {
    return hints.nudge(name, owner);
  }

  @Override
  public CompletableFuture<io.github.fdbcoord.lease.StateSubscription> observeVersions(String name,
      java.util.function.BiConsumer<io.github.fdbcoord.api.FencingToken, ReadWriteLockState> listener) {
    return ReadWriteLockObserver.observe(db, schema, executor, scheduler, name, listener);
  }

  @Override
  public ReadWriteLockOptions options() {
    return options;
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    ScheduledFuture<?> r = reaperTask;
    if (r != null) {
      r.cancel(false);
    }
    for (ReadWriteLockHandle h : handles) {
      h.stopHeartbeats();
    }
    for (ReadWriteLockWait w : waits) {
      w.wake.complete(null);
    }
    if (ownsScheduler) {
      scheduler.shutdownNow();
    }
  }

  // ================================================================ transactions (one per state change)

  /**
   * Grants {@code mode} to {@code owner} when the queue is empty and the holders allow it, otherwise
   * enqueues it; an owner that holds the lock gets its grant, one that waits keeps its place (its
   * deadline renewed when {@code refresh}).
   */
  CompletableFuture<Stamped<Optional<ReadWriteGrant>>> acquireIn(Transaction tr, String name, String owner,
      LockMode mode, boolean refresh) {
    long expiresAt = clock.getAsLong() + options.lease().toMillis();
    // Every read at once, one round trip: the owner's own keys, and what decides whether it may go in (a reader reads
    // the writer key, not the holders: see the schema). The latter two are wasted, and add their conflict ranges,
    // only when the owner already holds or waits.
    CompletableFuture<Mine> mineRead = schema.readGrant(tr, name, owner).thenCombine(schema.readTicket(tr, name, owner), Mine::new);
    CompletableFuture<Boolean> freeRead = mode == LockMode.READ
        ? schema.readWriterHolds(tr, name).thenApply(writer -> !writer)
        : schema.readHolders(tr, name).thenApply(List::isEmpty);
    // The head only, with a conflict: whether anyone waits decides a grant, and an enqueue behind the head (which
    // writes at the queue's end) then does not conflict with this acquire.
    CompletableFuture<List<Waiter>> headRead = schema.readQueue(tr, name, 1);
    return mineRead.thenCompose(mine -> {
          if (mine.held() != null) {
            return CompletableFuture.completedFuture(Stamped.now(Optional.of(mine.held().toGrant(name))));
          }
          if (mine.ticket() != null) {
            return refresh ? renewWaiter(tr, name, mine.ticket(), expiresAt) : CompletableFuture.completedFuture(Stamped.now(Optional.empty()));
          }
          return freeRead.thenCombine(headRead, (free, head) -> head.isEmpty() && free).thenCompose(mayGo -> {
            if (mayGo) {
              schema.writeGrant(tr, name, owner, mode, 0);
              schema.writeLease(tr, name, owner, expiresAt);
              schema.touchGeneration(tr, name);
              schema.markActive(tr, name);
              return CompletableFuture.completedFuture(Stamped.after(tr,
                  vs -> Optional.of(new ReadWriteGrant(name, owner, mode, Versionstamp.complete(vs, 0)))));
            }
            // The bound is counted without a conflict (as the semaphore's): a queue may overshoot it by the enqueues
            // that commit at once, rather than every enqueue conflicting with every other.
            return schema.readQueue(tr.snapshot(), name, options.maxQueueLength()).thenApply(queue -> {
              if (queue.size() >= options.maxQueueLength()) {
                throw new ReadWriteLockException(ReadWriteLockException.Kind.QUEUE_FULL, name, "the queue of lock '"
                    + name + "' already holds " + queue.size() + " waiters (maxQueueLength); '" + owner + "' was not queued");
              }
              schema.enqueue(tr, name, owner, mode, expiresAt);
              schema.markActive(tr, name);
              return Stamped.now(Optional.<ReadWriteGrant>empty());
            });
          });
        });
  }

  private CompletableFuture<Stamped<Optional<ReadWriteGrant>>> renewWaiter(Transaction tr, String name, Versionstamp ticket, long expiresAt) {
    return schema.readWaiter(tr, name, ticket).thenApply(w -> {
      if (w != null) {
        schema.writeWaiter(tr, name, new Waiter(w.ticket(), w.owner(), w.mode(), expiresAt));
      }
      return Stamped.now(Optional.<ReadWriteGrant>empty());
    });
  }

  CompletableFuture<Stamped<Optional<ReadWriteGrant>>> heartbeatWaiterIn(Transaction tr, String name, String owner) {
    long expiresAt = clock.getAsLong() + options.lease().toMillis();
    return schema.readGrant(tr, name, owner).thenCombine(schema.readTicket(tr, name, owner), Mine::new)
        .thenCompose(mine -> {
          if (mine.held() != null) {
            return CompletableFuture.completedFuture(Stamped.now(Optional.of(mine.held().toGrant(name))));
          }
          if (mine.ticket() == null) {
            throw new ReadWriteLockException(ReadWriteLockException.Kind.NOT_HELD, name,
                "'" + owner + "' neither holds nor waits for lock '" + name + "' (its queue entry expired or it left)");
          }
          return renewWaiter(tr, name, mine.ticket(), expiresAt);
        });
  }

  /**
   * Ends {@code grant} and grants the queue's head while compatible. A grant found ended by this same release (an
   * earlier attempt whose commit reported {@code commit_unknown_result} but succeeded) is a success.
   */
  CompletableFuture<Stamped<Void>> releaseIn(Transaction tr, ReadWriteGrant grant) {
    String name = grant.lock();
    // As a snapshot: grantHeads adds the conflict on the part of the queue its grants depend on, so an enqueue behind
    // the first waiter left waiting does not conflict with this release.
    CompletableFuture<List<Waiter>> queueRead = schema.readQueue(tr.snapshot(), name, ReadTransaction.ROW_LIMIT_UNLIMITED);
    return schema.readGrant(tr, name, grant.owner()).thenCompose(current -> {
      if (!isGrant(current, grant)) {
        return schema.ended().read(tr, name, grant.owner(), grant.token().getBytes()).thenApply(ended -> {
          if (ended == null || !ended.released()) {
            throw notHeld(grant);
          }
          return Stamped.<Void>now(null);
        });
      }
      return queueRead.thenCompose(queue -> {
        schema.clearGrant(tr, name, grant.owner(), grant.mode());
        CompletableFuture<Void> recorded = schema.ended().recordRelease(tr, name, grant.owner(), grant.token().getBytes());
        if (queue.isEmpty()) {
          // Nobody to let in: the other holders are not read, so that readers leaving while others go in (each
          // writing a holder key) do not conflict. An enqueue that this read missed conflicts.
          Range q = schema.queueRange(name);
          tr.addReadConflictRange(q.begin, q.end);
          return recorded.thenApply(v -> Stamped.<Void>now(null));
        }
        return schema.readHolders(tr, name).thenCombine(recorded, (holders, v) -> {
          grantHeads(tr, name, without(holders, grant.owner()), queue, 0);
          return Stamped.<Void>now(null);
        });
      });
    });
  }

  /**
   * Rewrites the WRITE grant as a READ grant with this commit's token, then grants the readers at the queue's head.
   * A grant found downgraded by this same call (an earlier attempt that reported {@code commit_unknown_result} but
   * committed) answers with the READ grant that attempt made.
   */
  CompletableFuture<Stamped<ReadWriteGrant>> downgradeIn(Transaction tr, ReadWriteGrant grant) {
    String name = grant.lock();
    CompletableFuture<List<Holder>> holdersRead = schema.readHolders(tr, name);
    CompletableFuture<List<Waiter>> queueRead = schema.readQueue(tr, name, ReadTransaction.ROW_LIMIT_UNLIMITED);
    return schema.readGrant(tr, name, grant.owner()).thenCompose(current -> {
      if (!isGrant(current, grant)) {
        return schema.ended().read(tr, name, grant.owner(), grant.token().getBytes()).thenApply(ended -> {
          if (ended == null || ended.released()) {
            throw notHeld(grant);
          }
          return Stamped.now(new ReadWriteGrant(name, grant.owner(), LockMode.READ, ended.successor()));
        });
      }
      return holdersRead.thenCombine(queueRead, (holdersNow, queue) -> {
        schema.clearWriter(tr, name);
        schema.writeGrant(tr, name, grant.owner(), LockMode.READ, 0);
        schema.writeLease(tr, name, grant.owner(), clock.getAsLong() + options.lease().toMillis());
        schema.touchGeneration(tr, name);
        List<Holder> holders = without(holdersNow, grant.owner());
        holders.add(new Holder(grant.owner(), LockMode.READ, grant.token()));
        grantHeads(tr, name, holders, queue, 1);
        return Stamped.after(tr, vs -> new ReadWriteGrant(name, grant.owner(), LockMode.READ, Versionstamp.complete(vs, 0)));
      }).thenCompose(downgraded -> schema.ended().recordDowngrade(tr, name, grant.owner(), grant.token().getBytes(), 0)
          .thenApply(v -> downgraded));
    });
  }

  CompletableFuture<Stamped<ReadWriteGrant>> heartbeatIn(Transaction tr, ReadWriteGrant grant) {
    return schema.readGrant(tr, grant.lock(), grant.owner()).thenApply(current -> {
      if (!isGrant(current, grant)) {
        throw notHeld(grant);
      }
      schema.writeLease(tr, grant.lock(), grant.owner(), clock.getAsLong() + options.lease().toMillis());
      return Stamped.now(grant);
    });
  }

  /** What a leave found: the owner's grant (it did not leave), or whether it waited. */
  record Left(ReadWriteGrant held, boolean waited) {}

  /** Removes {@code owner}'s queue entry unless it holds the lock, granting whoever its leaving lets go. */
  CompletableFuture<Stamped<Left>> leaveIn(Transaction tr, String name, String owner) {
    return schema.readGrant(tr, name, owner).thenCombine(schema.readTicket(tr, name, owner), Mine::new)
        .thenCompose(mine -> {
          if (mine.held() != null) {
            return CompletableFuture.completedFuture(Stamped.now(new Left(mine.held().toGrant(name), false)));
          }
          if (mine.ticket() == null) {
            return CompletableFuture.completedFuture(Stamped.now(new Left(null, false)));
          }
          return schema.readHolders(tr, name).thenCombine(schema.readQueue(tr, name, options.maxQueueLength()), (holders, queue) -> {
            schema.dequeue(tr, name, new Waiter(mine.ticket(), owner, LockMode.READ, 0));
            List<Waiter> rest = queue.stream().filter(w -> !w.ticket().equals(mine.ticket())).toList();
            grantHeads(tr, name, holders, rest, 0);
            return Stamped.now(new Left(null, true));
          });
        });
  }

  /** The reaper's transaction: ends expired grants, removes expired waiters, grants whoever may go. */
  CompletableFuture<Stamped<Integer>> expireIn(Transaction tr, String name) {
    long now = clock.getAsLong();
    CompletableFuture<List<Holder>> holdersRead = schema.readHolders(tr, name);
    CompletableFuture<Map<String, Long>> leasesRead = schema.readLeases(tr, name);
    return schema.readQueue(tr, name, ReadTransaction.ROW_LIMIT_UNLIMITED).thenCompose(queue -> holdersRead.thenCombine(leasesRead, (holders, leases) -> {
      List<Holder> live = new ArrayList<>();
      int expired = 0;
      for (Holder h : holders) {
        Long deadline = leases.get(h.owner());
        if (deadline == null || deadline < now) {
          schema.clearGrant(tr, name, h.owner(), h.mode());
          expired++;
        } else {
          live.add(h);
        }
      }
      boolean staleWaiter = queue.stream().anyMatch(w -> w.expiresAt() < now);
      if (expired == 0 && !staleWaiter) {
        if (holders.isEmpty() && queue.isEmpty()) {
          schema.clearActive(tr, name);
        }
        return Stamped.now(0);
      }
      return Stamped.now(expired + grantHeads(tr, name, live, queue, 0));
    }));
  }

  /**
   * Grants the queue's head while it is compatible with the holders (a writer when there are none,
   * a reader when no writer holds), with user versions from {@code userVersion} on, and removes
   * expired waiters wherever they stand. Touches the generation when it granted; clears the active
   * mark when nothing is left. Returns how many waiters it granted or removed.
   */
  int grantHeads(Transaction tr, String name, List<Holder> holders, List<Waiter> queue, int userVersion) {
    long now = clock.getAsLong();
    long expiresAt = now + options.lease().toMillis();
    int holding = holders.size();
    boolean writer = holders.stream().anyMatch(h -> h.mode() == LockMode.WRITE);
    int uv = userVersion;
    int removed = 0;
    int waiting = 0;
    Waiter blocker = null;
    List<String> grantees = new ArrayList<>();
    for (Waiter w : queue) {
      if (w.expiresAt() < now) {
        schema.dequeue(tr, name, w);
        removed++;
      } else if (waiting == 0 && (w.mode() == LockMode.READ ? !writer : holding == 0)) {
        schema.dequeue(tr, name, w);
        schema.writeGrant(tr, name, w.owner(), w.mode(), uv++);
        schema.writeLease(tr, name, w.owner(), expiresAt);
        grantees.add(w.owner());
        holding++;
        writer |= w.mode() == LockMode.WRITE;
      } else {
        if (waiting == 0) {
          blocker = w;
        }
        waiting++;
      }
    }
    // What decided the grants: the queue up to the first waiter left waiting, or all of it when none is (then an
    // enqueue at its end would have changed what was cleared). Callers may read the queue as a snapshot.
    Range q = schema.queueRange(name);
    tr.addReadConflictRange(q.begin, blocker == null ? q.end
        : ByteArrayUtil.join(schema.packQueueKey(name, blocker.ticket()), new byte[] {0}));
    int granted = uv - userVersion;
    if (granted > 0) {
      schema.touchGeneration(tr, name);
      hints.afterCommit(tr, name, grantees);
    }
    if (holding == 0 && waiting == 0) {
      schema.clearActive(tr, name);
    }
    return granted + removed;
  }

  private record Mine(Holder held, Versionstamp ticket) {}

  private static List<Holder> without(List<Holder> holders, String owner) {
    return new ArrayList<>(holders.stream().filter(h -> !h.owner().equals(owner)).toList());
  }

  private static boolean isGrant(Holder current, ReadWriteGrant grant) {
    return current != null && current.token().equals(grant.token()) && current.mode() == grant.mode();
  }

  private static ReadWriteLockException notHeld(ReadWriteGrant grant) {
    return new ReadWriteLockException(ReadWriteLockException.Kind.NOT_HELD, grant.lock(), "'" + grant.owner()
        + "' no longer holds lock '" + grant.lock() + "' under token " + grant.token()
        + " (released, expired after its lease, or downgraded)");
  }

  static void cancel(CompletableFuture<Void> watch) {
    if (watch != null) {
      watch.cancel(false);
    }
  }

  // ================================================================ reaper

  private void scheduleReap() {
    if (closed) {
      return;
    }
    try {
      reaperTask = scheduler.schedule(this::reap, options.reaperInterval().toMillis(), TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException closing) {
      // closed meanwhile
    }
  }

  private void reap() {
    if (closed) {
      return;
    }
    String after = reapAfter;
    FdbErrors.unwrapped(db.readAsync(tr -> schema.readActive(tr.snapshot(), after, REAPER_PAGE), executor))
        .thenCompose(names -> {
          reapAfter = names.size() < REAPER_PAGE ? null : names.get(names.size() - 1);
          List<CompletableFuture<Integer>> each = new ArrayList<>(names.size());
          for (String n : names) {
            each.add(transact(tr -> expireIn(tr, n)));
          }
          return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new));
        })
        .whenComplete((v, e) -> {
          if (e != null && !closed) {
            LOG.warn("read-write lock reaper pass failed; the next pass retries", e);
          }
          scheduleReap();
        });
  }

  // ================================================================ plumbing

  /** Runs {@code body} in the database's retry loop on this service's executor, then resolves its result. */
  <T> CompletableFuture<T> transact(Function<Transaction, CompletableFuture<Stamped<T>>> body) {
    return FdbErrors.unwrapped(db.runAsync(body, executor).thenCompose(Stamped::resolve));
  }

  boolean isClosed() {
    return closed;
  }

  Executor executor() {
    return executor;
  }

  ReadWriteLockSchema schema() {
    return schema;
  }

  ScheduledExecutorService scheduler() {
    return scheduler;
  }

  void untrack(ReadWriteLockHandle h) {
    handles.remove(h);
  }

  /** For tests: the handles currently heartbeating. */
  int heartbeatingHandles() {
    return handles.size();
  }

  private void checkOpen(String name) {
    if (closed) {
      throw ReadWriteLockException.closed(name);
    }
  }

  private static void checkName(String name, String owner) {
    ReadWriteLockSchema.checkName(name, "lock name");
    ReadWriteLockSchema.checkName(owner, "owner");
  }

  private static void checkRequest(String name, String owner, LockMode mode) {
    checkName(name, owner);
    if (mode == null) {
      throw new IllegalArgumentException("mode must be READ or WRITE, got null");
    }
  }

  private static void checkGrant(ReadWriteGrant grant) {
    if (grant == null) {
      throw new IllegalArgumentException("grant must not be null");
    }
    checkName(grant.lock(), grant.owner());
  }
}
