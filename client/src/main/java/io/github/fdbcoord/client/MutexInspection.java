package io.github.fdbcoord.client;

import io.github.fdbcoord.api.MutexState;

import java.time.Duration;
import java.util.Optional;

/**
 * What {@link CoordinationClient#inspect} reports of a mutex: its state and, when held, for how
 * long and how much of the lease the serving node's reaper believes is left.
 *
 * @param state the owner record and queue
 * @param heldFor how long the current owner has held it; empty when free
 * @param leaseLeft the lease minus the time the serving node's reaper has seen the owner record
 *     unchanged; empty when free
 */
public record MutexInspection(MutexState state, Optional<Duration> heldFor, Optional<Duration> leaseLeft) {}
