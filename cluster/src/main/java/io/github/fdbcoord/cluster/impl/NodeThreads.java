package io.github.fdbcoord.cluster.impl;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The private threads of one node: a timer (heartbeats, reaper, retries, and the heartbeats of its
 * locks, so that whatever stalls the node stalls its locks too), and one thread each for membership
 * and registration events, so listeners are called in log order. Internal to the cluster manager.
 */
public final class NodeThreads {
  private static final AtomicInteger INSTANCES = new AtomicInteger();
  private static final Duration RETRY_DELAY = Duration.ofMillis(100);

  private final ScheduledExecutorService timer;
  private final ExecutorService membershipEvents;
  private final ExecutorService registrationEvents;
  private final List<ScheduledFuture<?>> periodic = new ArrayList<>();

  /** Starts the threads of a new node, named after a per-JVM instance number. */
  public NodeThreads() {
    int instance = INSTANCES.incrementAndGet();
    ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, daemon("fdb-cluster-" + instance + "-timer"));
    // A lock acquire's timeout is cancelled when it is granted, thousands of times a second under local
    // hand-offs: cancelled tasks must leave the queue then, not at their deadline.
    t.setRemoveOnCancelPolicy(true);
    timer = t;
    membershipEvents = Executors.newSingleThreadExecutor(daemon("fdb-cluster-" + instance + "-members"));
    registrationEvents = Executors.newSingleThreadExecutor(daemon("fdb-cluster-" + instance + "-registrations"));
  }

  /** The node's timer. */
  public ScheduledExecutorService timer() {
    return timer;
  }

  ExecutorService membershipEvents() {
    return membershipEvents;
  }

  ExecutorService registrationEvents() {
    return registrationEvents;
  }

  /** Runs {@code task} every {@code interval} on the timer until {@link #cancelPeriodic()}. */
  void every(Duration interval, Runnable task) {
    long ms = interval.toMillis();
    synchronized (periodic) {
      periodic.add(timer.scheduleWithFixedDelay(task, ms, ms, TimeUnit.MILLISECONDS));
    }
  }

  /** Stops the heartbeats and the reaper. */
  public void cancelPeriodic() {
    synchronized (periodic) {
      periodic.forEach(t -> t.cancel(false));
      periodic.clear();
    }
  }

  /** Runs {@code task} on {@code events} after a short delay, unless the threads were stopped meanwhile. */
  void retryLater(ExecutorService events, Runnable task) {
    try {
      timer.schedule(() -> events.execute(task), RETRY_DELAY.toMillis(), TimeUnit.MILLISECONDS);
    } catch (RuntimeException e) {
      // shut down meanwhile: nothing to retry
    }
  }

  /** Blocks the timer and both event threads for {@code pause} (all at once), as a stopped process. */
  public void pause(Duration pause) {
    CountDownLatch started = new CountDownLatch(3);
    long until = System.nanoTime() + pause.toNanos();
    Runnable block = () -> {
      started.countDown();
      long left;
      while ((left = until - System.nanoTime()) > 0) {
        try {
          TimeUnit.NANOSECONDS.sleep(left);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    };
    timer.execute(block);
    membershipEvents.execute(block);
    registrationEvents.execute(block);
  }

  /** Stops the timer at once and lets the event threads finish what they were given. */
  public void shutdown() {
    timer.shutdownNow();
    membershipEvents.shutdown();
    registrationEvents.shutdown();
  }

  /** Stops every thread at once, as a process that died would. */
  public void shutdownNow() {
    cancelPeriodic();
    timer.shutdownNow();
    membershipEvents.shutdownNow();
    registrationEvents.shutdownNow();
  }

  private static ThreadFactory daemon(String name) {
    return r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      return t;
    };
  }
}
