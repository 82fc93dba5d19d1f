package io.github.fdbcoord.rwlock;

import io.github.fdbcoord.fdb.LayerDefaults;
import io.github.fdbcoord.fdb.OptionChecks;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;

/**
 * How a {@link ReadWriteLockService} runs. Immutable; build with {@link #builder()}.
 *
 * <p>Defaults: directory {@code ["fdbcoord", "rwlock"]}, lease 10 s, heartbeat every 2 s, reaper
 * check every 1 s, reaper on, at most 1000 waiters per queue, the database's executor, a private
 * one-thread scheduler.
 *
 * <p>Leases are wall-clock deadlines written by the holder's host and compared by every reaper's
 * host: clocks must agree to well within the lease.
 */
public final class ReadWriteLockOptions {
  /** Default directory: {@code [LayerDefaults.ROOT_DIRECTORY, "rwlock"]}. */
  public static final List<String> DEFAULT_DIRECTORY = LayerDefaults.directory("rwlock");

  private final List<String> directory;
  private final Duration lease;
  private final Duration heartbeatInterval;
  private final Duration reaperInterval;
  private final boolean reaperEnabled;
  private final int maxQueueLength;
  private final Executor executor;
  private final ScheduledExecutorService scheduler;

  private ReadWriteLockOptions(Builder b) {
    this.directory = b.directory;
    this.lease = b.lease;
    this.heartbeatInterval = b.heartbeatInterval;
    this.reaperInterval = b.reaperInterval;
    this.reaperEnabled = b.reaperEnabled;
    this.maxQueueLength = b.maxQueueLength;
    this.executor = b.executor;
    this.scheduler = b.scheduler;
  }

  public static Builder builder() {
    return new Builder();
  }

  public static ReadWriteLockOptions defaults() {
    return builder().build();
  }

  /** Path of the directory holding every lock of the service. */
  public List<String> directory() {
    return directory;
  }

  /** How long a grant or a queue entry lives after its last heartbeat. */
  public Duration lease() {
    return lease;
  }

  /** How often handles heartbeat their grant and waiting acquires their queue entry. */
  public Duration heartbeatInterval() {
    return heartbeatInterval;
  }

  /** How often the reaper looks for expired holders and waiters. */
  public Duration reaperInterval() {
    return reaperInterval;
  }

  /** Whether this service runs a reaper (at least one service over the directory should). */
  public boolean reaperEnabled() {
    return reaperEnabled;
  }

  /** Most waiters one lock's queue holds; an acquire beyond it fails with QUEUE_FULL. */
  public int maxQueueLength() {
    return maxQueueLength;
  }

  /** Executor of the futures' completions; null: the database's. */
  public Executor executor() {
    return executor;
  }

  /** Scheduler of heartbeats, timeouts and the reaper; null: a private one-thread scheduler. */
  public ScheduledExecutorService scheduler() {
    return scheduler;
  }

  public static final class Builder {
    private List<String> directory = DEFAULT_DIRECTORY;
    private Duration lease = Duration.ofSeconds(10);
    private Duration heartbeatInterval = Duration.ofSeconds(2);
    private Duration reaperInterval = Duration.ofSeconds(1);
    private boolean reaperEnabled = true;
    private int maxQueueLength = 1000;
    private Executor executor;
    private ScheduledExecutorService scheduler;

    private Builder() {}

    public Builder directory(List<String> path) {
      this.directory = OptionChecks.directoryPath(path, false, "the root directory cannot hold read-write locks", "directory");
      return this;
    }

    public Builder lease(Duration d) {
      this.lease = OptionChecks.positive(d, "lease");
      return this;
    }

    public Builder heartbeatInterval(Duration d) {
      this.heartbeatInterval = OptionChecks.positive(d, "heartbeatInterval");
      return this;
    }

    public Builder reaperInterval(Duration d) {
      this.reaperInterval = OptionChecks.positive(d, "reaperInterval");
      return this;
    }

    public Builder reaperEnabled(boolean enabled) {
      this.reaperEnabled = enabled;
      return this;
    }

    public Builder maxQueueLength(int n) {
      this.maxQueueLength = OptionChecks.atLeast(n, 1, "maxQueueLength");
      return this;
    }

    public Builder executor(Executor executor) {
      this.executor = executor;
      return this;
    }

    public Builder scheduler(ScheduledExecutorService scheduler) {
      this.scheduler = scheduler;
      return this;
    }

    public ReadWriteLockOptions build() {
      if (heartbeatInterval.compareTo(lease) >= 0) {
        throw new IllegalArgumentException("heartbeatInterval (" + heartbeatInterval
            + ") must be shorter than lease (" + lease + "), or every holder would expire");
      }
      return new ReadWriteLockOptions(this);
    }
  }
}
