package io.github.fdbcoord.lease;

import com.apple.foundationdb.Transaction;
import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The hand-off hints of one leased service: the waits of this process by lock name, and, once a transaction that
 * granted waiters has committed, a nudge to each of their waits here or else a call to the service's {@link
 * GrantNotifier}. The transaction's versionstamp completes only when that attempt's commit succeeds, so an attempt
 * that conflicted and was retried nudges nobody (its retry does), nor does one whose outcome is unknown: the
 * waiter's watch covers it.
 */
public final class GrantHints {
  private static final Logger LOG = LoggerFactory.getLogger(GrantHints.class);

  /** A wait that a hint can wake: it then reads the lock again at once instead of waiting for its watch. */
  public interface Wait {
    String name();

    String owner();

    void nudge();
  }

  private final Map<String, Set<Wait>> waitsByName = new ConcurrentHashMap<>();
  private final GrantNotifier notifier;

  /** {@code notifier}: where grants to owners waiting elsewhere are told; null: they learn of them by their watch. */
  public GrantHints(GrantNotifier notifier) {
    this.notifier = notifier;
  }

  public void add(Wait w) {
    waitsByName.computeIfAbsent(w.name(), n -> ConcurrentHashMap.newKeySet()).add(w);
  }

  public void remove(Wait w) {
    waitsByName.computeIfPresent(w.name(), (n, set) -> {
      set.remove(w);
      return set.isEmpty() ? null : set;
    });
  }

  /** Nudges the waits of {@code owner} for {@code name} in this process; whether there was one. */
  public boolean nudge(String name, String owner) {
    Set<Wait> waits = waitsByName.get(name);
    boolean found = false;
    if (waits != null) {
      for (Wait w : waits) {
        if (w.owner().equals(owner)) {
          w.nudge();
          found = true;
        }
      }
    }
    return found;
  }

  /** Once {@code tr} has committed, tells each of {@code owners}, granted {@code name} in it, of its grant. */
  public void afterCommit(Transaction tr, String name, List<String> owners) {
    if (owners.isEmpty()) {
      return;
    }
    tr.getVersionstamp().thenAccept(vs -> {
      for (String owner : owners) {
        if (nudge(name, owner) || notifier == null) {
          continue;
        }
        try {
          notifier.granted(name, owner);
        } catch (RuntimeException e) {
          LOG.warn("the grant notifier failed for '" + name + "' (the waiter's watch still tells it)", e);
        }
      }
    });
  }
}
