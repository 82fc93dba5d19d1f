package io.github.fdbcoord.embedded.engine;

import java.util.List;

/** Outcome of a commit, delivered once the commit is durable (or failed). */
public final class CommitResult {
  /** The commit version, or -1 for a read-only commit. */
  public final long version;
  final List<Watches.Watch> fired;

  CommitResult(long version, List<Watches.Watch> fired) {
    this.version = version;
    this.fired = fired;
  }
}
