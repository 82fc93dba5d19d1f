package io.github.fdbcoord.mutex;

import com.apple.foundationdb.Transaction;
import io.github.fdbcoord.api.FencingToken;
import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;

/**
 * Calls the service's {@link HandOffNotifier} once a transaction that handed a mutex to a waiter
 * has committed. The transaction's versionstamp completes only when that attempt's commit succeeds,
 * so an attempt that conflicted and was retried tells nobody (its retry tells the owner it chose),
 * nor does one whose outcome is unknown: the waiter's watch covers it.
 */
final class HandOffHints {
  private static final Logger LOG = LoggerFactory.getLogger(HandOffHints.class);

  private final HandOffNotifier notifier;

  HandOffHints(HandOffNotifier notifier) {
    this.notifier = notifier;
  }

  void afterCommit(Transaction tr, String name, String owner) {
    if (notifier == null) {
      return;
    }
    tr.getVersionstamp().thenAccept(vs -> {
      try {
        notifier.handedOff(name, owner, FencingToken.of(vs));
      } catch (RuntimeException e) {
        LOG.warn("the hand-off notifier failed for mutex '" + name + "' (the waiter's watch still tells it)", e);
      }
    });
  }
}
