package io.github.fdbcoord.semaphore;

import com.apple.foundationdb.ReadTransaction;
import io.github.fdbcoord.fdb.FdbErrors;
import io.github.fdbcoord.semaphore.SemaphoreService.Holder;
import io.github.fdbcoord.semaphore.SemaphoreSchema.Waiter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Removes holders and waiters whose beat count stayed unchanged for a lease on this service's clock (never by
 * comparing clocks of different hosts). A removal commits only if the count is still the one observed: it reads the
 * beat (or queue entry) with conflict, so a heartbeat committed meanwhile makes it fail.
 */
final class SemaphoreReaper {
  private final FdbSemaphoreService service;
  /** What was last seen of each holder and waiter, with when it was first seen so. */
  private final Map<String, Seen> seen = new ConcurrentHashMap<>();
  private volatile ScheduledFuture<?> next;
  private volatile boolean stopped;

  private record Seen(long beats, long sinceNanos) {}

  SemaphoreReaper(FdbSemaphoreService service) {
    this.service = service;
  }

  void schedule() {
    if (stopped) {
      return;
    }
    try {
      next = service.scheduler.schedule(() -> scan().whenComplete((v, e) -> schedule()),
          service.options().reaperInterval().toNanos(), TimeUnit.NANOSECONDS);
    } catch (RuntimeException rejected) {
      // Shut down with the service.
    }
  }

  void stop() {
    stopped = true;
    ScheduledFuture<?> f = next;
    if (f != null) {
      f.cancel(false);
    }
  }

  CompletableFuture<Void> scan() {
    Set<String> visited = ConcurrentHashMap.newKeySet();
    return scanFrom(null, visited).whenComplete((v, e) -> {
      if (e == null) {
        seen.keySet().retainAll(visited);
      }
    });
  }

  /** Reaps the semaphores in use after {@code after}, a page at a time, one semaphore after the other. */
  private CompletableFuture<Void> scanFrom(String after, Set<String> visited) {
    return service.transact(tr -> service.schema.readActive(tr.snapshot(), after, FdbSemaphoreService.PAGE)).thenCompose(names -> {
      CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
      for (String name : names) {
        chain = chain.thenCompose(v -> reap(name, visited)).exceptionally(e -> null);
      }
      return names.size() < FdbSemaphoreService.PAGE || stopped ? chain
          : chain.thenCompose(v -> scanFrom(names.get(names.size() - 1), visited));
    });
  }

  private CompletableFuture<Void> reap(String name, Set<String> visited) {
    return FdbErrors.unwrapped(service.db.readAsync(tr -> {
      ReadTransaction snap = tr.snapshot();
      CompletableFuture<List<Holder>> holdersRead = service.schema.readHolders(snap, name);
      CompletableFuture<List<Waiter>> queueRead = service.schema.readQueue(snap, name, ReadTransaction.ROW_LIMIT_UNLIMITED);
      return holdersRead.thenCompose(holders -> {
        List<CompletableFuture<Long>> beats = new ArrayList<>();
        for (Holder h : holders) {
          beats.add(service.schema.readBeat(snap, name, h.owner()));
        }
        return CompletableFuture.allOf(beats.toArray(new CompletableFuture<?>[0])).thenCombine(queueRead, (v, q) -> {
          List<Runnable> expiries = new ArrayList<>();
          long now = System.nanoTime();
          for (int i = 0; i < holders.size(); i++) {
            Holder h = holders.get(i);
            Long b = beats.get(i).join();
            long observed = b == null ? -1 : b;
            if (expired("h", name, h.owner() + "/" + h.token(), observed, now, visited)) {
              expiries.add(() -> expireHolder(name, h, observed));
            }
          }
          for (Waiter w : q) {
            if (expired("w", name, w.owner() + "/" + w.ticket(), w.beats(), now, visited)) {
              expiries.add(() -> expireWaiter(name, w));
            }
          }
          return expiries;
        });
      });
    }, service.executor)).thenAccept(expiries -> expiries.forEach(Runnable::run));
  }

  private boolean expired(String type, String name, String who, long beats, long now, Set<String> visited) {
    String key = type + '\0' + name + '\0' + who;
    visited.add(key);
    Seen before = seen.get(key);
    if (before == null || before.beats() != beats) {
      seen.put(key, new Seen(beats, now));
      return false;
    }
    return now - before.sinceNanos() >= service.options().lease().toNanos();
  }

  private void expireHolder(String name, Holder h, long observed) {
    service.transact(tr -> service.schema.readHolder(tr, name, h.owner()).thenCombine(service.schema.readBeat(tr, name, h.owner()),
        (token, beats) -> h.token().equals(token) && (beats == null ? -1 : beats) == observed)
        .thenCompose(still -> {
          if (!still) {
            return CompletableFuture.completedFuture(null);
          }
          service.schema.removeHolder(tr, name, h.owner());
          return service.handOff(tr, name);
        }));
  }

  private void expireWaiter(String name, Waiter w) {
    service.transact(tr -> service.schema.readWaiter(tr, name, w.ticket()).thenCompose(current -> {
      if (current == null || current.beats() != w.beats()) {
        return CompletableFuture.completedFuture(null);
      }
      service.schema.dequeue(tr, name, w.ticket(), w.owner());
      return service.handOff(tr, name);
    }));
  }
}
