package io.github.fdbcoord.embedded.engine;

import io.github.fdbcoord.embedded.log.CommitLog;
import io.github.fdbcoord.embedded.log.LogFailedException;
import io.github.fdbcoord.embedded.log.LogStalledException;
import io.github.fdbcoord.embedded.log.LogRecordWriter;
import io.github.fdbcoord.embedded.resolver.ConflictHistory;
import io.github.fdbcoord.embedded.storage.RocksStorage;
import io.github.fdbcoord.embedded.storage.StorageScrub;
import io.github.fdbcoord.embedded.storage.VersionedStore;

import com.apple.foundationdb.FDBException;
import io.github.fdbcoord.fdb.FdbErrors;
import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * One embedded database's version clock and commit pipeline (FoundationDB's sequencer, commit proxy and
 * resolver in one): versions, the multi-version data, the resolver's conflict history, watches and (when
 * durable) the commit log. Transactions read lock-free at their read version; commits are resolved and
 * applied one at a time under {@link #commitLock}. In durable mode an {@link Applier} moves what left the
 * MVCC window into the storage, and commits wait ({@link HeldCommits}) while it lags or the
 * {@link DiskSpaceGate} is closed.
 */
public final class Engine implements TransactionEngine, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Engine.class);
  /** FoundationDB's MVCC window and maximum transaction life: 5 seconds at 1,000,000 versions/s. */
  static final long MAX_READ_TRANSACTION_LIFE_VERSIONS = 5_000_000L;
  /** GRV advances an idle database's version only past this much clock drift, to spare the lock. */
  private static final long IDLE_ADVANCE_VERSIONS = 1_000L;

  private final VersionedStore store;
  private final Watches watches = new Watches();
  private final CommitWrites commitWrites;
  private final ScheduledExecutorService timer;
  private final long readLatencyNanos;
  private final long commitLatencyNanos;
  private final ConflictHistory history = new ConflictHistory();
  private final ReentrantLock commitLock = new ReentrantLock();
  private final long baseVersion;
  private final long baseNanos;
  private final CommitLog log;
  private final EngineConfig config;
  /** The state below the MVCC window (durable mode), or null in memory. */
  private final RocksStorage storage;
  /** Durable mode only (else null): moves versions that left the MVCC window into the storage. */
  private final Applier applier;
  /** Durable mode only (else null). */
  private final DiskSpaceGate space;
  /** Durable mode with a scrub interval only (else null). */
  private final StorageScrub scrub;
  private final HeldCommits held = new HeldCommits(req -> commitNow(req, false));
  private final BooleanSupplier mayRelease = () -> !mustHold();
  private final BooleanSupplier releaseAll = () -> true;
  /** Newest version whose commit is applied and (when durable) on disk: what new readers see. */
  private volatile long visibleVersion;
  /** Newest version handed to a commit or to an idle advance. Guarded by commitLock. */
  private long lastAssigned;
  /** Completes when everything assigned so far is durable (null in memory). Guarded by commitLock. */
  private CompletableFuture<Void> lastDurable = CompletableFuture.completedFuture(null);
  private volatile FDBException failure;
  private volatile boolean closed;

  Engine(EngineConfig config, VersionedStore store, CommitLog log, long recoveredVersion) {
    this.store = store;
    this.commitWrites = new CommitWrites(store, watches);
    this.log = log;
    this.config = config;
    this.storage = store.base();
    this.readLatencyNanos = config.readLatencyNanos();
    this.commitLatencyNanos = config.commitLatencyNanos();
    // A durable store goes on from the wall clock (a version stays a time across restarts, as its TTL deadlines
    // need); one in memory starts near 0, as a new FoundationDB cluster's versions do, so code that subtracts a
    // retention from a version meets negative bounds in tests as it does on a fresh cluster.
    long base = log == null ? 1 : System.currentTimeMillis() * 1000L;
    this.baseVersion = Math.max(recoveredVersion + 1, base);
    this.baseNanos = System.nanoTime();
    this.visibleVersion = Math.max(recoveredVersion, baseVersion);
    this.lastAssigned = visibleVersion;
    ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, r -> {
      Thread th = new Thread(r, "fdb-embedded-timer");
      th.setDaemon(true);
      return th;
    });
    t.setRemoveOnCancelPolicy(true);
    this.timer = t;
    if (storage != null) {
      List<Path> watched = new ArrayList<>();
      watched.add(config.dataDirectory());
      if (!config.storageDirectory().equals(config.dataDirectory())) {
        watched.add(config.storageDirectory());
      }
      space = new DiskSpaceGate(watched, config.minFreeSpaceBytes(), config.files(), config.storageDirectory(),
          storage, log);
      space.check();
      applier = new Applier(this, commitLock, store, log, space, config);
      // Commits answered "unknown" while the log was out of space become visible once written after all.
      log.onDurableAfterStall(this::advanceVisible);
      applier.start();
      scrub = config.scrubIntervalNanos() > 0
          ? new StorageScrub(storage, config.scrubIntervalNanos(), config.scrubBytesPerSecond()) : null;
    } else {
      space = null;
      applier = null;
      scrub = null;
    }
  }

  /** The version clock: about 1,000,000 versions per second. */
  long clock() {
    return baseVersion + (System.nanoTime() - baseNanos) / 1000L;
  }

  @Override
  public boolean tooOld(long readVersion) {
    return clock() - readVersion > MAX_READ_TRANSACTION_LIFE_VERSIONS
        // While the log is out of space nothing newer can become visible: the newest visible version
        // stays readable however long that lasts (the window keeps what it needs: nothing is committed).
        && !(readVersion >= visibleVersion && log != null && log.stalledBecause() != null);
  }

  long oldestReadable() {
    return clock() - MAX_READ_TRANSACTION_LIFE_VERSIONS;
  }

  @Override
  public long visibleVersion() {
    return visibleVersion;
  }

  @Override
  public byte[] get(byte[] key, long version) {
    return store.get(key, version);
  }

  @Override
  public VersionedStore.Cursor cursor(byte[] begin, byte[] end, boolean reverse, long version) {
    return store.cursor(begin, end, reverse, version);
  }

  @Override
  public long readLatencyNanos() {
    return readLatencyNanos;
  }

  @Override
  public long commitLatencyNanos() {
    return commitLatencyNanos;
  }

  @Override
  public FDBException failure() {
    return failure;
  }

  boolean isClosed() {
    return closed;
  }

  /** Throws what every operation fails with once the engine is closed or has failed. */
  public void checkUsable() {
    if (closed) {
      throw FdbErrors.error(FdbErrors.OPERATION_CANCELLED);
    }
    FDBException f = failure;
    if (f != null) {
      throw f;
    }
  }

  /**
   * A read version: the newest visible version. When nothing is being committed the version moves
   * on with the clock, as FoundationDB's does, so an idle database's readers are not "too old".
   */
  @Override
  public long grantReadVersion() {
    checkUsable();
    long visible = visibleVersion;
    long now = clock();
    if (now - visible > IDLE_ADVANCE_VERSIONS && commitLock.tryLock()) {
      try {
        if (lastAssigned == visibleVersion && lastDurable.isDone()) {
          long v = Math.max(now, lastAssigned);
          lastAssigned = v;
          visibleVersion = v;
          return v;
        }
      } finally {
        commitLock.unlock();
      }
    }
    return visible;
  }

  /**
   * Starts a backup into {@code target} (see {@link Backup}): once every commit acknowledged so far
   * is durable, the rest runs on {@code executor}. Commits go on meanwhile. The future fails with
   * {@link IllegalStateException} for an engine in memory, closed or failed, and with
   * {@link IllegalArgumentException} for a target that is not empty or lies inside the data directory.
   */
  public CompletableFuture<Backup.Result> backup(Path target, Executor executor) {
    if (log == null) {
      return CompletableFuture.failedFuture(new IllegalStateException(
          "the database is in memory: there is no data directory to back up"));
    }
    CompletableFuture<Void> durable;
    long acknowledged;
    Path checked;
    try {
      checkUsable();
      checked = Backup.prepareTarget(target, config);
    } catch (FDBException e) {
      return CompletableFuture.failedFuture(new IllegalStateException("the database cannot be backed up: "
          + e.getMessage(), e));
    } catch (IllegalArgumentException e) {
      return CompletableFuture.failedFuture(e);
    } catch (IOException e) {
      return CompletableFuture.failedFuture(new UncheckedIOException("cannot create the backup directory "
          + target + ": " + e.getMessage(), e));
    }
    commitLock.lock();
    try {
      // Every commit acknowledged before now has a version at or below this one.
      acknowledged = lastAssigned;
      durable = lastDurable;
    } finally {
      commitLock.unlock();
    }
    return durable.thenApplyAsync(x -> Backup.write(checked, acknowledged, log, storage), executor);
  }

  /** The most watches the database allows at once (FoundationDB's MAX_WATCHES database option). */
  public void setMaxWatches(int max) {
    watches.setMaxWatches(max);
  }

  @Override
  public boolean reserveWatch() {
    return watches.reserve();
  }

  @Override
  public void unreserveWatch() {
    watches.unreserve();
  }

  @Override
  public CompletableFuture<CommitResult> commit(CommitRequest req) {
    boolean readOnly = req.readOnly();
    // Behind commits already held, in order, so that a steady stream cannot starve them.
    if (!readOnly && storage != null && (!held.isEmpty() || mustHold())) {
      CompletableFuture<CommitResult> commit = held.hold(req);
      if (closed || failure != null) {
        // The applier may have stopped before this commit was queued: nothing would release it.
        releaseHeldCommits(false);
      }
      return commit;
    }
    return commitNow(req, readOnly);
  }

  private CompletableFuture<CommitResult> commitNow(CommitRequest req, boolean readOnly) {
    List<Watches.Watch> fired = new ArrayList<>();
    CompletableFuture<Void> durable;
    long version;
    VersionedStore.Chain[] prepared = readOnly ? null : prepare(req.writes);
    lockForCommit();
    try {
      checkUsable();
      if (readOnly) {
        // Nothing to resolve or log: FoundationDB answers a read-only commit without the cluster.
        registerWatches(req.watches, fired);
        durable = null;
        version = -1;
      } else {
        List<byte[]> reads = req.readConflicts;
        // FoundationDB's resolver finds only a transaction with read conflict ranges too old; its client
        // gives every commit whose reads miss its writes a self-conflict range (NativeAPI.actor.cpp,
        // commitMutations: makeSelfConflicting unless causalWriteRisky), so only a blind write with
        // CAUSAL_WRITE_RISKY commits whatever the age of its read version. A read version the commit
        // took itself is as fresh as FoundationDB's (taken after throttling, which here is a hold).
        boolean checkedForAge = !reads.isEmpty() || !(req.causalWriteRisky || req.readVersionAtCommit);
        if (checkedForAge && (tooOld(req.readVersion) || !history.canCheck(req.readVersion))) {
          throw FdbErrors.error(FdbErrors.TRANSACTION_TOO_OLD);
        }
        for (int i = 0; i < reads.size(); i += 2) {
          if (history.conflicts(reads.get(i), reads.get(i + 1), req.readVersion)) {
            throw FdbErrors.error(FdbErrors.NOT_COMMITTED);
          }
        }
        version = Math.max(lastAssigned + 1, clock());
        lastAssigned = version;
        List<byte[]> writes = req.writeConflicts;
        for (int i = 0; i < writes.size(); i += 2) {
          history.write(writes.get(i), writes.get(i + 1), version);
        }
        LogRecordWriter record = log == null ? null : new LogRecordWriter();
        try {
          commitWrites.apply(req, prepared, version, oldestReadable(), record, fired);
        } catch (RocksStorage.StorageFailure e) {
          // A read of the storage (a range clear's keys, an atomic operation's value) failed halfway through
          // the apply: the window holds part of a commit the log never will, so no later commit may follow.
          stop("storage", e);
          throw storageError(e);
        }
        registerWatches(req.watches, fired);
        if (log == null) {
          visibleVersion = version;
          durable = null;
        } else {
          byte[] changes = record.toByteArray();
          durable = appendToLog(version, changes);
          applier.enqueue(version, changes);
        }
        maybeMaintain(version);
      }
    } catch (FDBException e) {
      return CompletableFuture.failedFuture(e);
    } finally {
      commitLock.unlock();
      if (prepared != null) {
        for (VersionedStore.Chain c : prepared) {
          store.unpin(c);
        }
      }
    }
    CommitResult result = new CommitResult(version, fired);
    if (durable == null) {
      watches.fire(fired);
      return CompletableFuture.completedFuture(result);
    }
    return durable.thenApply(v -> {
      watches.fire(fired);
      return result;
    });
  }

  /**
   * Commit critical sections last a few microseconds: spinning briefly before parking avoids a
   * park/unpark round trip (far longer than the wait) when two cores commit at once.
   */
  private void lockForCommit() {
    for (int i = 0; i < 200; i++) {
      if (commitLock.tryLock()) {
        return;
      }
      Thread.onSpinWait();
    }
    commitLock.lock();
  }

  /**
   * Stops the engine: every later operation fails with what failed first (a failed log append and the
   * applier's next manifest write report one failure, whichever thread meets it first).
   */
  void stop(String what, Throwable cause) {
    synchronized (this) {
      if (failure != null) {
        return;
      }
      failure = new FDBException("Embedded engine's " + what + " failed: " + cause.getMessage(),
          FdbErrors.INTERNAL_ERROR);
    }
    LOG.error("embedded engine stopped: its " + what + " failed", cause);
    releaseHeldCommits(false);
  }

  /**
   * The error a read (or a commit) gets when the storage failed under it: 1522 ({@code file_corrupt}) when
   * a file is damaged, else 1510 ({@code io_error}); neither is retryable, and the message names the file.
   */
  public static FDBException storageError(RocksStorage.StorageFailure failure) {
    int code = failure.damaged() ? FdbErrors.FILE_CORRUPT : FdbErrors.IO_ERROR;
    return new FDBException(FdbErrors.message(code) + ": " + failure.getMessage(), code);
  }

  /** Passes the background scrub completed (0 when it is off). */
  public long scrubPasses() {
    return scrub == null ? 0 : scrub.passes();
  }

  /** The first damage found in the storage's files (by a read, a write or the scrub), or null. */
  public String storageDamage() {
    RocksStorage.StorageFailure d = storage == null ? null : storage.damage();
    return d == null ? null : d.getMessage();
  }

  private CompletableFuture<Void> appendToLog(long version, byte[] payload) {
    CompletableFuture<Void> appended = log.append(version, payload);
    CompletableFuture<Void> visible = appended.handle((v, t) -> {
      if (FdbErrors.unwrap(t) instanceof LogStalledException stalled) {
        // The log keeps the record and writes it once space is back: the commit may yet happen.
        throw new FDBException(FdbErrors.message(FdbErrors.COMMIT_UNKNOWN_RESULT) + ": " + stalled.getMessage()
            + "; new commits wait until then", FdbErrors.COMMIT_UNKNOWN_RESULT);
      }
      if (FdbErrors.unwrap(t) instanceof LogFailedException refused) {
        // The log had failed before this record reached it, whichever thread met that failure and
        // whether or not the engine has stopped yet: this commit did not happen, as none after the stop.
        stop("commit log", refused.getCause());
        throw failure;
      }
      if (t != null) {
        // Later operations fail for good; this commit may be on disk all the same and recovered
        // on restart, so its own result is unknown, as FoundationDB reports such a commit.
        stop("commit log", t);
        throw FdbErrors.error(FdbErrors.COMMIT_UNKNOWN_RESULT);
      }
      advanceVisible(version);
      return null;
    });
    lastDurable = visible;
    return visible;
  }

  /**
   * Whether new commits wait: the storage lags too far behind, or the disk is low on space (or the log has
   * taken what the last disk space check allowed it); FoundationDB's ratekeeper throttles clients for both.
   * Never once the engine is closed or failed: those commits fail.
   */
  private boolean mustHold() {
    return (space.lowOnSpace() != null || space.appendBudgetSpent() || log.stalledBecause() != null
        || applier.outOfSpace() != null || applier.lagging()) && !closed && failure == null;
  }

  @Override
  public boolean isHeld(CompletableFuture<CommitResult> commit) {
    return HeldCommits.isHeld(commit);
  }

  @Override
  public boolean withdraw(CompletableFuture<CommitResult> commit, Throwable why) {
    return held.withdraw(commit, why);
  }

  /**
   * Why commits are held back for lack of disk space (which directory, how much is free), or null.
   * Storage lag is not reported: it holds commits for milliseconds at a time.
   */
  @Override
  public String lowOnSpace() {
    if (space == null || closed || failure != null) {
      // Commits then fail rather than wait.
      return null;
    }
    IOException stall = log.stalledBecause();
    if (stall != null) {
      return "the commit log is out of disk space (" + stall.getMessage() + "); it writes the commits answered"
          + " commit_unknown_result once space is freed";
    }
    String storageFull = applier.outOfSpace();
    return storageFull != null ? storageFull : space.lowOnSpace();
  }

  /**
   * Lets held commits through, oldest first, while the storage keeps up ({@code whileCaughtUp}) or
   * all of them (the engine closed or failed: each then fails as any new commit would).
   */
  void releaseHeldCommits(boolean whileCaughtUp) {
    held.release(whileCaughtUp ? mayRelease : releaseAll);
  }

  /** Heap and storage figures for tests and benchmarks: window chains. */
  long windowChains() {
    return store.windowChains();
  }

  private void advanceVisible(long version) {
    // The log completes appends in order, but be monotonic regardless.
    synchronized (this) {
      if (version > visibleVersion) {
        visibleVersion = version;
      }
    }
  }

  private void registerWatches(List<Watches.Watch> requested, List<Watches.Watch> fired) {
    if (requested == null) {
      return;
    }
    for (Watches.Watch w : requested) {
      Watches.Watch now = watches.register(w, store.latest(w.key));
      if (now != null) {
        fired.add(now);
      }
    }
  }

  /** Finds or creates the chains a commit writes, before the commit lock is taken. */
  private VersionedStore.Chain[] prepare(TreeMap<byte[], PendingWrite> writes) {
    if (writes == null) {
      return new VersionedStore.Chain[0];
    }
    VersionedStore.Chain[] chains = new VersionedStore.Chain[writes.size()];
    store.prepareAll(writes.keySet(), chains);
    return chains;
  }

  /** Drops resolver epochs and tombstones that fell out of the MVCC window (cheap: oldest first). */
  private void maybeMaintain(long version) {
    long oldest = version - MAX_READ_TRANSACTION_LIFE_VERSIONS;
    history.forgetBefore(oldest);
    // Below a durable window a cleared key stays until the storage holds its clear.
    store.sweepTombstones(storage == null ? oldest : Math.min(oldest, storage.durableVersion()));
  }

  @Override
  public void schedule(long nanos, Executor executor, Runnable task) {
    timer.schedule(() -> executor.execute(task), nanos, TimeUnit.NANOSECONDS);
  }

  @Override
  public ScheduledFuture<?> scheduleOnTimer(long nanos, Runnable task) {
    return timer.schedule(task, nanos, TimeUnit.NANOSECONDS);
  }

  /** Waits for outstanding durable commits, fails held commits and pending watches, and closes the storage and log. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    CompletableFuture<Void> pending;
    commitLock.lock();
    try {
      closed = true;
      pending = lastDurable;
    } finally {
      commitLock.unlock();
    }
    releaseHeldCommits(false);
    pending.exceptionally(t -> null).join();
    watches.failAll();
    timer.shutdownNow();
    if (scrub != null) {
      scrub.close();
    }
    if (applier != null) {
      applier.close();
    }
    if (log != null) {
      log.close();
    }
    store.close();
  }
}
