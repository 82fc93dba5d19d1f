package io.github.fdbcoord.interner;

import com.apple.foundationdb.directory.DirectoryLayer;
import io.github.fdbcoord.fdb.LayerDefaults;
import io.github.fdbcoord.fdb.OptionChecks;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;

/**
 * How an {@link InternerService} works. Immutable; build with {@link #builder()}.
 *
 * <p>Defaults: namespaces under directory path {@code ["fdbcoord", "interner"]} of
 * {@link DirectoryLayer#getDefault()}, 16 sequence bits for new namespaces, 16 random tries to
 * find a non-exhausted sequence, batches of at most 10,000 strings, a 64 MiB cache, a 10 s
 * transaction timeout, no retry limit, the database's executor, up to 64 transactions of one kind in
 * flight per namespace handle for calls of 64 strings or more.
 */
public final class InternerOptions {
  public static final List<String> DEFAULT_ROOT_PATH = LayerDefaults.directory("interner");
  public static final int DEFAULT_SEQUENCE_BITS = 16;
  public static final int DEFAULT_MAX_SEQUENCE_TRIES = 16;
  public static final int DEFAULT_MAX_BATCH_SIZE = 10_000;
  public static final long DEFAULT_CACHE_MAX_BYTES = 64L << 20;
  public static final Duration DEFAULT_TRANSACTION_TIMEOUT = Duration.ofSeconds(10);
  public static final int DEFAULT_MAX_TRANSACTIONS_IN_FLIGHT = 64;

  /** Chooses a random sequence id in [1, 2^sequenceBits); replaceable in tests only. */
  interface SequencePicker {
    long pick(int sequenceBits);
  }

  static final SequencePicker RANDOM_SEQUENCE = bits -> {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    long seq;
    do {
      seq = random.nextLong() >>> (64 - bits);
    } while (seq == 0);
    return seq;
  };

  private final List<String> rootPath;
  private final int sequenceBits;
  private final int maxSequenceTries;
  private final int maxBatchSize;
  private final long cacheMaxBytes;
  private final Duration transactionTimeout;
  private final int retryLimit;
  private final Executor executor;
  private final Executor batchWindow;
  private final int maxTransactionsInFlight;
  private final DirectoryLayer directoryLayer;
  private final SequencePicker sequencePicker;

  private InternerOptions(Builder b) {
    this.rootPath = b.rootPath;
    this.sequenceBits = b.sequenceBits;
    this.maxSequenceTries = b.maxSequenceTries;
    this.maxBatchSize = b.maxBatchSize;
    this.cacheMaxBytes = b.cacheMaxBytes;
    this.transactionTimeout = b.transactionTimeout;
    this.retryLimit = b.retryLimit;
    this.executor = b.executor;
    this.batchWindow = b.batchWindow;
    this.maxTransactionsInFlight = b.maxTransactionsInFlight;
    this.directoryLayer = b.directoryLayer;
    this.sequencePicker = b.sequencePicker;
  }

  public static Builder builder() {
    return new Builder();
  }

  public static InternerOptions defaults() {
    return builder().build();
  }

  /** Directory path under which every namespace is a sub-directory. */
  public List<String> rootPath() {
    return rootPath;
  }

  /**
   * High bits of an id that name its sequence, for namespaces created by this service (1 to 63).
   * An existing namespace keeps the split it was created with: changing it would let ids overlap.
   */
  public int sequenceBits() {
    return sequenceBits;
  }

  /** How many exhausted sequences one allocation may hit before failing with EXHAUSTED. */
  public int maxSequenceTries() {
    return maxSequenceTries;
  }

  /** Most strings (or ids) one call accepts; larger batches fail with BAD_REQUEST. */
  public int maxBatchSize() {
    return maxBatchSize;
  }

  /** Approximate memory bound of the read-through cache (both directions together); 0 disables it. */
  public long cacheMaxBytes() {
    return cacheMaxBytes;
  }

  /** Timeout of each transaction including its retries; {@link Duration#ZERO} means none. */
  public Duration transactionTimeout() {
    return transactionTimeout;
  }

  /**
   * Most retries of one transaction after retryable errors (conflicts); -1 means no limit other than
   * {@link #transactionTimeout()}. Past it the call fails with CONFLICT.
   */
  public int retryLimit() {
    return retryLimit;
  }

  /** Executor of transactions and their continuations, or null for the database's own. */
  public Executor executor() {
    return executor;
  }

  /**
   * Where a transaction of cache misses that could start at once starts, so that the misses of
   * calls submitted before it runs share it (see {@code Coalescer}), or null: at once. For callers
   * on an event loop over a store whose transactions complete before they return (the in-memory
   * engine), an executor that queues the start behind the loop's pending work lets the calls the
   * loop received together share one transaction.
   */
  public Executor batchWindow() {
    return batchWindow;
  }

  /**
   * Most transactions of one kind (interning, lookups, resolves) a namespace handle runs at once.
   * Up to 4 run for calls of any size; past that, further calls wait and share the next
   * transaction, unless the waiting calls hold 64 strings or more, which start one of their own
   * while fewer than this many run: at that size sharing saves little and waiting costs
   * concurrency. Values of 4 or less make every call past the fourth wait. More in flight means a
   * higher rate where latency limits it, and somewhat more client and server CPU per string where
   * CPU does (see docs/sizing.md).
   */
  public int maxTransactionsInFlight() {
    return maxTransactionsInFlight;
  }

  public DirectoryLayer directoryLayer() {
    return directoryLayer;
  }

  SequencePicker sequencePicker() {
    return sequencePicker;
  }

  @Override
  public String toString() {
    return "InternerOptions{rootPath=" + rootPath + ", sequenceBits=" + sequenceBits + ", maxSequenceTries="
        + maxSequenceTries + ", maxBatchSize=" + maxBatchSize + ", cacheMaxBytes=" + cacheMaxBytes
        + ", transactionTimeout=" + transactionTimeout + ", retryLimit=" + retryLimit + ", executor=" + executor
        + ", batchWindow=" + batchWindow + ", maxTransactionsInFlight=" + maxTransactionsInFlight + "}";
  }

  /** Builds {@link InternerOptions}; each setter refuses a bad value at once. */
  public static final class Builder {
    private List<String> rootPath = DEFAULT_ROOT_PATH;
    private int sequenceBits = DEFAULT_SEQUENCE_BITS;
    private int maxSequenceTries = DEFAULT_MAX_SEQUENCE_TRIES;
    private int maxBatchSize = DEFAULT_MAX_BATCH_SIZE;
    private long cacheMaxBytes = DEFAULT_CACHE_MAX_BYTES;
    private Duration transactionTimeout = DEFAULT_TRANSACTION_TIMEOUT;
    private int retryLimit = -1;
    private Executor executor;
    private Executor batchWindow;
    private int maxTransactionsInFlight = DEFAULT_MAX_TRANSACTIONS_IN_FLIGHT;
    private DirectoryLayer directoryLayer = DirectoryLayer.getDefault();
    private SequencePicker sequencePicker = RANDOM_SEQUENCE;

    private Builder() {}

    public Builder rootPath(List<String> path) {
      this.rootPath = OptionChecks.directoryPath(path, false, "namespaces need a parent directory", "rootPath");
      return this;
    }

    public Builder sequenceBits(int bits) {
      this.sequenceBits = OptionChecks.between(bits, 1, 63, "sequenceBits");
      return this;
    }

    public Builder maxSequenceTries(int tries) {
      this.maxSequenceTries = OptionChecks.atLeast(tries, 1, "maxSequenceTries");
      return this;
    }

    public Builder maxBatchSize(int size) {
      this.maxBatchSize = OptionChecks.atLeast(size, 1, "maxBatchSize");
      return this;
    }

    public Builder cacheMaxBytes(long bytes) {
      this.cacheMaxBytes = OptionChecks.atLeast(bytes, 0L, "cacheMaxBytes");
      return this;
    }

    public Builder transactionTimeout(Duration timeout) {
      this.transactionTimeout = OptionChecks.notNegative(timeout, "transactionTimeout");
      return this;
    }

    public Builder retryLimit(int limit) {
      this.retryLimit = OptionChecks.atLeast(limit, -1, "retryLimit (-1: no limit)");
      return this;
    }

    public Builder executor(Executor executor) {
      this.executor = executor;
      return this;
    }

    /** See {@link InternerOptions#batchWindow()}; null (the default): transactions start at once. */
    public Builder batchWindow(Executor window) {
      this.batchWindow = window;
      return this;
    }

    public Builder maxTransactionsInFlight(int max) {
      this.maxTransactionsInFlight = OptionChecks.atLeast(max, 1, "maxTransactionsInFlight");
      return this;
    }

    public Builder directoryLayer(DirectoryLayer layer) {
      this.directoryLayer = Objects.requireNonNull(layer, "directoryLayer");
      return this;
    }

    Builder sequencePicker(SequencePicker picker) {
      this.sequencePicker = Objects.requireNonNull(picker, "sequencePicker");
      return this;
    }

    public InternerOptions build() {
      return new InternerOptions(this);
    }
  }
}
