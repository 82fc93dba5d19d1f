package io.github.fdbcoord.mutex;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.api.MutexOwner;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.tuple.Versionstamp;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;

/**
 * One watch per mutex per service, shared by every local waiter and subscriber of that mutex:
 * reads the owner record and the new events, sets a watch on the generation key in the same
 * transaction (so no transition between the read and the watch is missed), dispatches, and waits
 * for the watch or for a new waiter. Heartbeats never touch the generation key, so they wake nobody.
 */
final class OwnershipWatcher {
  private static final Logger LOG = LoggerFactory.getLogger(OwnershipWatcher.class);
  private static final int EVENT_PAGE = 1000;
  private static final FencingToken BEGINNING = FencingToken.of(new byte[FencingToken.LENGTH]);

  private final FdbMutexService service;
  private final String name;
  private final List<Waiter> waiters = new ArrayList<>();
  private final List<Subscriber> subscribers = new ArrayList<>();
  private boolean running;
  private CompletableFuture<Void> kick = new CompletableFuture<>();
  private CompletableFuture<Void> watch;
  private boolean closed;
  /** Stopped for good and removed from the service's map: callers must take a fresh watcher. */
  private boolean retired;
  private final AtomicLong reads = new AtomicLong();
  /** The wait for a watch or a kick in progress (tests wait for it: nothing of this watcher runs then). */
  private volatile Parked parked;

  private record Parked(AtomicBoolean resumed, int waiters) {}

  OwnershipWatcher(FdbMutexService service, String name) {
    this.service = service;
    this.name = name;
  }

  // ---------------------------------------------------------------- waiters and subscribers

  enum Kind { GRANTED, RETRY, GAVE_UP, CLOSED }

  /** How a wait ended: granted (with the owner record), retry (granted and lost since), gave up, closed. */
  record Outcome(Kind kind, MutexOwner owner) {
    static Outcome gaveUp() {
      return new Outcome(Kind.GAVE_UP, null);
    }
  }

  /** A local acquire waiting for {@code owner} to be granted the mutex after enqueuing under {@code ticket}. */
  final class Waiter extends CompletableFuture<Outcome> {
    final String owner;
    /** Events up to this sequence have been checked for a grant to this owner. */
    FencingToken checkedUpTo;

    Waiter(String owner, FencingToken ticket) {
      this.owner = owner;
      this.checkedUpTo = ticket;
    }
  }

  private final class Subscriber implements MutexSubscription {
    final Consumer<LockEvent> listener;
    final CompletableFuture<MutexSubscription> ready = new CompletableFuture<>();
    /** Sequence of the last event delivered; null until the first read established the start. */
    FencingToken after;
    volatile boolean active = true;

    Subscriber(Consumer<LockEvent> listener) {
      this.listener = listener;
    }

    @Override
    public String mutex() {
      return name;
    }

    @Override
    public void close() {
      active = false;
      synchronized (OwnershipWatcher.this) {
        subscribers.remove(this);
        stopIfIdle();
      }
    }
  }

  /** Null when this watcher has retired. */
  Waiter await(String owner, Versionstamp ticket) {
    Waiter w = new Waiter(owner, MutexSchema.token(ticket));
    synchronized (this) {
      if (retired) {
        return null;
      }
      if (closed) {
        w.complete(new Outcome(Kind.CLOSED, null));
        return w;
      }
      waiters.add(w);
      wake();
    }
    w.whenComplete((o, e) -> {
      synchronized (this) {
        waiters.remove(w);
        stopIfIdle();
      }
    });
    return w;
  }

  CompletableFuture<MutexSubscription> subscribe(Consumer<LockEvent> listener) {
    Subscriber s = new Subscriber(listener);
    synchronized (this) {
      if (retired) {
        return null;
      }
      if (closed) {
        return CompletableFuture.failedFuture(MutexException.closed(name));
      }
      subscribers.add(s);
      wake();
    }
    return s.ready;
  }

  /**
   * A hint that {@code owner} may have been granted the mutex: reads it again now if a local acquire
   * of {@code owner} waits (a read at a fresh read version, which sees every commit acknowledged
   * before the hint was sent). Whether such an acquire waits.
   */
  synchronized boolean recheck(String owner) {
    if (closed || retired) {
      return false;
    }
    for (Waiter w : waiters) {
      if (!w.isDone() && w.owner.equals(owner)) {
        wake();
        return true;
      }
    }
    return false;
  }

  /** Starts the loop, or makes a running loop read again now (a new waiter may already be owner). */
  private void wake() {
    if (!running) {
      running = true;
      service.executor.execute(this::iterate);
    } else {
      kick.complete(null);
    }
  }

  /** Lets an idle loop stop reading (it keeps only its outstanding watch until that fires). */
  private void stopIfIdle() {
    if (waiters.isEmpty() && subscribers.isEmpty()) {
      kick.complete(null);
    }
  }

  void close() {
    List<Waiter> ws;
    List<Subscriber> ss;
    synchronized (this) {
      closed = true;
      ws = new ArrayList<>(waiters);
      ss = new ArrayList<>(subscribers);
      waiters.clear();
      subscribers.clear();
      kick.complete(null); // the pending watch, if any, is left to fire (see iterate)
    }
    for (Waiter w : ws) {
      w.complete(new Outcome(Kind.CLOSED, null));
    }
    for (Subscriber s : ss) {
      s.active = false;
      s.ready.completeExceptionally(MutexException.closed(name));
    }
  }

  /** How many times this watcher read the mutex (each wake-up is one read). */
  long reads() {
    return reads.get();
  }

  // ---------------------------------------------------------------- the loop

  private record Snapshot(FencingToken generation, MutexOwner owner, List<LockEvent> events, CompletableFuture<Void> watch) {}

  /**
   * One pass: read the generation, the owner record and the events still needed, and (when no
   * watch is pending) set a watch on the generation in the same transaction; dispatch; then wait
   * for the watch or a kick.
   *
   * <p>A pending watch is never cancelled: it stays valid across kicks (it fires on any change
   * after the read that set it), so a kick only re-reads. This also keeps the layer clear of the
   * embedded engine's race between a watch's cancellation and another watch's registration on the
   * same key (see docs/mutex.md); at most one watch per mutex per service is outstanding.
   */
  private void iterate() {
    List<Waiter> ws;
    List<Subscriber> ss;
    CompletableFuture<Void> myKick;
    CompletableFuture<Void> pending;
    synchronized (this) {
      boolean idle = waiters.isEmpty() && subscribers.isEmpty();
      boolean watching = watch != null && !watch.isDone();
      if (closed || (idle && !watching)) {
        running = false;
        retired = true;
        service.retire(this, name);
        return;
      }
      if (kick.isDone()) {
        kick = new CompletableFuture<>();
      }
      myKick = kick;
      if (idle) {
        // Nobody to serve: let the outstanding watch run out at the next transition, then retire.
        waitFor(watch, myKick, 0);
        return;
      }
      ws = new ArrayList<>(waiters);
      ss = new ArrayList<>(subscribers);
      pending = watching ? watch : null;
    }
    reads.incrementAndGet();
    FencingToken from = readFrom(ws, ss);
    service.transact(tr -> service.schema.readGeneration(tr, name)
            .thenCombine(service.schema.readOwner(tr.snapshot(), name), Snapshot0::new)
            .thenCombine(from == null
                    ? CompletableFuture.completedFuture(List.<LockEvent>of())
                    : service.schema.readEventsAfter(tr.snapshot(), name, from, EVENT_PAGE),
                (s, events) -> AfterCommit.now(new Snapshot(s.generation, s.owner, events,
                    pending != null ? pending : watch(tr)))))
        .whenComplete((snap, e) -> {
          if (e != null) {
            LOG.debug("reading mutex '" + name + "' failed, retrying", e);
            retryLater();
            return;
          }
          synchronized (this) {
            watch = snap.watch;
          }
          dispatch(snap, ws, ss);
          if (snap.events.size() >= EVENT_PAGE) {
            service.executor.execute(this::iterate); // more events to read before waiting
          } else {
            waitFor(snap.watch, myKick, ws.size());
          }
        });
  }

  /**
   * Waits for the watch or a kick, whichever comes first, then reads again. A watch that fires later
   * completes on a thread of the transactions' executor (the store completes watches there), and the
   * read runs right on it: a hand-off's next owner then learns of its grant without waiting for
   * another pooled thread to wake. A kick comes from a caller's thread (a new waiter, or one that
   * left), and a watch done before its callback is in place would run the read inside this call,
   * one level deeper each time: both go through the executor.
   */
  private void waitFor(CompletableFuture<Void> watch, CompletableFuture<Void> myKick, int waitersServed) {
    AtomicBoolean resumed = new AtomicBoolean();
    // Before the callbacks: a resume that comes at once must find this wait, not leave it parked.
    parked = new Parked(resumed, waitersServed);
    AtomicBoolean registering = new AtomicBoolean(true);
    watch.whenComplete((v, e) -> {
      if (!resumed.compareAndSet(false, true)) {
        return;
      }
      if (e != null) {
        retryLater(); // the watch failed (e.g. too_many_watches): back off rather than spin
      } else if (registering.get()) {
        service.executor.execute(this::iterate);
      } else {
        iterate();
      }
    });
    registering.set(false);
    myKick.whenComplete((v, e) -> {
      if (resumed.compareAndSet(false, true)) {
        service.executor.execute(this::iterate);
      }
    });
  }

  /** The waiters the pass now waiting for its watch or a kick served, or -1 while a pass runs. */
  int parkedWith() {
    Parked p = parked;
    return p == null || p.resumed.get() ? -1 : p.waiters;
  }

  private CompletableFuture<Void> watch(Transaction tr) {
    return service.watchesDisabled ? new CompletableFuture<>() : service.schema.watchGeneration(tr, name);
  }

  private record Snapshot0(FencingToken generation, MutexOwner owner) {}

  /** The oldest event anyone local still needs, or null when nobody needs events. */
  private static FencingToken readFrom(List<Waiter> ws, List<Subscriber> ss) {
    FencingToken from = null;
    for (Waiter w : ws) {
      from = from == null || w.checkedUpTo.compareTo(from) < 0 ? w.checkedUpTo : from;
    }
    for (Subscriber s : ss) {
      if (s.after != null) {
        from = from == null || s.after.compareTo(from) < 0 ? s.after : from;
      }
    }
    return from;
  }

  private void dispatch(Snapshot snap, List<Waiter> ws, List<Subscriber> ss) {
    FencingToken last = snap.events.isEmpty() ? null : snap.events.get(snap.events.size() - 1).sequence();
    List<Waiter> granted = new ArrayList<>(1);
    for (Waiter w : ws) {
      if (w.isDone()) {
        continue;
      }
      if (snap.owner != null && snap.owner.owner().equals(w.owner)) {
        granted.add(w);
        continue;
      }
      for (LockEvent e : snap.events) {
        if (e.sequence().isNewerThan(w.checkedUpTo) && e.owner().filter(w.owner::equals).isPresent()) {
          // Granted through the queue and evicted before this process noticed: enqueue again.
          w.complete(new Outcome(Kind.RETRY, null));
          break;
        }
      }
      if (last != null && last.isNewerThan(w.checkedUpTo)) {
        w.checkedUpTo = last;
      }
    }
    for (Subscriber s : ss) {
      if (!s.active) {
        continue;
      }
      if (s.after == null) {
        s.after = snap.generation == null ? BEGINNING : snap.generation;
        s.ready.complete(s);
        continue;
      }
      for (LockEvent e : snap.events) {
        if (e.sequence().isNewerThan(s.after) && s.active) {
          s.after = e.sequence();
          try {
            s.listener.accept(e);
          } catch (RuntimeException ex) {
            LOG.warn("lock event listener of mutex '" + name + "' failed", ex);
          }
        }
      }
    }
    // Last: an acquire's callbacks run on this thread (see MutexAcquisition), after every event is out.
    for (Waiter w : granted) {
      w.complete(new Outcome(Kind.GRANTED, snap.owner));
    }
  }

  private void retryLater() {
    if (service.isClosed()) {
      synchronized (this) {
        running = false;
      }
      return;
    }
    try {
      service.scheduler.schedule(() -> service.executor.execute(this::iterate), 20, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      synchronized (this) {
        running = false;
      }
    }
  }
}
