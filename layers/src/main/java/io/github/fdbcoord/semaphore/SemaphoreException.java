package io.github.fdbcoord.semaphore;

import io.github.fdbcoord.api.CoordinationException;
import io.github.fdbcoord.api.FailureKind;

import java.util.Objects;

/**
 * A semaphore operation refused for a reason the caller can act on; {@link #kind()} says which (bad input is an
 * {@link IllegalArgumentException} instead). Each kind maps to a {@link FailureKind}.
 */
public class SemaphoreException extends CoordinationException {
  private static final long serialVersionUID = 1L;

  /** The kinds of refusal. */
  public enum Kind {
    /** Release, heartbeat or fence of a grant that is no longer current (released, or taken over after its lease). */
    NOT_HELD(FailureKind.NOT_HELD),
    /** Acquire did not get a permit within its timeout; the caller left the queue. */
    TIMED_OUT(FailureKind.TIMED_OUT),
    /** The service was closed while the operation waited. */
    CLOSED(FailureKind.CLOSED),
    /** The semaphore is in use with another number of permits than the one asked for. */
    PERMITS_MISMATCH(FailureKind.CONFLICT),
    /** The semaphore's queue already holds {@link SemaphoreOptions#maxQueueLength()} waiters. */
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
  private final String semaphore;

  public SemaphoreException(Kind kind, String semaphore, String message) {
    super(message);
    this.kind = Objects.requireNonNull(kind, "kind");
    this.semaphore = semaphore;
  }

  static SemaphoreException notHeld(String semaphore, String owner) {
    return new SemaphoreException(Kind.NOT_HELD, semaphore,
        "'" + owner + "' does not hold that grant of semaphore '" + semaphore + "' (released, or taken over after its lease)");
  }

  static SemaphoreException closed(String semaphore) {
    return new SemaphoreException(Kind.CLOSED, semaphore,
        "the semaphore service was closed while waiting on semaphore '" + semaphore + "'");
  }

  /** The semaphore's name. */
  public String semaphore() {
    return semaphore;
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
