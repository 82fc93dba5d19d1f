package io.github.fdbcoord.cluster.impl;

import io.github.fdbcoord.fdb.FdbErrors;
import com.apple.foundationdb.Transaction;
import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Follows one of the cluster's change logs (membership or registrations): read what follows the
 * cursor with a watch on the log's generation in the same transaction (so no change falls between
 * the read and the watch), apply it on the log's event thread, then read again at once after a
 * full page, or when the watch fires.
 */
final class LogFollower<T> {
  private static final Logger log = LoggerFactory.getLogger(LogFollower.class);
  private static final int FULL_PAGE = 1000;

  /** One read of the log: the changes after the cursor and the watch set in the same transaction. */
  record Poll<T>(List<T> changes, CompletableFuture<Void> watch) {}

  private final String logName;
  private final String nodeId;
  private final NodeState state;
  private final ClusterStore store;
  private final NodeThreads threads;
  private final ExecutorService events;
  /** Makes the read of one poll, from the cursor as it is when the poll starts. */
  private final Supplier<Function<Transaction, CompletableFuture<Poll<T>>>> read;
  private final Consumer<List<T>> apply;

  LogFollower(String logName, String nodeId, NodeState state, ClusterStore store, NodeThreads threads, ExecutorService events,
      Supplier<Function<Transaction, CompletableFuture<Poll<T>>>> read, Consumer<List<T>> apply) {
    this.logName = logName;
    this.nodeId = nodeId;
    this.state = state;
    this.store = store;
    this.threads = threads;
    this.events = events;
    this.read = read;
    this.apply = apply;
  }

  /** Starts following on the event thread. */
  void start() {
    events.execute(this::poll);
  }

  private void poll() {
    if (state.stopped()) {
      return;
    }
    store.runUnbounded(read.get()).whenCompleteAsync((poll, err) -> {
      if (state.stopped()) {
        return;
      }
      if (err != null) {
        log.warn("node " + nodeId + ": reading the " + logName + " log failed, retrying: " + FdbErrors.unwrap(err));
        retryLater();
        return;
      }
      apply.accept(poll.changes());
      if (poll.changes().size() >= FULL_PAGE) {
        poll();
      } else {
        poll.watch().whenComplete((v, e) -> {
          if (e != null) {
            retryLater();
          } else {
            events.execute(this::poll);
          }
        });
      }
    }, events);
  }

  private void retryLater() {
    if (!state.stopped()) {
      threads.retryLater(events, this::poll);
    }
  }
}
