package io.github.fdbcoord.api;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * A mutex as an operator looks at it: its {@link MutexState} and, while it is held, how long the
 * current grant has lasted and how much of its lease the serving node's reaper still gives it.
 *
 * @param state the owner record and queue
 * @param heldFor the grant's age: the store's current version minus the version of the granting
 *     commit (the fencing token), at FoundationDB's rate of about 1,000,000 versions per second;
 *     empty when the mutex is free
 * @param leaseLeft the lease minus the time the serving node's reaper has seen the owner record
 *     unchanged (a full lease when it has not seen this record yet: its count starts when it does);
 *     empty when the mutex is free or that node runs no reaper
 */
public record MutexInspection(MutexState state, Optional<Duration> heldFor, Optional<Duration> leaseLeft) {
  public MutexInspection {
    Objects.requireNonNull(state, "state");
    Objects.requireNonNull(heldFor, "heldFor");
    Objects.requireNonNull(leaseLeft, "leaseLeft");
  }
}
