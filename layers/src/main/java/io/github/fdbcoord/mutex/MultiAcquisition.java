package io.github.fdbcoord.mutex;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.fdb.FdbErrors;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;

import static io.github.fdbcoord.mutex.MutexSchema.checkName;

/**
 * The one wait for several mutexes, all or none, behind both {@link MutexService#acquireAll} (which keeps the grants
 * heartbeating in a {@link MultiGrant}) and {@link MutexService#awaitAllGrants} (which hands them over to a holder
 * that heartbeats them itself). The owner joins every queue in one transaction, then waits for each grant as
 * {@link MutexAcquisition} does; each grant heartbeats (a {@link HeartbeatingHandle}) while the others are awaited.
 * The first failure (a timeout, a refusal, a grant found lost, a cancellation) ends the whole wait: every other wait
 * is cancelled (leaving its queue, releasing a grant that raced) and every grant made is released.
 */
final class MultiAcquisition implements MultiMutexWait {
  /** One mutex's wait within the set. */
  private record Part(MutexAcquisition acquisition, CompletableFuture<HeartbeatingHandle> handle) {}

  private final FdbMutexService service;
  private final List<String> names;
  private final String owner;
  private final Duration timeout;
  private final boolean handOver;
  /** Decides the outcome: whoever completes it first (every grant, a failure, a cancellation). */
  private final CompletableFuture<Map<String, MutexHandle>> held = new CompletableFuture<>();
  /** {@link #held}, failing only once everything was given back: a caller told of a failure finds nothing left. */
  private final CompletableFuture<Map<String, MutexHandle>> outcome;
  private final CompletableFuture<Map<String, FencingToken>> granted;
  /** Completes once the wait has finished: every grant held, or every queue left and every grant given back. */
  private final CompletableFuture<Void> settled = new CompletableFuture<>();
  /** Set once the queues are joined; until then a failure has nothing to give back but what the enqueue made. */
  private volatile List<Part> parts;
  /** Whether {@link #giveBack} ran; guarded by {@code this}. */
  private boolean givingBack;

  private MultiAcquisition(FdbMutexService service, List<String> names, String owner, Duration timeout,
      boolean handOver) {
    this.service = service;
    this.names = names;
    this.owner = owner;
    this.timeout = timeout;
    this.handOver = handOver;
    this.outcome = held.exceptionallyCompose(e -> settled.thenCompose(v -> CompletableFuture.failedFuture(e)));
    this.granted = outcome.thenApply(handles -> {
      Map<String, FencingToken> tokens = new LinkedHashMap<>();
      handles.forEach((name, h) -> tokens.put(name, h.token()));
      return Collections.unmodifiableMap(tokens);
    });
  }

  /**
   * Starts the wait of {@code owner} for every mutex of {@code names}; {@code handOver}: whether the grants stop
   * heartbeating once all are held (a remote holder heartbeats them), or keep heartbeating for a {@link MultiGrant}.
   */
  static MultiAcquisition start(FdbMutexService service, Collection<String> names, String owner, Duration timeout,
      boolean handOver) {
    MultiAcquisition wait = new MultiAcquisition(service, checkedNames(names, owner, timeout), owner, timeout, handOver);
    wait.names.forEach(service::checkOpen);
    wait.enqueue();
    return wait;
  }

  /** {@code names} as one set, checked and sorted, or an {@link IllegalArgumentException} naming what is wrong. */
  private static List<String> checkedNames(Collection<String> names, String owner, Duration timeout) {
    checkName(owner, "owner");
    if (names == null || names.isEmpty()) {
      throw new IllegalArgumentException("acquireAll needs at least one mutex name, got " + names);
    }
    if (timeout != null && timeout.isNegative()) {
      throw new IllegalArgumentException("timeout must not be negative, got " + timeout);
    }
    // The names' order is the queues' order only because every entry is made in one commit; sorted, a retry after
    // commit_unknown_result finds the same entries in the same order.
    List<String> ordered = List.copyOf(new TreeSet<>(names.stream().map(n -> checkName(n, "mutex name")).toList()));
    if (ordered.size() > MutexService.MAX_NAMES_PER_CALL) {
      throw new IllegalArgumentException("acquireAll takes at most " + MutexService.MAX_NAMES_PER_CALL
          + " mutexes, got " + ordered.size());
    }
    return ordered;
  }

  private void enqueue() {
    long deadline = timeout == null ? 0 : System.nanoTime() + timeout.toNanos();
    CompletableFuture<Void> queued = service.transact(tr -> {
      List<CompletableFuture<AfterCommit<AcquireResult>>> each = new ArrayList<>();
      for (String name : names) {
        each.add(service.tryAcquireIn(tr, name, owner));
      }
      return CompletableFuture.allOf(each.toArray(new CompletableFuture<?>[0])).thenApply(v -> AfterCommit.now(null));
    });
    queued.whenComplete((v, e) -> {
      if (e != null) {
        // The one transaction did not commit: no queue was joined, no mutex taken.
        held.completeExceptionally(FdbErrors.unwrap(e));
        settled.complete(null);
        return;
      }
      // Each wait finds the owner's grant or queue entry made above, and waits there. A cancellation that came
      // before this point is seen by the waits' giving back (below), as is one that comes later.
      Duration left = timeout == null ? null : Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
      List<Part> started = new ArrayList<>();
      for (String name : names) {
        MutexAcquisition wait = new MutexAcquisition(service, name, owner, left).start();
        started.add(new Part(wait, wait.grant().thenApply(g -> {
          HeartbeatingHandle h = new HeartbeatingHandle(service, name, owner, g.token(), g.ticket());
          h.startHeartbeats();
          return h;
        })));
      }
      parts = started;
      combine(started);
    });
  }

  private void combine(List<Part> started) {
    for (Part part : started) {
      part.handle().whenComplete((h, e) -> {
        if (e != null) {
          fail(FdbErrors.unwrap(e));
        } else {
          // A grant lost while the others are awaited (its lease ran out, it was removed) is no grant of the set.
          h.lost().thenAccept(this::fail);
        }
      });
    }
    CompletableFuture.allOf(started.stream().map(Part::handle).toArray(CompletableFuture<?>[]::new)).thenRun(() -> {
      Map<String, MutexHandle> handles = new LinkedHashMap<>();
      for (Part part : started) {
        handles.put(part.acquisition().name(), part.handle().join());
      }
      if (handOver) {
        // The holder heartbeats from here on; these handles are dropped.
        handles.values().forEach(h -> ((HeartbeatingHandle) h).markReleased());
      }
      if (held.complete(Collections.unmodifiableMap(handles))) {
        settled.complete(null);
      }
      // Otherwise a failure or cancellation won the race, and its giving back covers these grants too.
    });
    if (held.isCompletedExceptionally()) {
      giveBack(); // cancelled while the queues were being joined
    }
  }

  private void fail(Throwable cause) {
    if (held.completeExceptionally(cause)) {
      giveBack();
    }
  }

  /**
   * Cancels every wait (each leaves its queue, or releases the grant that raced it) and releases every grant made;
   * completes {@link #settled} once all are done. Runs once the set has failed, with or without the parts started.
   */
  private void giveBack() {
    List<Part> started = parts;
    if (started == null) {
      return; // the enqueue's completion starts the parts, sees the failure and gives back then
    }
    synchronized (this) {
      if (givingBack) {
        return;
      }
      givingBack = true;
    }
    List<CompletableFuture<?>> each = new ArrayList<>();
    for (Part part : started) {
      each.add(part.acquisition().cancel().thenCompose(ended -> ended ? CompletableFuture.completedFuture(null)
          : part.handle().handle((h, e) -> h).thenCompose(h -> h == null ? CompletableFuture.completedFuture(null)
              : h.release().handle((r, e) -> null))));
    }
    CompletableFuture.allOf(each.toArray(new CompletableFuture<?>[0])).whenComplete((v, e) -> settled.complete(null));
  }

  /**
   * Every grant, as heartbeating handles (stopped already when handed over), once all are held; a failure comes
   * once every queue was left and every grant made released.
   */
  CompletableFuture<Map<String, MutexHandle>> held() {
    return outcome;
  }

  @Override
  public List<String> names() {
    return names;
  }

  @Override
  public String owner() {
    return owner;
  }

  @Override
  public CompletableFuture<Map<String, FencingToken>> granted() {
    return granted;
  }

  @Override
  public CompletableFuture<Boolean> cancel() {
    boolean ended = held.completeExceptionally(new CancellationException(
        "the wait of '" + owner + "' for mutexes " + names + " was cancelled"));
    if (ended) {
      giveBack();
    }
    return settled.thenApply(x -> ended);
  }
}
