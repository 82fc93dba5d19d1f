package io.github.fdbcoord.mutex;

/**
 * A mutex operation refused for a reason the caller can act on. {@link #kind()} says which, so an
 * API layer can map it to a status (bad input is an {@link IllegalArgumentException} instead).
 */
public abstract class MutexException extends RuntimeException {
  /** The kinds of refusal. */
  public enum Kind {
    /** Release or heartbeat of a mutex that has no owner. */
    NOT_HELD,
    /** Release or heartbeat by someone who is not the current owner (or of an older grant). */
    NOT_OWNER,
    /** Acquire did not get the mutex within its timeout; the caller left the queue. */
    TIMED_OUT,
    /** The service was closed while the operation waited. */
    CLOSED,
    /** The mutex's queue already holds {@link MutexOptions#maxQueueLength()} waiters. */
    QUEUE_FULL
  }

  private final String mutex;

  protected MutexException(String mutex, String message) {
    super(message);
    this.mutex = mutex;
  }

  /** The mutex's name. */
  public String mutex() {
    return mutex;
  }

  public abstract Kind kind();
}
