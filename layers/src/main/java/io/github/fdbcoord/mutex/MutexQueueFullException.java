package io.github.fdbcoord.mutex;

/** A caller could not join a mutex's queue: it already holds the most waiters allowed. */
public final class MutexQueueFullException extends MutexException {
  private final int maxQueueLength;

  public MutexQueueFullException(String mutex, String caller, int maxQueueLength) {
    super(Kind.QUEUE_FULL, mutex, "the queue of mutex '" + mutex + "' already holds " + maxQueueLength
        + " waiters (maxQueueLength): '" + caller + "' was not queued");
    this.maxQueueLength = maxQueueLength;
  }

  public int maxQueueLength() {
    return maxQueueLength;
  }
}
