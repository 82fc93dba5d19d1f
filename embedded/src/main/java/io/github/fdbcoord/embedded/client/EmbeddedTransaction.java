package io.github.fdbcoord.embedded.client;

import io.github.fdbcoord.embedded.engine.Limits;
import io.github.fdbcoord.embedded.engine.PendingWrite;
import io.github.fdbcoord.embedded.engine.TransactionEngine;
import io.github.fdbcoord.embedded.engine.Watches;
import io.github.fdbcoord.embedded.bytes.Bytes;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.FDBException;
import com.apple.foundationdb.KeyArrayResult;
import com.apple.foundationdb.MutationType;
import com.apple.foundationdb.Range;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.TransactionOptions;
import io.github.fdbcoord.fdb.FdbErrors;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * A transaction of the embedded engine: reads at one read version, a local write map layered over them
 * (read-your-writes: {@link WriteMap}, {@link MergedView}), read- and write-conflict ranges collected as
 * FoundationDB's client computes them ({@link ConflictRanges}), and errors surfacing where FoundationDB
 * surfaces them (set, clear and mutate never throw: their errors fail the next read or the commit). This
 * class is the state machine (active, committing, committed, cancelled) and each operation's checks;
 * {@link CommitAttempt} carries a commit through the engine. Its monitor guards all of its parts.
 */
public final class EmbeddedTransaction extends ReadView implements Transaction {
  enum State { ACTIVE, COMMITTING, COMMITTED, CANCELLED }

  final TransactionEngine engine;
  final Executor executor;
  private final DatabaseContext context;
  private final ReadView.Snapshot snapshotView = new ReadView.Snapshot(this);
  private final TransactionOptions options = new TransactionOptions(this::setOption);
  private final long creationNanos = System.nanoTime();
  final TransactionSettings settings;
  final WriteMap writes = new WriteMap();
  final ConflictRanges conflicts = new ConflictRanges();
  final OwnWatches watches;
  private final TransactionReads reads;
  private final TransactionWrites writer;
  private final CommitAttempt commit;

  State state = State.ACTIVE;
  FDBException cancelError;
  /** Whether commit() was called since the last reset: FoundationDB's commitStarted, which cancel() keeps. */
  boolean commitStarted;
  private boolean closed;
  private long readVersion = -1;
  private FDBException deferred;
  private ScheduledFuture<?> timeoutTask;

  /** A new transaction of the database {@code context} describes; {@code executor} completes its futures. */
  public EmbeddedTransaction(DatabaseContext context, Executor executor) {
    this.context = context;
    this.engine = context.engine;
    this.executor = executor;
    this.settings = new TransactionSettings(context.defaults);
    this.watches = new OwnWatches(engine, executor);
    this.reads = new TransactionReads(this);
    this.writer = new TransactionWrites(this);
    this.commit = new CommitAttempt(this);
    if (settings.timeoutMillis > 0) {
      scheduleTimeout();
    }
  }

  @Override
  EmbeddedTransaction tx() {
    return this;
  }

  @Override
  public boolean isSnapshot() {
    return false;
  }

  @Override
  public ReadTransaction snapshot() {
    return snapshotView;
  }

  @Override
  public Executor getExecutor() {
    return executor;
  }

  @Override
  public Database getDatabase() {
    return context.database;
  }

  @Override
  public TransactionOptions options() {
    return options;
  }

  // ---------------------------------------------------------------- state and errors

  void ensureOpen() {
    if (closed) {
      throw new IllegalStateException("Cannot access closed object");
    }
  }

  /**
   * The error a read or commit must fail with now, or null, in FoundationDB's order: a deferred error
   * first (ThreadSafeTransaction checks it before the call reaches the transaction), then use during
   * or after a commit (checkUsedDuringCommit), then cancellation or timeout (the reset promise).
   * Caller holds the monitor.
   */
  FDBException readError() {
    if (deferred != null) {
      return deferred;
    }
    if (commitStarted) {
      return FdbErrors.error(FdbErrors.USED_DURING_COMMIT);
    }
    return state == State.CANCELLED ? cancelError : null;
  }

  /** The deferred error that fails every checked call (all but cancel, onError and options), or null. */
  synchronized FDBException deferredError() {
    return deferred;
  }

  /** The checks before any read: throws once closed; otherwise the error it must fail with, or null. */
  FDBException openForRead() {
    ensureOpen();
    return readError();
  }

  /** Records an error of set/clear/mutate, to fail the next read or the commit. Caller holds the monitor. */
  void defer(int code) {
    if (deferred == null) {
      deferred = FdbErrors.error(code);
    }
  }

  /** Whether a write may proceed; otherwise its error is deferred. Caller holds the monitor. */
  boolean writable() {
    if (deferred != null) {
      return false;
    }
    if (commitStarted) {
      defer(FdbErrors.USED_DURING_COMMIT);
      return false;
    }
    // A cancelled transaction still checks (and takes) its writes, as FoundationDB's does: their
    // errors are deferred and win over the cancellation; the writes themselves can never commit.
    return true;
  }

  long approximateSize() {
    return writer.bytes() + conflicts.bytes();
  }

  boolean hasReadVersion() {
    return readVersion >= 0;
  }

  /** The read version, taken from the engine at the first read. Caller holds the monitor. */
  long readVersion() {
    if (readVersion < 0) {
      readVersion = engine.grantReadVersion();
    }
    return readVersion;
  }

  synchronized void assignReadVersion(long version) {
    ensureOpen();
    // Errors of setReadVersion surface at the next operation, as through the C client, which skips
    // the call altogether once an error is deferred, and checks for a read version before the value
    // (NativeAPI Transaction::setVersion).
    if (deferred != null) {
      return;
    }
    if (readVersion >= 0) {
      defer(FdbErrors.READ_VERSION_ALREADY_SET);
    } else if (version <= 0) {
      defer(FdbErrors.VERSION_INVALID);
    } else {
      readVersion = version;
    }
  }

  CompletableFuture<Long> estimatedRangeSize(byte[] begin, byte[] end) {
    synchronized (this) {
      FDBException err = openForRead();
      if (err != null) {
        return CompletableFuture.failedFuture(err);
      }
    }
    return RangeEstimates.size(engine, begin, end);
  }

  CompletableFuture<KeyArrayResult> rangeSplitPoints(byte[] begin, byte[] end, long chunkSize) {
    synchronized (this) {
      FDBException err = openForRead();
      if (err != null) {
        return CompletableFuture.failedFuture(err);
      }
      byte[] max = settings.maxReadKey();
      if (Bytes.compare(begin, max) > 0 || Bytes.compare(end, max) > 0) {
        return CompletableFuture.failedFuture(FdbErrors.error(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE));
      }
    }
    return RangeEstimates.splitPoints(engine, begin, end, chunkSize);
  }

  /** The reads that {@link ReadView} (this transaction and its snapshot view) funnel into. */
  TransactionReads reads() {
    return reads;
  }

  // ---------------------------------------------------------------- conflict ranges

  @Override
  public boolean addReadConflictRangeIfNotSnapshot(byte[] begin, byte[] end) {
    addReadConflictRange(begin, end);
    return true;
  }

  @Override
  public boolean addReadConflictKeyIfNotSnapshot(byte[] key) {
    addReadConflictKey(key);
    return true;
  }

  @Override
  public void addReadConflictRange(byte[] begin, byte[] end) {
    addManualConflictRange(begin, end, true);
  }

  @Override
  public void addReadConflictKey(byte[] key) {
    addReadConflictRange(key, Bytes.keyAfter(key));
  }

  @Override
  public void addWriteConflictRange(byte[] begin, byte[] end) {
    addManualConflictRange(begin, end, false);
  }

  @Override
  public void addWriteConflictKey(byte[] key) {
    addWriteConflictRange(key, Bytes.keyAfter(key));
  }

  /**
   * Conflict ranges added by hand: an inverted range is thrown at the call (fdb_c builds the range
   * before the transaction sees it), the transaction's own checks are deferred like a write's
   * (ReadYourWritesTransaction::addRead/WriteConflictRange run on the network thread).
   */
  private synchronized void addManualConflictRange(byte[] begin, byte[] end, boolean read) {
    ensureOpen();
    if (Bytes.compare(begin, end) > 0) {
      throw FdbErrors.error(FdbErrors.INVERTED_RANGE);
    }
    if (deferred != null) {
      return;
    }
    if (commitStarted) {
      defer(FdbErrors.USED_DURING_COMMIT);
      return;
    }
    byte[] max = read ? settings.maxReadKey() : settings.maxWriteKey();
    if (Bytes.compare(begin, max) > 0 || Bytes.compare(end, max) > 0) {
      defer(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE);
      return;
    }
    if (Bytes.compare(begin, end) < 0) {
      if (read) {
        conflicts.addRead(begin.clone(), end.clone());
      } else {
        conflicts.addWrite(begin.clone(), end.clone());
      }
    }
  }

  // ---------------------------------------------------------------- writes

  @Override
  public synchronized void set(byte[] key, byte[] value) {
    writer.set(key, value);
  }

  @Override
  public synchronized void clear(byte[] key) {
    writer.clear(key);
  }

  @Override
  public synchronized void clear(byte[] begin, byte[] end) {
    writer.clear(begin, end);
  }

  @Override
  public void clear(Range range) {
    clear(range.begin, range.end);
  }

  @Override
  public void clearRangeStartsWith(byte[] prefix) {
    clear(Range.startsWith(prefix));
  }

  @Override
  public synchronized void mutate(MutationType type, byte[] key, byte[] param) {
    writer.mutate(type, key, param);
  }

  // ---------------------------------------------------------------- watches

  @Override
  public CompletableFuture<Void> watch(byte[] key) {
    if (key == null) {
      throw new IllegalArgumentException("Key cannot be null");
    }
    synchronized (this) {
      FDBException refused = openForRead();
      if (refused != null) {
        return CompletableFuture.failedFuture(refused);
      }
      if (settings.rywDisabled) {
        return CompletableFuture.failedFuture(FdbErrors.error(FdbErrors.WATCHES_DISABLED));
      }
      if (Bytes.compare(key, settings.maxReadKey()) >= 0) {
        return CompletableFuture.failedFuture(FdbErrors.error(FdbErrors.KEY_OUTSIDE_LEGAL_RANGE));
      }
      if (key.length > Limits.maxKeySize(key)) {
        return CompletableFuture.failedFuture(FdbErrors.error(FdbErrors.KEY_TOO_LARGE));
      }
      byte[] seen;
      try {
        seen = reads.ownView(key);
      } catch (RuntimeException e) {
        return reads.fail(e);
      }
      // FoundationDB reads the watched key as a serializable read, with its read conflict.
      PendingWrite own = writes.get(key);
      if ((own == null || own.kind != PendingWrite.Kind.KNOWN) && !writes.isCleared(key)) {
        conflicts.addRead(key, Bytes.keyAfter(key));
      }
      if (!engine.reserveWatch()) {
        return CompletableFuture.failedFuture(FdbErrors.error(FdbErrors.TOO_MANY_WATCHES));
      }
      CompletableFuture<Void> future = new CompletableFuture<>();
      Watches.Watch w = new Watches.Watch(key.clone(), seen, future, executor);
      watches.add(w);
      // FoundationDB counts a watch against the limit only while its future is live: one cancelled
      // before the commit gives its slot back at once (after the commit, Watches does the same).
      future.whenComplete((v, t) -> {
        if (future.isCancelled()) {
          synchronized (this) {
            watches.cancelled(w);
          }
        }
      });
      return future;
    }
  }

  // ---------------------------------------------------------------- commit

  @Override
  public CompletableFuture<Void> commit() {
    return commit.start();
  }

  @Override
  public Long getCommittedVersion() {
    return commit.committedVersion();
  }

  @Override
  public synchronized CompletableFuture<byte[]> getVersionstamp() {
    // A deferred error fails it at once (FoundationDB 7.3 checks it here as for a read); otherwise it
    // waits for the commit, which fails it with the commit's error or the cancellation.
    if (deferred != null) {
      return CompletableFuture.failedFuture(deferred);
    }
    if (commitStarted) {
      return CompletableFuture.failedFuture(FdbErrors.error(FdbErrors.USED_DURING_COMMIT));
    }
    return commit.versionstamp();
  }

  @Override
  public synchronized CompletableFuture<Long> getApproximateSize() {
    // Neither cancellation nor a commit stops it; only a deferred error does.
    if (deferred != null) {
      return CompletableFuture.failedFuture(deferred);
    }
    return CompletableFuture.completedFuture(approximateSize());
  }

  // ---------------------------------------------------------------- retry, cancel, options

  @Override
  public CompletableFuture<Transaction> onError(Throwable e) {
    if ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
      e = e.getCause();
    }
    if (!(e instanceof FDBException)) {
      return CompletableFuture.failedFuture(e);
    }
    int code = ((FDBException) e).getCode();
    double delaySeconds;
    synchronized (this) {
      ensureOpen();
      // RYWImpl::onError: a cancelled or timed-out transaction answers its reset error whatever the
      // code; then the retry limit; then NativeAPI's Transaction::onError (0 is no error to handle).
      // Whatever fails here cancels the transaction, as the C client's does.
      if (state == State.CANCELLED) {
        return CompletableFuture.failedFuture(cancelError);
      }
      if (!settings.mayRetry()) {
        // The retry limit rethrows the error given; a future cannot fail with code 0, so the C
        // client reports that one as an internal error (4100).
        return failRetry(code == 0 ? FdbErrors.error(FdbErrors.INTERNAL_ERROR) : e);
      }
      if (code == 0) {
        return failRetry(FdbErrors.error(FdbErrors.CLIENT_INVALID_OPERATION));
      }
      if (!FdbErrors.isRetryable(code)) {
        return failRetry(e);
      }
      FDBException stopped = engine.failure();
      if (stopped != null) {
        // A retry cannot succeed on a stopped engine; its error would hide that this commit's
        // outcome is unknown, which is what the caller must act on.
        return CompletableFuture.failedFuture(code == FdbErrors.COMMIT_UNKNOWN_RESULT
            ? new FDBException("Transaction may or may not have committed: " + stopped.getMessage()
                + " (a commit that was being written may be on disk; it will be there when the data directory is reopened)",
                FdbErrors.COMMIT_UNKNOWN_RESULT)
            : stopped);
      }
      delaySeconds = settings.retryDelaySeconds(code);
      reset();
    }
    CompletableFuture<Transaction> next = new CompletableFuture<>();
    engine.schedule((long) (delaySeconds * 1e9), executor, () -> next.complete(this));
    return next;
  }

  /** onError's failure: the transaction is cancelled, and the caller gets {@code error}. Caller holds the monitor. */
  private CompletableFuture<Transaction> failRetry(Throwable error) {
    cancel();
    return CompletableFuture.failedFuture(error);
  }

  /** Back to a fresh transaction, keeping the persistent options, retry count and back-off. */
  private void reset() {
    watches.failAll(FdbErrors.error(FdbErrors.TRANSACTION_CANCELLED));
    state = State.ACTIVE;
    commitStarted = false;
    cancelError = null;
    readVersion = -1;
    writer.reset();
    reads.reset();
    conflicts.reset();
    deferred = null;
    commit.reset();
    settings.resetForRetry();
    if (settings.timeoutMillis > 0 && timeoutTask == null) {
      scheduleTimeout();
    }
  }

  @Override
  public void cancel() {
    cancelWith(FdbErrors.error(FdbErrors.TRANSACTION_CANCELLED));
  }

  private void cancelWith(FDBException error) {
    CompletableFuture<Void> commitInFlight;
    synchronized (this) {
      // A committed transaction can still be cancelled (or time out): its calls keep failing 2017,
      // which FoundationDB checks first, but onError then answers the cancellation.
      if (closed || state == State.CANCELLED) {
        return;
      }
      state = State.CANCELLED;
      cancelError = error;
      commitInFlight = commit.cancel(error);
      error = cancelError;
      // Its watches are not failed here: FoundationDB's wait for the value they watch (and fire on
      // the transaction's own change) until the transaction is reset or closed (1025).
      commit.versionstamp().completeExceptionally(error);
    }
    if (commitInFlight != null) {
      commitInFlight.completeExceptionally(error);
    }
  }

  /** The error a commit withdrawn while held for lack of disk space fails with. */
  FDBException heldError(FDBException error, String lowOnSpace) {
    return context.heldError.apply(error, lowOnSpace);
  }

  private void scheduleTimeout() {
    long elapsedMillis = (System.nanoTime() - creationNanos) / 1_000_000L;
    long remaining = Math.max(0, settings.timeoutMillis - elapsedMillis);
    timeoutTask = engine.scheduleOnTimer(TimeUnit.MILLISECONDS.toNanos(remaining),
        () -> cancelWith(FdbErrors.error(FdbErrors.TRANSACTION_TIMED_OUT)));
  }

  private synchronized void setOption(int code, byte[] param) {
    ensureOpen();
    if (deferred != null) {
      // The C client sets options on the network thread, where a deferred error skips every call.
      return;
    }
    switch (code) {
      case 51:
        if (readVersion >= 0 || !writes.isEmpty() || !watches.isEmpty()) {
          throw FdbErrors.error(FdbErrors.CLIENT_INVALID_OPERATION);
        }
        settings.rywDisabled = true;
        break;
      case 500:
        settings.timeoutMillis = OptionParams.intParam(param, 0, Integer.MAX_VALUE);
        if (timeoutTask != null) {
          timeoutTask.cancel(false);
          timeoutTask = null;
        }
        if (settings.timeoutMillis > 0) {
          scheduleTimeout();
        }
        break;
      default:
        settings.set(code, param);
        break;
    }
  }

  // ---------------------------------------------------------------- contexts and lifecycle

  @Override
  public <T> T run(Function<? super Transaction, T> retryable) {
    return retryable.apply(this);
  }

  @Override
  public <T> CompletableFuture<T> runAsync(Function<? super Transaction, ? extends CompletableFuture<T>> retryable) {
    try {
      return retryable.apply(this).thenApply(Function.identity());
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  @Override
  public void close() {
    boolean commitHeld;
    synchronized (this) {
      commitHeld = !closed && commit.isHeld();
    }
    if (commitHeld) {
      // Destroying a transaction cancels its outstanding commit (FoundationDB); one still held back
      // is withdrawn and never happens, rather than committing once the engine lets it through.
      cancelWith(FdbErrors.error(FdbErrors.TRANSACTION_CANCELLED));
    }
    synchronized (this) {
      if (closed) {
        return;
      }
      if (state == State.ACTIVE || state == State.CANCELLED) {
        watches.failAll(FdbErrors.error(FdbErrors.TRANSACTION_CANCELLED));
      }
      commit.close();
      closed = true;
      if (timeoutTask != null) {
        timeoutTask.cancel(false);
      }
    }
  }
}
