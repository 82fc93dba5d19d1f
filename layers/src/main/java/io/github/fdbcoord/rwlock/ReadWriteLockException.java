package io.github.fdbcoord.rwlock;

import io.github.fdbcoord.api.CoordinationException;
import io.github.fdbcoord.api.FailureKind;

import java.util.Objects;

/**
 * A read-write lock operation refused for a reason the caller can act on; {@link #kind()} says
 * which (bad input is an {@link IllegalArgumentException} instead). Each kind is the
 * {@link FailureKind} of the same name.
 */
public class ReadWriteLockException extends CoordinationException {
  /** The kinds of refusal. */
  public enum Kind {
    /** The grant named (release, heartbeat, downgrade, fence) is no longer held, or the owner neither holds nor waits. */
    NOT_HELD(FailureKind.NOT_HELD),
    /** Acquire was not granted within its timeout; the caller left the queue. */
    TIMED_OUT(FailureKind.TIMED_OUT),
    /** The service was closed while the operation waited. */
    CLOSED(FailureKind.CLOSED),
    /** The lock's queue already holds {@link ReadWriteLockOptions#maxQueueLength()} waiters. */
    QUEUE_FULL(FailureKind.QUEUE_FULL);

    private final FailureKind failureKind;

    Kind(FailureKind failureKind) {
      this.failureKind = failureKind;
    }

    /** What this kind means across layers. */
    public FailureKind failureKind() {
      return failureKind;
    }
  }

  private final Kind kind;
  private final String lock;

  public ReadWriteLockException(Kind kind, String lock, String message) {
    super(message);
    this.kind = Objects.requireNonNull(kind, "kind");
    this.lock = lock;
  }

  static ReadWriteLockException closed(String lock) {
    return new ReadWriteLockException(Kind.CLOSED, lock, "the read-write lock service was closed while waiting on lock '" + lock + "'");
  }

  /** The lock's name. */
  public String lock() {
    return lock;
  }

  /** Which refusal this is. */
  public Kind kind() {
    return kind;
  }

  @Override
  public FailureKind failureKind() {
    return kind.failureKind();
  }
}
