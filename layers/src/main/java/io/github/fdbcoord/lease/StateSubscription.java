package io.github.fdbcoord.lease;

/**
 * An observer of a semaphore's or a read-write lock's state ({@code observe} of their services); closing it stops
 * delivery and gives its watches back.
 */
public interface StateSubscription extends AutoCloseable {
  /** The semaphore or lock observed. */
  String name();

  @Override
  void close();
}
