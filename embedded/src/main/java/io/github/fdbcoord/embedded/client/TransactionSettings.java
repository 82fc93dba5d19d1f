package io.github.fdbcoord.embedded.client;

import io.github.fdbcoord.embedded.engine.Limits;
import io.github.fdbcoord.embedded.bytes.Bytes;

import io.github.fdbcoord.fdb.FdbErrors;

import java.util.concurrent.ThreadLocalRandom;

/**
 * A transaction's options and retry state: those that survive {@code onError} (API 610 and later:
 * timeout, retry limit, maximum retry delay, size limit), seeded from the database's defaults; those
 * that {@code onError} resets; and the retry count and back-off. Not thread-safe: the transaction's
 * monitor guards it.
 */
final class TransactionSettings {
  private static final double DEFAULT_BACKOFF = 0.01;
  private static final double FUTURE_VERSION_RETRY_DELAY = 0.01;

  private final TransactionDefaults defaults;
  long timeoutMillis;
  long retryLimit;
  long maxRetryDelayMillis;
  long sizeLimit;
  boolean rywDisabled;
  /** FoundationDB counts enables and disables: snapshot reads see own writes while this is positive. */
  int snapshotRyw;
  private boolean nextWriteNoConflict;
  boolean causalWriteRisky;
  private boolean readSystemKeys;
  private boolean accessSystemKeys;
  private long retries;
  private double backoff = DEFAULT_BACKOFF;

  TransactionSettings(TransactionDefaults defaults) {
    this.defaults = defaults;
    this.timeoutMillis = defaults.timeoutMillis;
    this.retryLimit = defaults.retryLimit;
    this.maxRetryDelayMillis = defaults.maxRetryDelayMillis;
    this.sizeLimit = defaults.sizeLimit;
    this.snapshotRyw = defaults.snapshotRyw;
  }

  /** Where reads must stop: the system keys need READ_SYSTEM_KEYS or ACCESS_SYSTEM_KEYS. */
  byte[] maxReadKey() {
    return readSystemKeys || accessSystemKeys ? Bytes.ALL_END : Bytes.SYSTEM_BEGIN;
  }

  /** Where writes must stop: the system keys need ACCESS_SYSTEM_KEYS. */
  byte[] maxWriteKey() {
    return accessSystemKeys ? Bytes.ALL_END : Bytes.SYSTEM_BEGIN;
  }

  boolean seesOwnWrites(boolean snapshot) {
    return !rywDisabled && !(snapshot && snapshotRyw <= 0);
  }

  /** Whether the next write adds a write-conflict range; consumes NEXT_WRITE_NO_WRITE_CONFLICT_RANGE. */
  boolean consumeWriteConflict() {
    boolean add = !nextWriteNoConflict;
    nextWriteNoConflict = false;
    return add;
  }

  /**
   * Sets an option that needs nothing but this state (codes as fdb-java's {@code TransactionOptions});
   * others have no effect in one process.
   */
  void set(int code, byte[] param) {
    switch (code) {
      case 10 -> causalWriteRisky = true;
      case 30 -> nextWriteNoConflict = true;
      case 301 -> accessSystemKeys = true;
      case 302 -> readSystemKeys = true;
      case 501 -> retryLimit = OptionParams.intParam(param, -1, Integer.MAX_VALUE);
      case 502 -> maxRetryDelayMillis = OptionParams.intParam(param, 0, Integer.MAX_VALUE);
      case 503 -> sizeLimit = OptionParams.intParam(param, 32, Limits.TRANSACTION_SIZE_LIMIT);
      case 600 -> snapshotRyw++;
      case 601 -> snapshotRyw--;
      default -> {
        // Priorities, tags, tracing, causal-read and similar options have no effect in one process.
      }
    }
  }

  /** Whether the retry limit allows another try. */
  boolean mayRetry() {
    return retryLimit < 0 || retries < retryLimit;
  }

  /** Counts a retry after error {@code code} and answers how long to wait before it, in seconds. */
  double retryDelaySeconds(int code) {
    retries++;
    double maxBackoff = maxRetryDelayMillis / 1000.0;
    if (code == FdbErrors.TRANSACTION_TOO_OLD || code == FdbErrors.FUTURE_VERSION) {
      return Math.min(FUTURE_VERSION_RETRY_DELAY, maxBackoff);
    }
    double delay = backoff * ThreadLocalRandom.current().nextDouble();
    backoff = Math.min(backoff * 2, maxBackoff);
    return delay;
  }

  /** Resets the options that {@code onError} resets, keeping the persistent ones and the retry state. */
  void resetForRetry() {
    rywDisabled = false;
    snapshotRyw = defaults.snapshotRyw;
    nextWriteNoConflict = false;
    causalWriteRisky = false;
    readSystemKeys = false;
    accessSystemKeys = false;
  }
}
