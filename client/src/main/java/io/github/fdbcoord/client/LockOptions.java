package io.github.fdbcoord.client;

import java.time.Duration;
import java.util.Objects;
import java.util.UUID;

/**
 * How a held handle is taken ({@link CoordinationClient#lock(String, LockOptions)},
 * {@link ElectionClient#lead(String, LockOptions)}, {@link SemaphoreClient#permit(String, int, LockOptions)},
 * {@link ReadWriteLockClient#lock(String, ReadWriteLockClient.Mode, LockOptions)}): the owner (or candidate) name
 * it is held under, how long it waits for it, and how often it renews the lease.
 *
 * <p>Mutable, as Vert.x's own options classes: {@code new LockOptions().setTimeout(Duration.ofSeconds(30))}.
 */
public final class LockOptions {
  /** How long {@code lock} waits for the mutex unless told otherwise. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);

  private String owner;
  private Duration timeout = DEFAULT_TIMEOUT;
  private Duration renewInterval;

  /** Options with a fresh random owner, a 10 s wait and renewals at a third of the service's lease. */
  public LockOptions() {
  }

  /**
   * The owner the mutex is held under; null (the default) for a fresh random one per lock, so that
   * two handles never share a grant by accident.
   */
  public String getOwner() {
    return owner;
  }

  /** Sets the owner name the mutex is held under (see {@link #getOwner()}); returns these options. */
  public LockOptions setOwner(String owner) {
    this.owner = owner;
    return this;
  }

  /** How long {@code lock} waits in the mutex's queue before failing with 409 timed_out. */
  public Duration getTimeout() {
    return timeout;
  }

  /** Sets how long {@code lock} waits (zero: only take it if free); returns these options. */
  public LockOptions setTimeout(Duration timeout) {
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.isNegative()) {
      throw new IllegalArgumentException("timeout must not be negative, got " + timeout);
    }
    this.timeout = timeout;
    return this;
  }

  /**
   * How often the held lock's lease is renewed; null (the default) for a third of the lease the
   * service reports, which leaves two renewals of margin before the lease runs out.
   */
  public Duration getRenewInterval() {
    return renewInterval;
  }

  /** Sets how often the lease is renewed (must be well under the service's lease); returns these options. */
  public LockOptions setRenewInterval(Duration renewInterval) {
    if (renewInterval != null && (renewInterval.isNegative() || renewInterval.isZero())) {
      throw new IllegalArgumentException("renew interval must be positive, got " + renewInterval);
    }
    this.renewInterval = renewInterval;
    return this;
  }

  String ownerOrRandom() {
    return owner != null ? owner : "lock-" + UUID.randomUUID();
  }
}
