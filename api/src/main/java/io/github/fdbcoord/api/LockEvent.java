package io.github.fdbcoord.api;

import java.util.Objects;
import java.util.Optional;

/**
 * One ownership transition of a mutex, as recorded in the mutex's event log by the transaction
 * that made it. {@code sequence} is the token of that commit: events of a mutex are totally ordered
 * by it, and when the transition granted the lock it equals the new owner's fencing token.
 */
public record LockEvent(
    Type type,
    String mutex,
    FencingToken sequence,
    Optional<String> previousOwner,
    Optional<FencingToken> previousToken,
    Optional<String> owner) {

  /** What happened. */
  public enum Type {
    /** A free mutex was taken: {@code owner} holds it, no previous owner. */
    ACQUIRED,
    /** The owner released and nobody waited: the mutex is free. */
    RELEASED,
    /** The owner released and the head of the queue became {@code owner}. */
    HANDED_OFF,
    /**
     * The reaper evicted {@code previousOwner}, whose heartbeat did not change for a lease; the
     * head of the queue became {@code owner}, or the mutex is free when nobody waited.
     */
    EXPIRED
  }

  public LockEvent {
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(mutex, "mutex");
    Objects.requireNonNull(sequence, "sequence");
    Objects.requireNonNull(previousOwner, "previousOwner");
    Objects.requireNonNull(previousToken, "previousToken");
    Objects.requireNonNull(owner, "owner");
  }

  /** The new owner's fencing token, when this transition granted the lock. */
  public Optional<FencingToken> token() {
    return owner.isPresent() ? Optional.of(sequence) : Optional.empty();
  }
}
