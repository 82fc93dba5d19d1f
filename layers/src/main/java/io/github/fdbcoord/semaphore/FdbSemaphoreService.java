package io.github.fdbcoord.semaphore;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.Versionstamp;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.fdb.FdbErrors;
import io.github.fdbcoord.lease.GrantHints;
import io.github.fdbcoord.semaphore.SemaphoreException.Kind;
import io.github.fdbcoord.semaphore.SemaphoreSchema.Waiter;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

import static io.github.fdbcoord.semaphore.SemaphoreSchema.checkName;

/**
 * {@link SemaphoreService} over fdb-java's {@link Database}: composes the queries of {@link SemaphoreSchema}. An
 * acquire that waits is a {@link Waiting}, a held permit heartbeats through a {@link HeartbeatingPermit}, and the {@link SemaphoreReaper}
 * removes holders and waiters whose heartbeats stopped. Every change of holders ends with {@link #handOff}, which
 * grants the freed permit to the first waiter.
 */
final class FdbSemaphoreService implements SemaphoreService {
  /** Semaphores the reaper reads per page of the index. */
  static final int PAGE = 1000;

  final Database db;
  final SemaphoreSchema schema;
  final Executor executor;
  final ScheduledExecutorService scheduler;
  private final SemaphoreOptions options;
  private final boolean ownsScheduler;
  private final Set<HeartbeatingPermit> handles = ConcurrentHashMap.newKeySet();
  private final Set<Waiting> waits = ConcurrentHashMap.newKeySet();
  private final SemaphoreReaper reaper;
  private final GrantHints hints;
  private volatile boolean closed;
  /** For tests: waits set no watch, so only a hint (or their heartbeat timer) wakes them. */
  volatile boolean watchesDisabled;

  FdbSemaphoreService(Database db, Subspace root, SemaphoreOptions options) {
    this.db = db;
    this.schema = new SemaphoreSchema(root);
    this.options = options;
    this.executor = options.executor() != null ? options.executor() : db.getExecutor();
    this.ownsScheduler = options.scheduler() == null;
    this.scheduler = options.schedulerOrOwn("fdb-semaphore-scheduler");
    this.hints = new GrantHints(options.grantNotifier());
    this.reaper = options.reaperEnabled() ? new SemaphoreReaper(this) : null;
    if (reaper != null) {
      reaper.schedule();
    }
  }

  boolean isClosed() {
    return closed;
  }

  /** A handle released or found ended: no longer released at close. */
  void forget(HeartbeatingPermit h) {
    handles.remove(h);
  }

  @Override
  public SemaphoreOptions options() {
    return options;
  }

  // ================================================================ operations

  @Override
  public CompletableFuture<SemaphoreHandle> acquire(String name, int permits, String owner, Duration timeout) {
    checkName(name, "semaphore name");
    checkName(owner, "owner");
    checkPermits(permits);
    if (timeout != null && timeout.isNegative()) {
      throw new IllegalArgumentException("timeout must not be negative, got " + timeout);
    }
    if (closed) {
      return CompletableFuture.failedFuture(SemaphoreException.closed(name));
    }
    if (timeout != null && timeout.isZero()) {
      return FdbErrors.unwrapped(transact(tr -> acquireIn(tr, name, permits, owner, false, false, true))
          .thenCompose(this::tokenOf).thenApply(token -> {
            if (token == null) {
              throw timedOut(name, owner, timeout);
            }
            return (SemaphoreHandle) startHandle(name, owner, token);
          }));
    }
    Waiting w = startWaiting(name, permits, owner, timeout);
    CompletableFuture<SemaphoreHandle> handle = new CompletableFuture<>();
    w.result.whenComplete((token, e) -> {
      if (e != null) {
        handle.completeExceptionally(e);
        return;
      }
      HeartbeatingPermit h = startHandle(name, owner, token);
      if (!handle.complete(h)) {
        h.release(); // the caller cancelled as the grant came: nobody will use it
      }
    });
    // The caller's cancellation ends the wait (its queue entry leaves, a grant that raced it is released).
    handle.whenComplete((h, e) -> {
      if (e != null) {
        w.result.cancel(false);
      }
    });
    return handle;
  }

  @Override
  public SemaphoreWait awaitGrant(String name, int permits, String owner, Duration timeout) {
    checkName(name, "semaphore name");
    checkName(owner, "owner");
    checkPermits(permits);
    if (timeout != null && timeout.isNegative()) {
      throw new IllegalArgumentException("timeout must not be negative, got " + timeout);
    }
    if (closed) {
      return new TriedOnce(this, name, owner, CompletableFuture.failedFuture(SemaphoreException.closed(name)));
    }
    if (timeout != null && timeout.isZero()) {
      return new TriedOnce(this, name, owner, transact(tr -> acquireIn(tr, name, permits, owner, false, false, true))
          .thenCompose(this::tokenOf).thenApply(token -> {
            if (token == null) {
              throw timedOut(name, owner, timeout);
            }
            return token;
          }));
    }
    return startWaiting(name, permits, owner, timeout);
  }

  private Waiting startWaiting(String name, int permits, String owner, Duration timeout) {
    Waiting w = new Waiting(name, permits, owner, timeout);
    waits.add(w);
    hints.add(w);
    w.result.whenComplete((token, e) -> {
      waits.remove(w);
      hints.remove(w);
    });
    w.pass();
    return w;
  }

  @Override
  public CompletableFuture<Void> release(String name, String owner, FencingToken token) {
    checkGrant(name, owner, token);
    return transact(tr -> releaseIn(tr, name, owner, token));
  }

  /**
   * Ends {@code owner}'s grant {@code token} and hands the permit on. A grant found ended by an earlier attempt of the
   * same release (whose commit reported {@code commit_unknown_result} but succeeded) is a success.
   */
  CompletableFuture<Void> releaseIn(Transaction tr, String name, String owner, FencingToken token) {
    return schema.readHolder(tr, name, owner).thenCompose(current -> {
      if (!token.equals(current)) {
        // Ended by an earlier attempt of this release whose commit reported commit_unknown_result, or else not held.
        return schema.ended().read(tr, name, owner, token.bytes()).thenApply(ended -> {
          if (ended == null || !ended.released()) {
            throw SemaphoreException.notHeld(name, owner);
          }
          return (Void) null;
        });
      }
      schema.removeHolder(tr, name, owner);
      return schema.ended().recordRelease(tr, name, owner, token.bytes()).thenCompose(v -> handOff(tr, name));
    });
  }

  @Override
  public CompletableFuture<Void> heartbeat(String name, String owner, FencingToken token) {
    checkGrant(name, owner, token);
    return transact(tr -> schema.readHolder(tr, name, owner)
        .thenCombine(schema.readBeat(tr.snapshot(), name, owner), (current, beats) -> {
          if (!token.equals(current)) {
            throw SemaphoreException.notHeld(name, owner);
          }
          schema.setBeat(tr, name, owner, beats == null ? 1 : beats + 1);
          return null;
        }));
  }

  @Override
  public CompletableFuture<Void> fence(Transaction tr, String name, String owner, FencingToken token) {
    checkGrant(name, owner, token);
    return FdbErrors.unwrapped(schema.readHolder(tr, name, owner).thenApply(current -> {
      if (!token.equals(current)) {
        throw SemaphoreException.notHeld(name, owner);
      }
      return null;
    }));
  }

  @Override
  public boolean recheck(String name, String owner) {
    return hints.nudge(name, owner);
  }

  @Override
  public CompletableFuture<SemaphoreState> state(String name) {
    checkName(name, "semaphore name");
    return FdbErrors.unwrapped(db.readAsync(tr -> {
      CompletableFuture<Integer> permits = schema.readPermits(tr, name);
      CompletableFuture<List<Holder>> holders = schema.readHolders(tr, name);
      CompletableFuture<List<Waiter>> queue = schema.readQueue(tr, name, ReadTransaction.ROW_LIMIT_UNLIMITED);
      return CompletableFuture.allOf(permits, holders, queue).thenApply(v -> new SemaphoreState(
          permits.join() == null ? 0 : permits.join(), holders.join(),
          queue.join().stream().map(Waiter::owner).toList()));
    }, executor));
  }

  @Override
  public CompletableFuture<io.github.fdbcoord.lease.StateSubscription> observeVersions(String name,
      java.util.function.BiConsumer<FencingToken, SemaphoreState> listener) {
    return SemaphoreObserver.observe(db, schema, executor, scheduler, name, listener);
  }

  @Override
  public void close() {
    closed = true;
    if (reaper != null) {
      reaper.stop();
    }
    for (HeartbeatingPermit h : handles) {
      h.stopHeartbeats();
    }
    for (Waiting w : waits) {
      w.result.completeExceptionally(SemaphoreException.closed(w.name));
    }
    if (ownsScheduler) {
      scheduler.shutdownNow();
    }
  }

  // ================================================================ transactions composed from the schema's queries

  /** The outcome of one acquire transaction: a grant already held, a new grant (token after commit), or none. */
  private record Attempt(FencingToken held, CompletableFuture<byte[]> grantStamp, CompletableFuture<Void> watch) {
    static Attempt none(CompletableFuture<Void> watch) {
      return new Attempt(null, null, watch);
    }
  }

  /**
   * Grants {@code owner} a permit when one is free and nobody waits before it, otherwise keeps its queue entry alive
   * when {@code beat} (or enqueues it when {@code enqueue}); with {@code watch}, also watches the generation key.
   */
  private CompletableFuture<Attempt> acquireIn(Transaction tr, String name, int permits, String owner, boolean enqueue,
      boolean watch, boolean beat) {
    CompletableFuture<Integer> storedRead = schema.readPermits(tr, name);
    CompletableFuture<List<Holder>> holdersRead = schema.readHolders(tr, name);
    CompletableFuture<List<Waiter>> headRead = schema.readQueue(tr, name, 1);
    CompletableFuture<Versionstamp> ticketRead = schema.readTicket(tr, name, owner);
    CompletableFuture<Void> watched = !watch ? null
        : watchesDisabled ? new CompletableFuture<>() : schema.watchHolder(tr, name, owner);
    return CompletableFuture.allOf(storedRead, holdersRead, headRead, ticketRead).thenCompose(v -> {
      List<Holder> holders = holdersRead.join();
      for (Holder h : holders) {
        if (h.owner().equals(owner)) {
          return CompletableFuture.completedFuture(new Attempt(h.token(), null, watched));
        }
      }
      Integer stored = storedRead.join();
      if (stored != null && stored != permits) {
        throw new SemaphoreException(Kind.PERMITS_MISMATCH, name, "semaphore '" + name + "' is in use with "
            + stored + " permits, asked for with " + permits + "; every user of a semaphore must name the same count");
      }
      boolean room = holders.size() < permits;
      Waiter head = headRead.join().isEmpty() ? null : headRead.join().get(0);
      Versionstamp ticket = ticketRead.join();
      if (ticket != null) {
        if (room && head != null && head.ticket().equals(ticket)) {
          schema.dequeue(tr, name, ticket, owner);
          return CompletableFuture.completedFuture(grant(tr, name, permits, stored != null, owner, watched));
        }
        // Still waiting: the beat keeps the entry alive (the reaper removes entries whose beats stop). Only once a
        // heartbeat interval: a pass that a change woke reads only, so the waiters woken by one grant or release do
        // not write (and conflict on the queue they all read) each time, which on a real FoundationDB held a
        // semaphore of 8 contenders to 8 cycles a second.
        if (!beat) {
          return CompletableFuture.completedFuture(Attempt.none(watched));
        }
        return schema.readWaiter(tr, name, ticket).thenApply(w -> {
          if (w != null) {
            schema.setWaiterBeats(tr, name, w, w.beats() + 1);
          }
          return Attempt.none(watched);
        });
      }
      if (room && head == null) {
        return CompletableFuture.completedFuture(grant(tr, name, permits, stored != null, owner, watched));
      }
      if (!enqueue) {
        return CompletableFuture.completedFuture(Attempt.none(watched));
      }
      return schema.readQueue(tr.snapshot(), name, options.maxQueueLength()).thenApply(queue -> {
        if (queue.size() >= options.maxQueueLength()) {
          throw new SemaphoreException(Kind.QUEUE_FULL, name, "the queue of semaphore '" + name + "' already holds "
              + queue.size() + " waiters (maxQueueLength)");
        }
        schema.enqueue(tr, name, owner);
        schema.markInUse(tr, name, permits, stored != null);
        return Attempt.none(watched);
      });
    });
  }

  private Attempt grant(Transaction tr, String name, int permits, boolean stored, String owner,
      CompletableFuture<Void> watched) {
    schema.grant(tr, name, owner);
    schema.markInUse(tr, name, permits, stored);
    return new Attempt(null, tr.getVersionstamp(), watched);
  }

  /** The token an attempt ended with (the committed versionstamp of a new grant), or null. */
  private CompletableFuture<FencingToken> tokenOf(Attempt a) {
    if (a.held() != null) {
      return CompletableFuture.completedFuture(a.held());
    }
    if (a.grantStamp() != null) {
      return a.grantStamp().thenApply(stamp -> FencingToken.of(Arrays.copyOf(stamp, FencingToken.LENGTH)));
    }
    return CompletableFuture.completedFuture(null);
  }

  /**
   * After a grant ended or a waiter left in {@code tr}: grants the permit to the first waiter when fewer than the
   * permits are held, or forgets the semaphore when it has neither holders nor waiters. At most one grant per
   * transaction (so every grant has its own commit versionstamp); one is always enough, since a queue is only
   * non-empty while every permit is held, and every end of a grant comes here.
   */
  CompletableFuture<Void> handOff(Transaction tr, String name) {
    CompletableFuture<Integer> permitsRead = schema.readPermits(tr, name);
    CompletableFuture<List<Holder>> holdersRead = schema.readHolders(tr, name);
    CompletableFuture<List<Waiter>> headRead = schema.readQueue(tr, name, 1);
    return CompletableFuture.allOf(permitsRead, holdersRead, headRead).thenApply(v -> {
      int permits = permitsRead.join() == null ? 0 : permitsRead.join();
      List<Holder> holders = holdersRead.join();
      List<Waiter> head = headRead.join();
      if (!head.isEmpty() && holders.size() < permits) {
        Waiter next = head.get(0);
        schema.dequeue(tr, name, next.ticket(), next.owner());
        schema.grant(tr, name, next.owner());
        hints.afterCommit(tr, name, List.of(next.owner()));
      } else if (head.isEmpty() && holders.isEmpty()) {
        schema.clearUnused(tr, name);
      }
      return null;
    });
  }

  /** Leaves the queue unless {@code owner} was granted a permit meanwhile: then completes with its token, else null. */
  private CompletableFuture<FencingToken> leaveUnlessGranted(String name, String owner) {
    return transact(tr -> schema.readHolder(tr, name, owner).thenCombine(schema.readTicket(tr, name, owner),
        (token, ticket) -> {
          if (token != null) {
            return CompletableFuture.completedFuture(token);
          }
          if (ticket == null) {
            return CompletableFuture.<FencingToken>completedFuture(null);
          }
          schema.dequeue(tr, name, ticket, owner);
          return handOff(tr, name).thenApply(x -> (FencingToken) null);
        }).thenCompose(f -> f));
  }

  <T> CompletableFuture<T> transact(Function<Transaction, CompletableFuture<T>> body) {
    return FdbErrors.unwrapped(db.runAsync(body, executor));
  }

  private static void checkPermits(int permits) {
    if (permits < 1 || permits > MAX_PERMITS) {
      throw new IllegalArgumentException("permits must be between 1 and " + MAX_PERMITS + ", got " + permits);
    }
  }

  private static void checkGrant(String name, String owner, FencingToken token) {
    checkName(name, "semaphore name");
    checkName(owner, "owner");
    if (token == null) {
      throw new IllegalArgumentException("the grant's fencing token must not be null");
    }
  }

  private static SemaphoreException timedOut(String name, String owner, Duration timeout) {
    return new SemaphoreException(Kind.TIMED_OUT, name,
        "'" + owner + "' got no permit of semaphore '" + name + "' within " + timeout + "; it left the queue");
  }

  private HeartbeatingPermit startHandle(String name, String owner, FencingToken token) {
    HeartbeatingPermit h = new HeartbeatingPermit(this, name, owner, token);
    handles.add(h);
    h.scheduleHeartbeat();
    return h;
  }

  // ================================================================ a waiting acquire

  /**
   * One waiting acquire: each pass is one transaction that takes a permit if it is this owner's turn, else keeps
   * (or makes) its queue entry and watches the generation key; the next pass runs when the watch fires, after a
   * heartbeat interval at most, or at the deadline.
   */
  private final class Waiting implements SemaphoreWait, GrantHints.Wait {
    final String name;
    final int permits;
    final String owner;
    final Duration timeout;
    final long deadline;
    final CompletableFuture<FencingToken> result = new CompletableFuture<>();
    /** Completes once a wait that ended without a grant has left the queue (and released a grant that raced it). */
    private final CompletableFuture<Void> left = new CompletableFuture<>();
    /** Completed to end the current wait between passes (by its timer, or when the result completes). */
    private volatile CompletableFuture<Void> wake;
    /** When the last pass that kept the queue entry alive began (passes run one at a time). */
    private volatile long lastBeat;
    private volatile boolean beaten;
    /** Hints of a grant received; a pass that began before the last one does not wait for a change. */
    private final AtomicLong nudges = new AtomicLong();
    private volatile long nudgesAtPass;

    Waiting(String name, int permits, String owner, Duration timeout) {
      this.name = name;
      this.permits = permits;
      this.owner = owner;
      this.timeout = timeout;
      this.deadline = timeout == null ? Long.MAX_VALUE : System.nanoTime() + timeout.toNanos();
      result.whenComplete((h, e) -> {
        CompletableFuture<Void> w = wake;
        if (w != null) {
          w.complete(null);
        }
        if (e != null && !(e instanceof SemaphoreException && ((SemaphoreException) e).kind() == Kind.TIMED_OUT)) {
          // Cancelled, closed or failed: leave the queue; a grant that raced the failure is released.
          leaveUnlessGranted(name, owner).thenCompose(token -> token == null ? CompletableFuture.completedFuture(null)
              : release(name, owner, token)).whenComplete((v, e2) -> {
                if (e2 != null) {
                  left.completeExceptionally(FdbErrors.unwrap(e2));
                } else {
                  left.complete(null);
                }
              });
        } else {
          left.complete(null);
        }
      });
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public String owner() {
      return owner;
    }

    @Override
    public CompletableFuture<FencingToken> granted() {
      return result;
    }

    @Override
    public CompletableFuture<Boolean> cancel() {
      return result.cancel(false) ? left.thenApply(v -> true) : CompletableFuture.completedFuture(false);
    }

    /** A grant was committed for this owner: the wait reads again now rather than when its watch fires. */
    @Override
    public void nudge() {
      nudges.incrementAndGet();
      CompletableFuture<Void> w = wake;
      if (w != null) {
        w.complete(null);
      }
    }

    void pass() {
      if (result.isDone()) {
        return;
      }
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        leaveUnlessGranted(name, owner).whenComplete((token, e) -> {
          if (e != null) {
            result.completeExceptionally(e);
          } else if (token != null) {
            deliver(token);
          } else {
            result.completeExceptionally(timedOut(name, owner, timeout));
          }
        });
        return;
      }
      long started = System.nanoTime();
      nudgesAtPass = nudges.get();
      boolean beat = !beaten || started - lastBeat >= options.heartbeatInterval().toNanos();
      transact(tr -> acquireIn(tr, name, permits, owner, true, true, beat)).whenComplete((attempt, e) -> {
        if (e != null) {
          result.completeExceptionally(e);
          return;
        }
        if (beat) {
          beaten = true;
          lastBeat = started;
        }
        tokenOf(attempt).whenComplete((token, e2) -> {
          if (e2 != null) {
            result.completeExceptionally(FdbErrors.unwrap(e2));
          } else if (token != null) {
            attempt.watch().cancel(false);
            deliver(token);
          } else {
            waitForChange(attempt.watch(), left);
          }
        });
      });
    }

    private void waitForChange(CompletableFuture<Void> watch, long left) {
      CompletableFuture<Void> timer = new CompletableFuture<>();
      wake = timer;
      // A hint that came while the pass ran may be of a grant the pass read too early to see.
      if (result.isDone() || nudges.get() != nudgesAtPass) {
        timer.complete(null);
      }
      // Woken at the latest when the next beat is due.
      long beatDue = beaten ? lastBeat + options.heartbeatInterval().toNanos() - System.nanoTime()
          : options.heartbeatInterval().toNanos();
      long delay = Math.max(0, Math.min(beatDue, left));
      ScheduledFuture<?> tick;
      try {
        tick = scheduler.schedule(() -> timer.complete(null), delay, TimeUnit.NANOSECONDS);
      } catch (RuntimeException rejected) {
        watch.cancel(false);
        result.completeExceptionally(SemaphoreException.closed(name));
        return;
      }
      CompletableFuture.anyOf(watch, timer).whenCompleteAsync((v, e) -> {
        tick.cancel(false);
        watch.cancel(false);
        pass();
      }, executor);
    }

    private void deliver(FencingToken token) {
      if (!result.complete(token)) {
        release(name, owner, token); // the wait ended meanwhile (cancelled, closed): nobody will use the grant
      }
    }
  }

  // ================================================================ a held permit

}
