package io.github.fdbcoord.semaphore;

import io.github.fdbcoord.fdb.LayerDefaults;
import io.github.fdbcoord.lease.LeasedQueueOptions;

import java.util.List;

/**
 * How a {@link SemaphoreService} runs. Immutable; build with {@link #builder()}. Defaults: directory
 * {@code ["fdbcoord", "semaphore"]}, and those of {@link LeasedQueueOptions}.
 *
 * <p>A holder or waiter whose heartbeat stops is removed between {@code lease} and {@code lease + 2 * reaperInterval}
 * after its last heartbeat, as seen on the reaper's clock.
 */
public final class SemaphoreOptions extends LeasedQueueOptions {
  /** Default directory: {@code [LayerDefaults.ROOT_DIRECTORY, "semaphore"]}. */
  public static final List<String> DEFAULT_DIRECTORY = LayerDefaults.directory("semaphore");

  private SemaphoreOptions(Builder b) {
    super(b);
  }

  public static Builder builder() {
    return new Builder();
  }

  public static SemaphoreOptions defaults() {
    return builder().build();
  }

  /** Builds {@link SemaphoreOptions}. */
  public static final class Builder extends LeasedQueueOptions.Builder<SemaphoreOptions, Builder> {
    private Builder() {
      super(DEFAULT_DIRECTORY, "semaphores");
    }

    @Override
    protected Builder self() {
      return this;
    }

    @Override
    protected SemaphoreOptions create() {
      return new SemaphoreOptions(this);
    }
  }
}
