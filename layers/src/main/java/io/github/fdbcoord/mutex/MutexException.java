package io.github.fdbcoord.mutex;

import io.github.fdbcoord.api.CoordinationException;
import io.github.fdbcoord.api.FailureKind;

import java.util.Objects;

/**
 * A mutex operation refused for a reason the caller can act on. {@link #kind()} says which, so an
 * API layer can map it to a status (bad input is an {@link IllegalArgumentException} instead). The
 * same style as the other layers' {@code InternerException}, {@code AllocatorException} and
 * {@code DirectoryServiceException}; the subclasses exist only where a refusal carries data of its
 * own ({@link NotOwnerException}, {@link MutexNotHeldException}, {@link MutexTimeoutException},
 * {@link MutexQueueFullException}, {@link NotQueuedException}). Each kind is the {@link FailureKind} of the same name.
 */
public class MutexException extends CoordinationException {
  /** The kinds of refusal. */
  public enum Kind {
    /** Release or heartbeat of a mutex that has no owner. */
    NOT_HELD(FailureKind.NOT_HELD),
    /** Release or heartbeat by someone who is not the current owner (or of an older grant). */
    NOT_OWNER(FailureKind.NOT_OWNER),
    /** Acquire did not get the mutex within its timeout; the caller left the queue. */
    TIMED_OUT(FailureKind.TIMED_OUT),
    /** The service was closed while the operation waited. */
    CLOSED(FailureKind.CLOSED),
    /** The mutex's queue already holds {@link MutexOptions#maxQueueLength()} waiters. */
    QUEUE_FULL(FailureKind.QUEUE_FULL),
    /** A hand-over ({@link MutexService#releaseTo}) named a successor that does not wait in the queue. */
    NOT_QUEUED(FailureKind.NOT_QUEUED);

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
  private final String mutex;

  public MutexException(Kind kind, String mutex, String message) {
    super(message);
    this.kind = Objects.requireNonNull(kind, "kind");
    this.mutex = mutex;
  }

  /** The refusal of an operation on {@code mutex} because the service was closed while it waited. */
  static MutexException closed(String mutex) {
    return new MutexException(Kind.CLOSED, mutex, "the mutex service was closed while waiting on mutex '" + mutex + "'");
  }

  /** The mutex's name. */
  public String mutex() {
    return mutex;
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
