package io.github.fdbcoord.embedded.client;

import io.github.fdbcoord.embedded.engine.Limits;

/** Per-database defaults for new transactions, set through the database's options. */
public final class TransactionDefaults {
  public volatile long timeoutMillis;
  public volatile long retryLimit = -1;
  public volatile long maxRetryDelayMillis = 1000;
  public volatile long sizeLimit = Limits.TRANSACTION_SIZE_LIMIT;
  /** FoundationDB counts enables and disables: snapshot reads see own writes while this is positive. */
  public volatile int snapshotRyw = 1;
}
