package io.github.fdbcoord.mutex;

/**
 * A hand-over ({@link MutexService#releaseTo}) named a successor that does not wait in the mutex's queue: it never
 * queued, left, was removed by the reaper, or was already granted the mutex. Nothing changed: the holder keeps its grant.
 */
public final class NotQueuedException extends MutexException {
  private final String holder;
  private final String successor;

  public NotQueuedException(String mutex, String holder, String successor) {
    super(Kind.NOT_QUEUED, mutex, "'" + successor + "' does not wait in the queue of mutex '" + mutex + "', so '"
        + holder + "' cannot hand it over to '" + successor + "'; '" + holder + "' keeps it");
    this.holder = holder;
    this.successor = successor;
  }

  /** Who holds the mutex and asked to hand it over (and still holds it). */
  public String holder() {
    return holder;
  }

  /** The successor named, which does not wait. */
  public String successor() {
    return successor;
  }
}
