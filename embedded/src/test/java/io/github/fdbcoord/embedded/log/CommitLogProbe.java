package io.github.fdbcoord.embedded.log;

/** Test-side access to {@link CommitLog}'s package-private counters, for benchmarks in other packages. */
public final class CommitLogProbe {
  private CommitLogProbe() {}

  public static long syncCount(CommitLog log) {
    return log.syncCount();
  }
}
