package io.github.fdbcoord.lease;

import io.github.fdbcoord.fdb.OptionChecks;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

/**
 * The options every leased primitive with a FIFO queue has: where it lives, how long a grant or a queue entry lives
 * without a heartbeat, how often heartbeats and the reaper run, how long a queue may grow, and the threads.
 *
 * <p>Defaults: lease 10 s, heartbeat every 2 s, reaper every 1 s and on, at most 1000 waiters per queue, the
 * database's executor, a private one-thread scheduler.
 */
public abstract class LeasedQueueOptions {
  private final List<String> directory;
  private final Duration lease;
  private final Duration heartbeatInterval;
  private final Duration reaperInterval;
  private final boolean reaperEnabled;
  private final int maxQueueLength;
  private final Executor executor;
  private final ScheduledExecutorService scheduler;
  private final GrantNotifier grantNotifier;

  protected LeasedQueueOptions(Builder<?, ?> b) {
    this.directory = b.directory;
    this.lease = b.lease;
    this.heartbeatInterval = b.heartbeatInterval;
    this.reaperInterval = b.reaperInterval;
    this.reaperEnabled = b.reaperEnabled;
    this.maxQueueLength = b.maxQueueLength;
    this.executor = b.executor;
    this.scheduler = b.scheduler;
    this.grantNotifier = b.grantNotifier;
  }

  /** Path of the directory holding every instance of the service. */
  public List<String> directory() {
    return directory;
  }

  /** How long a grant or a queue entry lives after its last heartbeat. */
  public Duration lease() {
    return lease;
  }

  /** How often a handle heartbeats its grant, and a waiting acquire its queue entry. */
  public Duration heartbeatInterval() {
    return heartbeatInterval;
  }

  /** How often the reaper looks for holders and waiters whose lease ended. */
  public Duration reaperInterval() {
    return reaperInterval;
  }

  /** Whether this service runs a reaper (at least one service over the directory should; several may). */
  public boolean reaperEnabled() {
    return reaperEnabled;
  }

  /** Most waiters one queue holds; an acquire beyond it is refused with QUEUE_FULL. */
  public int maxQueueLength() {
    return maxQueueLength;
  }

  /** Executor of transactions and callbacks, or null for the database's own. */
  public Executor executor() {
    return executor;
  }

  /** Scheduler of heartbeats, timeouts and the reaper, or null for a private one (shut down on close). */
  public ScheduledExecutorService scheduler() {
    return scheduler;
  }

  /**
   * Where grants to owners waiting in other processes are told, so that they learn of them sooner than by their
   * watch (see {@link GrantNotifier}); null: by their watch alone. Waits in this process are told directly.
   */
  public GrantNotifier grantNotifier() {
    return grantNotifier;
  }

  /** The configured scheduler, or a new one-thread daemon scheduler named {@code threadName} that the caller owns. */
  public ScheduledExecutorService schedulerOrOwn(String threadName) {
    if (scheduler != null) {
      return scheduler;
    }
    return Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, threadName);
      t.setDaemon(true);
      return t;
    });
  }

  @Override
  public String toString() {
    return getClass().getSimpleName() + "{directory=" + directory + ", lease=" + lease + ", heartbeatInterval="
        + heartbeatInterval + ", reaperInterval=" + reaperInterval + ", reaperEnabled=" + reaperEnabled
        + ", maxQueueLength=" + maxQueueLength + "}";
  }

  /**
   * Builds the options; each setter refuses a bad value at once, {@link #build()} the inconsistent ones.
   *
   * @param <O> the options built
   * @param <B> the concrete builder, returned by every setter
   */
  public abstract static class Builder<O extends LeasedQueueOptions, B extends Builder<O, B>> {
    private final String whatItHolds;
    private List<String> directory;
    private Duration lease = Duration.ofSeconds(10);
    private Duration heartbeatInterval = Duration.ofSeconds(2);
    private Duration reaperInterval = Duration.ofSeconds(1);
    private boolean reaperEnabled = true;
    private int maxQueueLength = 1000;
    private Executor executor;
    private ScheduledExecutorService scheduler;
    private GrantNotifier grantNotifier;

    /** {@code whatItHolds} names the primitive in messages ("read-write locks"). */
    protected Builder(List<String> defaultDirectory, String whatItHolds) {
      this.directory = defaultDirectory;
      this.whatItHolds = whatItHolds;
    }

    protected abstract B self();

    protected abstract O create();

    public B directory(List<String> path) {
      this.directory = OptionChecks.directoryPath(path, false, "the root directory cannot hold " + whatItHolds,
          "directory");
      return self();
    }

    public B lease(Duration d) {
      this.lease = OptionChecks.positive(d, "lease");
      return self();
    }

    public B heartbeatInterval(Duration d) {
      this.heartbeatInterval = OptionChecks.positive(d, "heartbeatInterval");
      return self();
    }

    public B reaperInterval(Duration d) {
      this.reaperInterval = OptionChecks.positive(d, "reaperInterval");
      return self();
    }

    public B reaperEnabled(boolean enabled) {
      this.reaperEnabled = enabled;
      return self();
    }

    public B maxQueueLength(int n) {
      this.maxQueueLength = OptionChecks.atLeast(n, 1, "maxQueueLength");
      return self();
    }

    public B executor(Executor executor) {
      this.executor = executor;
      return self();
    }

    public B scheduler(ScheduledExecutorService scheduler) {
      this.scheduler = scheduler;
      return self();
    }

    public B grantNotifier(GrantNotifier notifier) {
      this.grantNotifier = notifier;
      return self();
    }

    public O build() {
      if (heartbeatInterval.compareTo(lease) >= 0) {
        throw new IllegalArgumentException("heartbeatInterval (" + heartbeatInterval
            + ") must be shorter than lease (" + lease + "), or every holder would expire");
      }
      return create();
    }
  }
}
