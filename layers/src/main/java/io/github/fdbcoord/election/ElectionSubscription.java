package io.github.fdbcoord.election;

/** An observer registered by {@link LeaderElection#observe}; closing it stops delivery. */
public interface ElectionSubscription extends AutoCloseable {
  String election();

  @Override
  void close();
}
