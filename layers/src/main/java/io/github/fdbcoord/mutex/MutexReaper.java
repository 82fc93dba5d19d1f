package io.github.fdbcoord.mutex;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.async.AsyncUtil;
import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;

/**
 * Removes queue entries whose waiter stopped heartbeating (the beat count in the entry unchanged
 * for a lease, on this reaper's clock), so a waiter that went away is never granted the mutex
 * after its lease. Hands a mutex on when its owner record (owner, token, heartbeat count) has not changed for a
 * lease, as measured by this reaper's own monotonic clock from the moment it first saw the record:
 * no clocks of different hosts are ever compared, and a reaper that starts late only delays
 * eviction. The hand-off re-reads the record with conflict and acts only if it is still the one
 * observed, so a heartbeat committed meanwhile cancels it, and of several reapers racing only one
 * hands off (the others conflict, retry and find a changed record).
 */
final class MutexReaper {
  private static final Logger LOG = LoggerFactory.getLogger(MutexReaper.class);
  static final int PAGE = 500;

  private record Observation(byte[] record, long seenAtNanos) {}

  private record WaiterObservation(MutexSchema.Waiter waiter, long seenAtNanos) {}

  /** One held mutex as read by a scan: its owner record's bytes and its queue. */
  private record HeldMutex(String name, byte[] owner, List<MutexSchema.Waiter> waiters) {}

  private final FdbMutexService service;
  private final long leaseNanos;
  private final Duration interval;
  private final Map<String, Observation> observations = new ConcurrentHashMap<>();
  /** Per mutex name and ticket. */
  private final Map<List<Object>, WaiterObservation> waiterObservations = new ConcurrentHashMap<>();
  private final AtomicInteger removedWaiters = new AtomicInteger();
  private final AtomicInteger expired = new AtomicInteger();
  private volatile boolean stopped;
  private volatile ScheduledFuture<?> next;

  MutexReaper(FdbMutexService service, Duration lease, Duration interval) {
    this.service = service;
    this.leaseNanos = lease.toNanos();
    this.interval = interval;
  }

  void start() {
    schedule();
  }

  void stop() {
    stopped = true;
    ScheduledFuture<?> n = next;
    if (n != null) {
      n.cancel(false);
    }
  }

  /** How many silent waiters this reaper removed from queues. */
  int removedWaiterCount() {
    return removedWaiters.get();
  }

  /** How many hand-offs this reaper committed. */
  int expiredCount() {
    return expired.get();
  }

  /**
   * How long the owner record {@code record} of {@code name} may stay unchanged before this reaper
   * hands the mutex on: the lease minus the time it has seen that record, or the whole lease when it
   * has not seen it yet (it starts counting at its next scan).
   */
  Duration leaseLeft(String name, byte[] record) {
    Observation o = observations.get(name);
    if (o == null || !Arrays.equals(o.record, record)) {
      return Duration.ofNanos(leaseNanos);
    }
    return Duration.ofNanos(Math.max(0, leaseNanos - (System.nanoTime() - o.seenAtNanos)));
  }

  private void schedule() {
    if (stopped) {
      return;
    }
    try {
      next = service.scheduler.schedule(
          () -> scanOnce().whenComplete((n, e) -> {
            if (e != null) {
              LOG.debug("mutex reaper scan failed", e);
            }
            schedule();
          }),
          interval.toNanos(), TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      stopped = true;
    }
  }

  /** One pass over every held mutex; completes with how many it handed on. */
  CompletableFuture<Integer> scanOnce() {
    Set<String> seen = new HashSet<>();
    Set<List<Object>> seenWaiters = new HashSet<>();
    AtomicInteger handedOn = new AtomicInteger();
    String[] after = {null};
    return AsyncUtil.whileTrue(() -> scanPage(after[0]).thenCompose(page -> {
      List<CompletableFuture<Boolean>> expiries = new ArrayList<>();
      long now = System.nanoTime();
      for (HeldMutex e : page) {
        seen.add(e.name());
        for (MutexSchema.Waiter w : e.waiters()) {
          List<Object> key = List.of(e.name(), w.ticket());
          seenWaiters.add(key);
          CompletableFuture<Boolean> x = observeWaiter(key, e.name(), w, now);
          if (x != null) {
            expiries.add(x);
          }
        }
        if (e.owner() != null) {
          CompletableFuture<Boolean> x = observe(e.name(), e.owner(), now);
          if (x != null) {
            expiries.add(x.thenApply(done -> {
              if (done) {
                handedOn.incrementAndGet();
              }
              return done;
            }));
          }
        }
      }
      if (!page.isEmpty()) {
        after[0] = page.get(page.size() - 1).name();
      }
      boolean more = page.size() == PAGE && !stopped;
      return CompletableFuture.allOf(expiries.toArray(CompletableFuture[]::new)).thenApply(v -> more);
    }), service.executor).thenApply(v -> {
      observations.keySet().retainAll(seen);
      waiterObservations.keySet().retainAll(seenWaiters);
      return handedOn.get();
    });
  }

  /**
   * Held mutexes after {@code after} with their owner records and queues, read at one snapshot
   * (only a held mutex has waiters: a free one is granted to its queue head at once).
   */
  private CompletableFuture<List<HeldMutex>> scanPage(String after) {
    return service.db.readAsync(tr -> service.schema.readHeld(tr.snapshot(), after, PAGE)
        .thenCompose(names -> {
          List<CompletableFuture<byte[]>> records = new ArrayList<>(names.size());
          List<CompletableFuture<List<MutexSchema.Waiter>>> queues = new ArrayList<>(names.size());
          for (String n : names) {
            records.add(service.schema.readOwnerBytes(tr.snapshot(), n));
            queues.add(service.schema.readWaiters(tr.snapshot(), n,
                ReadTransaction.ROW_LIMIT_UNLIMITED));
          }
          return CompletableFuture.allOf(records.toArray(CompletableFuture[]::new))
              .thenCompose(v -> CompletableFuture.allOf(queues.toArray(CompletableFuture[]::new)))
              .thenApply(v -> {
                List<HeldMutex> out = new ArrayList<>(names.size());
                for (int i = 0; i < names.size(); i++) {
                  out.add(new HeldMutex(names.get(i), records.get(i).join(), queues.get(i).join()));
                }
                return out;
              });
        }), service.executor);
  }

  /** Records a beat, or starts removing the entry (returned) when its beat count stayed the same for a lease. */
  private CompletableFuture<Boolean> observeWaiter(List<Object> key, String name, MutexSchema.Waiter waiter, long now) {
    WaiterObservation o = waiterObservations.get(key);
    if (o == null || !o.waiter().equals(waiter)) {
      waiterObservations.put(key, new WaiterObservation(waiter, now));
      return null;
    }
    if (now - o.seenAtNanos() < leaseNanos) {
      return null;
    }
    return removeWaiter(name, waiter).whenComplete((done, e) -> waiterObservations.remove(key, o))
        .thenApply(done -> false);
  }

  /** Removes the queue entry {@code observed} if it is still exactly that (not beaten, not granted meanwhile). */
  CompletableFuture<Boolean> removeWaiter(String name, MutexSchema.Waiter observed) {
    return service.transact(tr -> service.schema.readWaiter(tr, name, observed.ticket()).thenApply(current -> {
      if (current == null || !current.equals(observed)) {
        return AfterCommit.now(false);
      }
      service.schema.dequeue(tr, name, current);
      return AfterCommit.now(true);
    })).whenComplete((done, e) -> {
      if (Boolean.TRUE.equals(done)) {
        removedWaiters.incrementAndGet();
        LOG.debug("removed silent waiter '" + observed.owner() + "' from the queue of mutex '" + name + "'");
      }
    });
  }

  /** Records a change, or starts a hand-off (returned) when the record stayed the same for a lease. */
  private CompletableFuture<Boolean> observe(String name, byte[] record, long now) {
    Observation o = observations.get(name);
    if (o == null || !Arrays.equals(o.record, record)) {
      observations.put(name, new Observation(record, now));
      return null;
    }
    if (now - o.seenAtNanos < leaseNanos) {
      return null;
    }
    return expire(name, record).whenComplete((done, e) -> observations.remove(name, o));
  }

  /** Ends the grant whose record is {@code observed}, if it is still exactly that; completes with whether it did. */
  CompletableFuture<Boolean> expire(String name, byte[] observed) {
    // The queue head is read beside the owner record, not after it: one round trip fewer before the
    // hand-off's commit; a record found changed has read it for nothing (and commits nothing).
    return service.transact(tr -> {
      CompletableFuture<MutexSchema.Waiter> head = service.readQueueHead(tr, name);
      return service.schema.readOwnerBytes(tr, name).thenCompose(current -> {
        if (current == null || !Arrays.equals(current, observed)) {
          return CompletableFuture.completedFuture(AfterCommit.now(false));
        }
        return service.endGrant(tr, name, service.schema.unpackOwnerValue(current), false, head)
            .thenApply(a -> a.map(event -> true));
      });
    }).whenComplete((done, e) -> {
      if (Boolean.TRUE.equals(done)) {
        expired.incrementAndGet();
      }
    });
  }
}
