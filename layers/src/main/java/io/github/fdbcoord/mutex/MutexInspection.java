package io.github.fdbcoord.mutex;

import io.github.fdbcoord.api.MutexState;
import java.time.Duration;
import java.util.Optional;

/**
 * A mutex as an operator looks at it: its {@link MutexState} and, while it is held, how long the
 * current grant has lasted and how much of its lease this service's reaper still gives it.
 *
 * @param heldFor the grant's age: the store's current version minus the version of the granting
 *     commit (the fencing token), at FoundationDB's rate of about 1,000,000 versions per second;
 *     empty when the mutex is free
 * @param leaseLeft the lease minus the time this service's reaper has seen the owner record
 *     unchanged (a full lease when it has not seen this record yet: its count starts when it does);
 *     empty when the mutex is free or this service runs no reaper
 */
public record MutexInspection(MutexState state, Optional<Duration> heldFor, Optional<Duration> leaseLeft) {}
