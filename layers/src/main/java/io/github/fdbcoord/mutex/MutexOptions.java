package io.github.fdbcoord.mutex;

import io.github.fdbcoord.fdb.LayerDefaults;
import io.github.fdbcoord.fdb.OptionChecks;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;

/**
 * How a {@link MutexService} runs. Immutable; build with {@link #builder()}.
 *
 * <p>Defaults: directory {@code ["fdbcoord", "mutex"]} (where the
 * coordination service and the cluster manager keep theirs), lease 10 s, heartbeat every 2 s, reaper
 * check every 1 s, reaper on, event log kept 60 s, at most 1000 waiters per queue, no host id, the database's executor, a private
 * one-thread scheduler, no hand-off notifier.
 *
 * <p>An owner whose heartbeat stops is evicted between {@code lease} and
 * {@code lease + 2 * reaperInterval} after its last heartbeat, as seen on the reaper's clock.
 */
public final class MutexOptions {
  /** Default directory: {@code [LayerDefaults.ROOT_DIRECTORY, "mutex"]}. */
  public static final List<String> DEFAULT_DIRECTORY = LayerDefaults.directory("mutex");

  private final List<String> directory;
  private final Duration lease;
  private final Duration heartbeatInterval;
  private final Duration reaperInterval;
  private final boolean reaperEnabled;
  private final Duration eventRetention;
  private final int maxQueueLength;
  private final String hostId;
  private final Executor executor;
  private final ScheduledExecutorService scheduler;
  private final HandOffNotifier handOffNotifier;

  private MutexOptions(Builder b) {
    this.directory = b.directory;
    this.lease = b.lease;
    this.heartbeatInterval = b.heartbeatInterval;
    this.reaperInterval = b.reaperInterval;
    this.reaperEnabled = b.reaperEnabled;
    this.eventRetention = b.eventRetention;
    this.maxQueueLength = b.maxQueueLength;
    this.hostId = b.hostId;
    this.executor = b.executor;
    this.scheduler = b.scheduler;
    this.handOffNotifier = b.handOffNotifier;
  }

  public static Builder builder() {
    return new Builder();
  }

  public static MutexOptions defaults() {
    return builder().build();
  }

  /** A builder holding these options, to change some of them. */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.directory = directory;
    b.lease = lease;
    b.heartbeatInterval = heartbeatInterval;
    b.reaperInterval = reaperInterval;
    b.reaperEnabled = reaperEnabled;
    b.eventRetention = eventRetention;
    b.maxQueueLength = maxQueueLength;
    b.hostId = hostId;
    b.executor = executor;
    b.scheduler = scheduler;
    b.handOffNotifier = handOffNotifier;
    return b;
  }

  /** Path of the directory holding every mutex of the service. */
  public List<String> directory() {
    return directory;
  }

  /** How long an owner's heartbeat may stay unchanged, on the reaper's clock, before eviction. */
  public Duration lease() {
    return lease;
  }

  /** How often a {@link MutexHandle} heartbeats. */
  public Duration heartbeatInterval() {
    return heartbeatInterval;
  }

  /** How often the reaper scans the held mutexes. */
  public Duration reaperInterval() {
    return reaperInterval;
  }

  /** Whether this service runs a reaper. Several reapers (one per service) may run at once. */
  public boolean reaperEnabled() {
    return reaperEnabled;
  }

  /** How long lock events stay in a mutex's event log for watchers to read. */
  public Duration eventRetention() {
    return eventRetention;
  }

  /** Most waiters in one mutex's queue; a caller beyond it is refused ({@link MutexQueueFullException}). */
  public int maxQueueLength() {
    return maxQueueLength;
  }

  /**
   * Identity of the host this service runs for, stable across its restarts and unique among the
   * services running at once (null: none). With one, owner records and queue entries made through
   * an earlier start of the same host are removed when {@link MutexService#open} opens the service.
   */
  public String hostId() {
    return hostId;
  }

  /** Executor of transactions and callbacks, or null for the database's own. */
  public Executor executor() {
    return executor;
  }

  /** Scheduler of heartbeats, timeouts and reaper scans, or null for a private one (shut down on close). */
  public ScheduledExecutorService scheduler() {
    return scheduler;
  }

  /**
   * Told after each committed hand-off to a waiter, to carry a hint to the waiter's process faster
   * than its watch (see {@link HandOffNotifier}); null: none, waiters learn of grants by their watch alone.
   */
  public HandOffNotifier handOffNotifier() {
    return handOffNotifier;
  }

  @Override
  public String toString() {
    return "MutexOptions{directory=" + directory + ", lease=" + lease + ", heartbeatInterval=" + heartbeatInterval
        + ", reaperInterval=" + reaperInterval + ", reaperEnabled=" + reaperEnabled + ", eventRetention="
        + eventRetention + ", maxQueueLength=" + maxQueueLength + ", hostId=" + hostId + ", executor=" + executor
        + ", scheduler=" + scheduler + ", handOffNotifier=" + handOffNotifier + "}";
  }

  /** Builds {@link MutexOptions}; each setter refuses a bad value at once, {@link #build()} the inconsistent ones. */
  public static final class Builder {
    private List<String> directory = DEFAULT_DIRECTORY;
    private Duration lease = Duration.ofSeconds(10);
    private Duration heartbeatInterval = Duration.ofSeconds(2);
    private Duration reaperInterval = Duration.ofSeconds(1);
    private boolean reaperEnabled = true;
    private Duration eventRetention = Duration.ofSeconds(60);
    private int maxQueueLength = 1000;
    private String hostId;
    private Executor executor;
    private ScheduledExecutorService scheduler;
    private HandOffNotifier handOffNotifier;

    private Builder() {}

    public Builder directory(List<String> path) {
      this.directory = OptionChecks.directoryPath(path, false, "the root directory cannot hold mutexes", "directory");
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

    public Builder eventRetention(Duration d) {
      this.eventRetention = OptionChecks.positive(d, "eventRetention");
      return this;
    }

    public Builder maxQueueLength(int n) {
      this.maxQueueLength = OptionChecks.atLeast(n, 1, "maxQueueLength");
      return this;
    }

    /** See {@link MutexOptions#hostId()}; null or absent: no host identity (no clean-up at open). */
    public Builder hostId(String id) {
      if (id != null) {
        MutexSchema.checkName(id, "hostId");
      }
      this.hostId = id;
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

    /** See {@link MutexOptions#handOffNotifier()}; null: none. */
    public Builder handOffNotifier(HandOffNotifier notifier) {
      this.handOffNotifier = notifier;
      return this;
    }

    public MutexOptions build() {
      if (heartbeatInterval.compareTo(lease) >= 0) {
        throw new IllegalArgumentException("heartbeatInterval (" + heartbeatInterval
            + ") must be shorter than lease (" + lease + "), or every owner would be evicted");
      }
      return new MutexOptions(this);
    }
  }
}
