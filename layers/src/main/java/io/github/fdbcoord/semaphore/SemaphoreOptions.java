package io.github.fdbcoord.semaphore;

import io.github.fdbcoord.fdb.LayerDefaults;
import io.github.fdbcoord.fdb.OptionChecks;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;

/**
 * How a {@link SemaphoreService} runs. Immutable; build with {@link #builder()}.
 *
 * <p>Defaults: directory {@code ["fdbcoord", "semaphore"]}, lease 10 s, heartbeat every 2 s, reaper check every 1 s,
 * reaper on, at most 1000 waiters per queue, the database's executor, a private one-thread scheduler.
 *
 * <p>A holder or waiter whose heartbeat stops is removed between {@code lease} and {@code lease + 2 * reaperInterval}
 * after its last heartbeat, as seen on the reaper's clock.
 */
public final class SemaphoreOptions {
  /** Default directory: {@code [LayerDefaults.ROOT_DIRECTORY, "semaphore"]}. */
  public static final List<String> DEFAULT_DIRECTORY = LayerDefaults.directory("semaphore");

  private final List<String> directory;
  private final Duration lease;
  private final Duration heartbeatInterval;
  private final Duration reaperInterval;
  private final boolean reaperEnabled;
  private final int maxQueueLength;
  private final Executor executor;
  private final ScheduledExecutorService scheduler;

  private SemaphoreOptions(Builder b) {
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

  public static SemaphoreOptions defaults() {
    return builder().build();
  }

  /** Path of the directory holding every semaphore of the service. */
  public List<String> directory() {
    return directory;
  }

  /** How long a holder's or waiter's heartbeat may stay unchanged, on the reaper's clock, before removal. */
  public Duration lease() {
    return lease;
  }

  /** How often a {@link SemaphoreHandle} heartbeats its grant, and a waiting acquire its queue entry. */
  public Duration heartbeatInterval() {
    return heartbeatInterval;
  }

  /** How often the reaper scans the semaphores in use. */
  public Duration reaperInterval() {
    return reaperInterval;
  }

  /** Whether this service runs a reaper. Several reapers (one per service) may run at once. */
  public boolean reaperEnabled() {
    return reaperEnabled;
  }

  /** Most waiters in one semaphore's queue; a caller beyond it is refused (QUEUE_FULL). */
  public int maxQueueLength() {
    return maxQueueLength;
  }

  /** Executor of transactions and callbacks, or null for the database's own. */
  public Executor executor() {
    return executor;
  }

  /** Scheduler of heartbeats, timeouts and reaper scans, or null for a private one (shut down on close). */
  public ScheduledExecutorService scheduler() {
    return scheduler;
  }

  @Override
  public String toString() {
    return "SemaphoreOptions{directory=" + directory + ", lease=" + lease + ", heartbeatInterval=" + heartbeatInterval
        + ", reaperInterval=" + reaperInterval + ", reaperEnabled=" + reaperEnabled + ", maxQueueLength="
        + maxQueueLength + "}";
  }

  /** Builds {@link SemaphoreOptions}; each setter refuses a bad value at once, {@link #build()} the inconsistent ones. */
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
      this.directory = OptionChecks.directoryPath(path, false, "the root directory cannot hold semaphores", "directory");
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

    public SemaphoreOptions build() {
      if (heartbeatInterval.compareTo(lease) >= 0) {
        throw new IllegalArgumentException("heartbeatInterval (" + heartbeatInterval
            + ") must be shorter than lease (" + lease + "), or every holder would be removed");
      }
      return new SemaphoreOptions(this);
    }
  }
}
