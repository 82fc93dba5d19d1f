package io.github.fdbcoord.cluster.impl;

import io.github.fdbcoord.fdb.FdbErrors;
import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;

import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * Watches this node's own suspicion key and refutes a suspicion as soon as it appears, on the
 * membership thread: a live node answers within a store round trip, a crashed one never does, and
 * a paused one only when it resumes (its threads are what the pause stops). Internal.
 */
final class SuspicionWatch {
  private static final Logger log = LoggerFactory.getLogger(SuspicionWatch.class);

  private record Poll(String suspecter, CompletableFuture<Void> watch) {}

  private final String nodeId;
  private final NodeState state;
  private final ClusterStore store;
  private final NodeThreads threads;
  private final Supplier<CompletableFuture<Boolean>> refute;

  SuspicionWatch(String nodeId, NodeState state, ClusterStore store, NodeThreads threads,
      Supplier<CompletableFuture<Boolean>> refute) {
    this.nodeId = nodeId;
    this.state = state;
    this.store = store;
    this.threads = threads;
    this.refute = refute;
  }

  void start() {
    threads.membershipEvents().execute(this::poll);
  }

  private void poll() {
    if (state.stopped()) {
      return;
    }
    ClusterSchema schema = store.schema();
    // The read and the watch in one transaction: a suspicion written after the read fires the watch.
    store.runUnbounded(tr -> {
      CompletableFuture<Void> watch = schema.watchSuspicion(tr, nodeId);
      return schema.readSuspicion(tr, nodeId).thenApply(s -> new Poll(s, watch));
    }).whenCompleteAsync((poll, err) -> {
      if (state.stopped()) {
        return;
      }
      if (err != null) {
        log.warn("node " + nodeId + ": watching for suspicions failed, retrying: " + FdbErrors.unwrap(err));
        threads.retryLater(threads.membershipEvents(), this::poll);
      } else if (poll.suspecter() != null && state.isActive()) {
        poll.watch().cancel(false);
        log.info("node " + nodeId + " is suspected by " + poll.suspecter() + ": refuting");
        refute.get().whenComplete((v, e) -> next());
      } else {
        poll.watch().whenComplete((v, e) -> {
          if (e != null) {
            threads.retryLater(threads.membershipEvents(), this::poll);
          } else {
            next();
          }
        });
      }
    }, threads.membershipEvents());
  }

  private void next() {
    if (state.stopped()) {
      return;
    }
    try {
      threads.membershipEvents().execute(this::poll);
    } catch (RuntimeException e) {
      // the node's threads stopped (crash or leave): no more watching
    }
  }
}
