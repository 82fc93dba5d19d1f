package io.github.fdbcoord.rwlock;

import io.github.fdbcoord.fdb.LayerDefaults;
import io.github.fdbcoord.lease.LeasedQueueOptions;

import java.util.List;

/**
 * How a {@link ReadWriteLockService} runs. Immutable; build with {@link #builder()}. Defaults: directory
 * {@code ["fdbcoord", "rwlock"]}, and those of {@link LeasedQueueOptions}.
 *
 * <p>Leases are wall-clock deadlines written by the holder's host and compared by every reaper's
 * host: clocks must agree to well within the lease.
 */
public final class ReadWriteLockOptions extends LeasedQueueOptions {
  /** Default directory: {@code [LayerDefaults.ROOT_DIRECTORY, "rwlock"]}. */
  public static final List<String> DEFAULT_DIRECTORY = LayerDefaults.directory("rwlock");

  private ReadWriteLockOptions(Builder b) {
    super(b);
  }

  public static Builder builder() {
    return new Builder();
  }

  public static ReadWriteLockOptions defaults() {
    return builder().build();
  }

  /** Builds {@link ReadWriteLockOptions}. */
  public static final class Builder extends LeasedQueueOptions.Builder<ReadWriteLockOptions, Builder> {
    private Builder() {
      super(DEFAULT_DIRECTORY, "read-write locks");
    }

    @Override
    protected Builder self() {
      return this;
    }

    @Override
    protected ReadWriteLockOptions create() {
      return new ReadWriteLockOptions(this);
    }
  }
}
