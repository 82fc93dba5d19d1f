package io.github.fdbcoord.mutex;

/** A listener registration of {@link MutexService#subscribe}; closing it stops delivery. */
public interface MutexSubscription extends AutoCloseable {
  String mutex();

  @Override
  void close();
}
