package io.github.fdbcoord.embedded.engine;

import io.github.fdbcoord.embedded.EmbeddedOptions;
import io.github.fdbcoord.embedded.client.PendingWrite;
import io.github.fdbcoord.embedded.log.CommitLog;
import io.github.fdbcoord.embedded.log.LogRecordWriter;
import io.github.fdbcoord.embedded.resolver.ConflictHistory;
import io.github.fdbcoord.embedded.storage.RocksStorage;
import io.github.fdbcoord.embedded.storage.VersionedStore;

import com.apple.foundationdb.FDBException;
import io.github.fdbcoord.fdb.FdbErrors;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The shared state of one embedded database: versions, the multi-version data, the resolver's
 * conflict history, watches and (when durable) the commit log. Transactions read lock-free at
 * their read version; commits are resolved and applied one at a time under {@link #commitLock}.
 */
public final class Engine implements AutoCloseable {
  private static final io.vertx.core.internal.logging.Logger LOG = io.vertx.core.internal.logging.LoggerFactory.getLogger(Engine.class);
  /** FoundationDB's MVCC window and maximum transaction life: 5 seconds at 1,000,000 versions/s. */
  static final long MAX_READ_TRANSACTION_LIFE_VERSIONS = 5_000_000L;
  public static final int KEY_SIZE_LIMIT = 10_000;
  public static final int SYSTEM_KEY_SIZE_LIMIT = 30_000;
  public static final int VALUE_SIZE_LIMIT = 100_000;
  public static final long TRANSACTION_SIZE_LIMIT = 10_000_000L;
  /** GRV advances an idle database's version only past this much clock drift, to spare the lock. */
  private static final long IDLE_ADVANCE_VERSIONS = 1_000L;

  public final VersionedStore store;
  public final Watches watches = new Watches();
  public final ScheduledExecutorService timer;
  public final EmbeddedOptions options;
  public final long readLatencyNanos;
  public final long commitLatencyNanos;

  private final ConflictHistory history = new ConflictHistory();
  private final ReentrantLock commitLock = new ReentrantLock();
  private final long baseVersion;
  private final long baseNanos;
  private final CommitLog log;
  /** The state below the MVCC window (durable mode), or null in memory. */
  private final RocksStorage storage;
  /** Durable commits not yet in the storage, oldest first. Guarded by commitLock. */
  private final java.util.ArrayDeque<Applied> toApply = new java.util.ArrayDeque<>();
  /** Bytes of changes in {@link #toApply}: what the window holds beyond the chains themselves. */
  private final java.util.concurrent.atomic.AtomicLong toApplyBytes = new java.util.concurrent.atomic.AtomicLong();
  /** Version of the oldest commit in {@link #toApply} ({@code Long.MAX_VALUE}: none). Written under commitLock. */
  private volatile long oldestUnapplied = Long.MAX_VALUE;
  /** Moves versions that left the MVCC window into the storage (durable mode only). */
  private final Thread applier;
  /** A log roll whose records are truncated once the storage holds them, or -1. Applier only. */
  private long rolledAt = -1;
  /** The flush and truncation behind {@link #rolledAt} in progress, or null. Applier only (and close, after it). */
  private CompletableFuture<Void> truncation;
  /** Runs {@link #truncation}s (durable mode only). */
  private final java.util.concurrent.ExecutorService truncator;
  /** Newest version whose commit is applied and (when durable) on disk: what new readers see. */
  private volatile long visibleVersion;
  /** Newest version handed to a commit or to an idle advance. Guarded by commitLock. */
  private long lastAssigned;
  /** Completes when everything assigned so far is durable (null in memory). Guarded by commitLock. */
  private CompletableFuture<Void> lastDurable = CompletableFuture.completedFuture(null);
  private volatile FDBException failure;
  private volatile boolean closed;
  /** Why commits are held for lack of disk space, or null. Written by the applier (and at open). */
  private volatile String lowOnSpace;
  /** The directories whose file systems {@link #checkFreeSpace} looks at (durable mode). */
  private final List<java.nio.file.Path> spaceWatched = new ArrayList<>();
  /** A free-space reading failed and was logged (once). Applier only. */
  private boolean spaceUnreadable;

  /** One commit's changes, as logged, waiting to be applied to the storage. */
  private record Applied(long version, byte[] changes) {}

  /**
   * A commit held back while the storage lags or the disk is low on space: what its caller waits on.
   * Taken once, either by the applier releasing it or by its caller withdrawing it.
   */
  private static final class HeldCommit extends CompletableFuture<CommitResult> {
    final CommitRequest request;
    private final java.util.concurrent.atomic.AtomicBoolean taken = new java.util.concurrent.atomic.AtomicBoolean();

    HeldCommit(CommitRequest request) {
      this.request = request;
    }

    boolean take() {
      return taken.compareAndSet(false, true);
    }
  }

  /**
   * Commits held back while the storage lags or the disk is low on space (oldest first); the applier
   * lets them through once it has caught up and space is back. A queue rather than a parked thread:
   * the caller is usually a thread of the transactions' executor, which the completions of every
   * other commit need too.
   */
  private final java.util.concurrent.ConcurrentLinkedQueue<HeldCommit> held =
      new java.util.concurrent.ConcurrentLinkedQueue<>();

  Engine(EmbeddedOptions options, VersionedStore store, CommitLog log, long recoveredVersion) {
    this.options = options;
    this.store = store;
    this.log = log;
    this.storage = store.base();
    this.readLatencyNanos = options.readLatency().toNanos();
    this.commitLatencyNanos = options.commitLatency().toNanos();
    this.baseVersion = Math.max(recoveredVersion + 1, System.currentTimeMillis() * 1000L);
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
      spaceWatched.add(options.dataDirectory());
      if (!options.storageDirectory().equals(options.dataDirectory())) {
        spaceWatched.add(options.storageDirectory());
      }
      checkFreeSpace();
      applier = new Thread(this::applyLoop, "fdb-embedded-storage");
      applier.setDaemon(true);
      truncator = java.util.concurrent.Executors.newSingleThreadExecutor(r -> {
        Thread th = new Thread(r, "fdb-embedded-truncate");
        th.setDaemon(true);
        return th;
      });
      applier.start();
    } else {
      applier = null;
      truncator = null;
    }
  }

  /** The version clock: about 1,000,000 versions per second. */
  long clock() {
    return baseVersion + (System.nanoTime() - baseNanos) / 1000L;
  }

  /** Whether a transaction reading at {@code readVersion} is past FoundationDB's 5-second window. */
  public boolean tooOld(long readVersion) {
    return clock() - readVersion > MAX_READ_TRANSACTION_LIFE_VERSIONS;
  }

  long oldestReadable() {
    return clock() - MAX_READ_TRANSACTION_LIFE_VERSIONS;
  }

  public long visibleVersion() {
    return visibleVersion;
  }

  /** Why the engine stopped (its log or storage failed), or null while it works. */
  public FDBException failure() {
    return failure;
  }

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

  /** What a transaction hands over at commit. */
  public static final class CommitRequest {
    public long readVersion;
    /** Flattened [begin, end) pairs. */
    public List<byte[]> readConflicts;
    public List<byte[]> writeConflicts;
    /** Cleared ranges, begin to end, non-overlapping. */
    public TreeMap<byte[], byte[]> clearedRanges;
    public TreeMap<byte[], PendingWrite> writes;
    /** SET_VERSIONSTAMPED_KEY operands with their values: key template (offset suffix included), value. */
    public List<byte[][]> stampedKeys;
    public List<Watches.Watch> watches;
  }

  /** Outcome of a commit, delivered once the commit is durable (or failed). */
  public static final class CommitResult {
    public final long version;
    final List<Watches.Watch> fired;

    CommitResult(long version, List<Watches.Watch> fired) {
      this.version = version;
      this.fired = fired;
    }
  }

  /**
   * Resolves and applies a commit. Returns a future that completes (on the commit log's thread, or
   * at once in memory) once the commit is visible; the caller moves completion to its executor.
   */
  public CompletableFuture<CommitResult> commit(CommitRequest req) {
    boolean readOnly = req.writeConflicts.isEmpty() && req.writes == null && req.clearedRanges == null
        && req.stampedKeys == null;
    // Behind commits already held, in order, so that a steady stream cannot starve them.
    if (!readOnly && storage != null && (!held.isEmpty() || mustHold())) {
      HeldCommit commit = new HeldCommit(req);
      held.add(commit);
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
        // As FoundationDB's resolver: only what a transaction read can be too old to check; a blind
        // write commits whatever the age of its read version.
        if (!reads.isEmpty() && (tooOld(req.readVersion) || !history.canCheck(req.readVersion))) {
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
        apply(req, prepared, version, record, fired);
        registerWatches(req.watches, fired);
        if (log == null) {
          visibleVersion = version;
          durable = null;
        } else {
          byte[] changes = record.toByteArray();
          durable = appendToLog(version, changes);
          if (toApply.isEmpty()) {
            oldestUnapplied = version;
          }
          toApply.addLast(new Applied(version, changes));
          toApplyBytes.addAndGet(changes.length);
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
  private void stop(String what, Throwable cause) {
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

  private CompletableFuture<Void> appendToLog(long version, byte[] payload) {
    CompletableFuture<Void> appended = log.append(version, payload);
    CompletableFuture<Void> visible = appended.handle((v, t) -> {
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

  /** Versions stay in memory this long past the MVCC window before they move to the storage. */
  private static final long APPLY_LAG_VERSIONS = 1_000_000L;
  /**
   * Commits wait while the oldest commit not yet in the storage is older than this: the applier
   * shares the cores with every client, and a window that grows beyond the MVCC window costs heap
   * and collector time on every commit (FoundationDB's ratekeeper throttles on storage lag too).
   */
  private static final long MAX_APPLY_BACKLOG_VERSIONS =
      MAX_READ_TRANSACTION_LIFE_VERSIONS + APPLY_LAG_VERSIONS + 1_000_000L;
  /** The applier's pause between rounds. */
  private static final long APPLY_INTERVAL_NANOS = 20_000_000L;
  /** Bytes of changes written to the storage in one batch. */
  private static final long APPLY_BATCH_BYTES = 8L << 20;
  /** How often the applier looks at the free disk space (a statfs call). */
  private static final long SPACE_CHECK_INTERVAL_NANOS = 200_000_000L;
  /** How often the log's manifest records the newest acknowledged version (what recovery must find). */
  private static final long MANIFEST_INTERVAL_NANOS = 1_000_000_000L;
  /** Chains evicted per hold of the commit lock. */
  private static final int EVICT_CHUNK = 2048;

  /** The applier's steps that crash tests stop a process at (see {@link #applyObserver}). */
  public enum ApplyStep {
    /** A batch is in RocksDB (not flushed); its versions are still in the window. */
    WRITTEN,
    /** One chunk of the batch's chains has left the window. */
    EVICTED
  }

  /** What {@link #applyObserver} is told. */
  @FunctionalInterface
  public interface ApplyObserver {
    /**
     * The applier reached {@code step} for the batch through {@code version}; {@code more}: WRITTEN,
     * another batch follows in this round (the round was split); EVICTED, more chunks follow.
     */
    void reached(ApplyStep step, long version, boolean more);
  }

  /**
   * Test seam, null outside tests: crash tests (run in a child JVM) halt the process at an applier step.
   * One volatile read per batch and per eviction chunk, on the applier thread only.
   */
  public static volatile ApplyObserver applyObserver;

  /**
   * The applier: versions older than the MVCC window (and durable in the log) go to the storage in
   * version order, then leave the window; the log is truncated behind what the storage has flushed.
   */
  private void applyLoop() {
    long nextManifest = System.nanoTime();
    long nextSpaceCheck = System.nanoTime() + SPACE_CHECK_INTERVAL_NANOS;
    while (!closed) {
      java.util.concurrent.locks.LockSupport.parkNanos(APPLY_INTERVAL_NANOS);
      if (closed) {
        return;
      }
      try {
        if (System.nanoTime() - nextSpaceCheck >= 0) {
          nextSpaceCheck = System.nanoTime() + SPACE_CHECK_INTERVAL_NANOS;
          checkFreeSpace();
        }
        applyThrough(clock() - MAX_READ_TRANSACTION_LIFE_VERSIONS - APPLY_LAG_VERSIONS);
        // Also when nothing was applied: a commit may have queued just as the last ones left.
        releaseHeldCommits(true);
        maybeTruncateLog();
        if (System.nanoTime() - nextManifest >= 0) {
          nextManifest = System.nanoTime() + MANIFEST_INTERVAL_NANOS;
          log.recordAcknowledged();
        }
      } catch (java.io.IOException e) {
        // The applier's I/O errors are the log's (its manifest, roll or truncation).
        stop("commit log", e);
        return;
      } catch (RuntimeException e) {
        stop("storage " + storage.directory(), e);
        return;
      }
    }
  }

  /**
   * Whether new commits wait: the storage lags too far behind (the changes waiting for it and the
   * window's chains live on the heap), or the disk is low on space; FoundationDB's ratekeeper
   * throttles clients for both. Never once the engine is closed or failed: those commits fail.
   */
  private boolean mustHold() {
    return (lowOnSpace != null || toApplyBytes.get() > options.maxUnappliedBytes()
        || clock() - oldestUnapplied > MAX_APPLY_BACKLOG_VERSIONS) && !closed && failure == null;
  }

  /** Whether {@code commit} (what {@link #commit} returned) is held back and may still be withdrawn. */
  public static boolean isHeld(CompletableFuture<CommitResult> commit) {
    return commit instanceof HeldCommit h && !h.taken.get();
  }

  /**
   * Withdraws a commit that {@link #commit} is still holding back, as its transaction was cancelled
   * or timed out first: it fails with {@code why} and is never committed. False (nothing done) when
   * {@code commit} was not held or has already been let through.
   */
  public boolean withdraw(CompletableFuture<CommitResult> commit, Throwable why) {
    if (!(commit instanceof HeldCommit h) || !h.take()) {
      return false;
    }
    held.remove(h);
    h.completeExceptionally(why);
    return true;
  }

  /**
   * Why commits are held back for lack of disk space (which directory, how much is free), or null.
   * Storage lag is not reported: it holds commits for milliseconds at a time.
   */
  public String lowOnSpace() {
    return lowOnSpace;
  }

  /**
   * Looks at the free space of the data directory's and the storage's file systems: below {@link
   * EmbeddedOptions#minFreeSpaceBytes} new commits are held until space is freed. Logged when it
   * changes; a directory whose space cannot be read is logged and not held for.
   */
  private void checkFreeSpace() {
    long min = options.minFreeSpaceBytes();
    if (min == 0) {
      return;
    }
    String low = null;
    for (java.nio.file.Path dir : spaceWatched) {
      try {
        long usable = options.files().usableSpace(dir);
        if (usable < min) {
          low = String.format(java.util.Locale.ROOT, "%s has %,d bytes of disk space free, less than minFreeSpaceBytes (%,d)",
              dir, usable, min);
          break;
        }
      } catch (java.io.IOException | RuntimeException e) {
        if (!spaceUnreadable) {
          spaceUnreadable = true;
          LOG.warn("embedded engine: cannot read the free space of " + dir + " (" + e + "); commits are not held for it");
        }
      }
    }
    String was = lowOnSpace;
    lowOnSpace = low;
    if (low != null && was == null) {
      LOG.warn("embedded engine: " + low + ": new commits wait until space is freed (reads go on)");
    } else if (low == null && was != null) {
      LOG.info("embedded engine: disk space is above minFreeSpaceBytes again; held commits go on");
    }
  }

  /**
   * Lets held commits through, oldest first, while the storage keeps up ({@code whileCaughtUp}) or
   * all of them (the engine closed or failed: each then fails as any new commit would).
   */
  private void releaseHeldCommits(boolean whileCaughtUp) {
    HeldCommit commit;
    // The queue first: the applier asks after every batch, almost always with nothing held.
    while (!held.isEmpty() && (!whileCaughtUp || !mustHold())
        && (commit = held.poll()) != null) {
      if (commit.take()) { // else withdrawn by its caller
        release(commit);
      }
    }
  }

  /** Commits a held commit now and hands its outcome to the caller waiting on it. */
  private void release(HeldCommit commit) {
    CompletableFuture<CommitResult> outcome;
    try {
      outcome = commitNow(commit.request, false);
    } catch (RuntimeException e) {
      // This commit's own failure, as it would have reached its caller: not the applier's.
      outcome = CompletableFuture.failedFuture(e);
    }
    outcome.whenComplete((r, t) -> {
      if (t != null) {
        commit.completeExceptionally(t instanceof java.util.concurrent.CompletionException ? t.getCause() : t);
      } else {
        commit.complete(r);
      }
    });
  }

  /** Applies every durable commit up to {@code target} to the storage and drops it from the window. */
  private void applyThrough(long target) {
    while (true) {
      long through = Math.min(target, visibleVersion);
      List<Applied> ready = new ArrayList<>();
      long bytes = 0;
      commitLock.lock();
      try {
        while (!toApply.isEmpty() && toApply.peekFirst().version <= through && bytes < APPLY_BATCH_BYTES) {
          Applied a = toApply.removeFirst();
          toApplyBytes.addAndGet(-a.changes.length);
          ready.add(a);
          bytes += a.changes.length;
        }
        oldestUnapplied = toApply.isEmpty() ? Long.MAX_VALUE : toApply.peekFirst().version;
      } finally {
        commitLock.unlock();
      }
      if (ready.isEmpty()) {
        return;
      }
      RocksStorage.WriteBatchBuilder batch = storage.batch();
      List<byte[]> keys = new ArrayList<>();
      List<byte[]> ranges = new ArrayList<>();
      for (Applied a : ready) {
        LogRecordWriter.replay(a.changes, new LogRecordWriter.Visitor() {
          @Override
          public void set(byte[] key, byte[] value) {
            batch.set(key, value);
            keys.add(key);
          }

          @Override
          public void clear(byte[] key) {
            batch.clear(key);
            keys.add(key);
          }

          @Override
          public void clearRange(byte[] begin, byte[] end) {
            batch.clearRange(begin, end);
            ranges.add(begin);
            ranges.add(end);
          }
        });
      }
      long version = ready.get(ready.size() - 1).version;
      storage.apply(batch, version);
      ApplyObserver observer = applyObserver;
      if (observer != null) {
        observer.reached(ApplyStep.WRITTEN, version, bytes >= APPLY_BATCH_BYTES);
      }
      evict(version, keys, ranges);
      // A long catch-up lets held commits through as soon as it is back within the limits.
      releaseHeldCommits(true);
      if (bytes < APPLY_BATCH_BYTES) {
        return;
      }
    }
  }

  private void evict(long durable, List<byte[]> keys, List<byte[]> ranges) {
    for (int from = 0; from < Math.max(keys.size(), 1); from += EVICT_CHUNK) {
      List<byte[]> chunk = keys.subList(from, Math.min(keys.size(), from + EVICT_CHUNK));
      commitLock.lock();
      try {
        store.evict(durable, chunk, from == 0 ? ranges : List.of());
      } finally {
        commitLock.unlock();
      }
      ApplyObserver observer = applyObserver;
      if (observer != null) {
        observer.reached(ApplyStep.EVICTED, durable, from + EVICT_CHUNK < keys.size());
      }
    }
  }

  /**
   * Once the log has grown past the configured size, rolls it; once the storage holds the rolled
   * version, flushes the storage to its files and truncates the log behind it, on the truncator's
   * thread: a flush waits for RocksDB to write its memtables (a few hundred milliseconds under load),
   * and the applier must keep applying meanwhile or commits wait for it.
   */
  private void maybeTruncateLog() throws java.io.IOException {
    if (truncation != null) {
      if (!truncation.isDone()) {
        return;
      }
      try {
        truncation.join();
      } catch (java.util.concurrent.CompletionException e) {
        Throwable cause = e.getCause();
        if (cause instanceof java.io.UncheckedIOException io) {
          throw io.getCause();
        }
        throw cause instanceof RuntimeException r ? r : e;
      }
      truncation = null;
      rolledAt = -1;
    }
    if (rolledAt < 0) {
      if (log.bytesSinceSnapshot() < options.compactAfterLogBytes()) {
        return;
      }
      commitLock.lock();
      try {
        rolledAt = log.rollSegment();
      } finally {
        commitLock.unlock();
      }
    }
    if (storage.durableVersion() >= rolledAt) {
      long through = rolledAt;
      truncation = CompletableFuture.runAsync(() -> {
        storage.flush();
        try {
          log.truncateThrough(through);
        } catch (java.io.IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      }, truncator);
    }
  }

  /** Heap and storage figures for tests and benchmarks: window chains, queued changes. */
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

  private void apply(CommitRequest req, VersionedStore.Chain[] prepared, long version, LogRecordWriter record,
      List<Watches.Watch> fired) {
    long oldest = oldestReadable();
    boolean watching = !watches.isEmpty();
    if (req.clearedRanges != null) {
      for (Map.Entry<byte[], byte[]> r : req.clearedRanges.entrySet()) {
        byte[] begin = r.getKey();
        byte[] end = r.getValue();
        store.clearRange(begin, end, version, oldest);
        if (record != null) {
          record.clearRange(begin, end);
        }
        if (watching) {
          for (byte[] k : watches.keysIn(begin, end)) {
            watches.changed(k, null, fired);
          }
        }
      }
    }
    if (req.writes != null) {
      byte[] stamp = null;
      int i = 0;
      for (Map.Entry<byte[], PendingWrite> e : req.writes.entrySet()) {
        VersionedStore.Chain chain = prepared[i++];
        PendingWrite w = e.getValue();
        byte[] value;
        switch (w.kind) {
          case KNOWN:
            value = w.value;
            break;
          case DEPENDENT:
            value = w.applyOps(store.latest(chain));
            break;
          default:
            if (stamp == null) {
              stamp = versionstamp(version);
            }
            value = w.applyOps(fillStamp(w.stampOperand, stamp));
            break;
        }
        if (store.put(chain, value, version, oldest)) {
          logged(chain.bytes, value, record, watching, fired);
        }
      }
    }
    if (req.stampedKeys != null) {
      byte[] stamp = versionstamp(version);
      for (byte[][] kv : req.stampedKeys) {
        set(fillStamp(kv[0], stamp), kv[1], version, oldest, record, watching, fired);
      }
    }
  }

  private void set(byte[] key, byte[] value, long version, long oldest, LogRecordWriter record, boolean watching,
      List<Watches.Watch> fired) {
    if (store.put(key, value, version, oldest)) {
      logged(key, value, record, watching, fired);
    }
  }

  /** Records an applied write in the commit's log record and checks the key's watches. */
  private void logged(byte[] key, byte[] value, LogRecordWriter record, boolean watching,
      List<Watches.Watch> fired) {
    if (record != null) {
      if (value == null) {
        record.clear(key);
      } else {
        record.set(key, value);
      }
    }
    if (watching) {
      watches.changed(key, value, fired);
    }
  }

  /** FoundationDB's 10-byte versionstamp: 8-byte big-endian commit version, 2-byte batch order. */
  public static byte[] versionstamp(long version) {
    return ByteBuffer.allocate(10).putLong(version).putShort((short) 0).array();
  }

  /** Replaces the placeholder at the operand's little-endian offset suffix and drops the suffix. */
  public static byte[] fillStamp(byte[] operand, byte[] stamp) {
    int offset = stampOffset(operand);
    byte[] out = new byte[operand.length - 4];
    System.arraycopy(operand, 0, out, 0, out.length);
    System.arraycopy(stamp, 0, out, offset, 10);
    return out;
  }

  /** The placeholder offset of a versionstamped operand, or -1 when it is malformed. */
  public static int stampOffset(byte[] operand) {
    if (operand.length < 4) {
      return -1;
    }
    int n = operand.length;
    int offset = (operand[n - 4] & 0xff) | (operand[n - 3] & 0xff) << 8 | (operand[n - 2] & 0xff) << 16
        | (operand[n - 1] & 0xff) << 24;
    if (offset < 0 || offset + 10 > n - 4) {
      return -1;
    }
    return offset;
  }

  /** Drops resolver epochs and tombstones that fell out of the MVCC window (cheap: oldest first). */
  private void maybeMaintain(long version) {
    long oldest = version - MAX_READ_TRANSACTION_LIFE_VERSIONS;
    history.forgetBefore(oldest);
    // Below a durable window a cleared key stays until the storage holds its clear.
    store.sweepTombstones(storage == null ? oldest : Math.min(oldest, storage.durableVersion()));
  }

  /** Runs {@code task} after {@code nanos} on the timer, then on {@code executor}. */
  public void schedule(long nanos, Executor executor, Runnable task) {
    timer.schedule(() -> executor.execute(task), nanos, TimeUnit.NANOSECONDS);
  }

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
    if (storage != null) {
      closeStorage();
    }
    if (log != null) {
      log.close();
    }
  }

  /**
   * Stops the applier, then (unless the engine failed) moves every durable commit to the storage,
   * flushes it and truncates the log, so that the next open has nothing to replay.
   */
  private void closeStorage() {
    java.util.concurrent.locks.LockSupport.unpark(applier);
    try {
      applier.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (truncation != null) {
      truncation.exceptionally(t -> {
        LOG.warn("embedded engine: truncating the log failed; the next open replays it", t);
        return null;
      }).join();
    }
    truncator.shutdown();
    try {
      if (failure == null) {
        applyThrough(Long.MAX_VALUE);
        storage.flush();
        long rolled = log.rollSegment();
        log.truncateThrough(rolled);
      }
    } catch (RuntimeException | java.io.IOException e) {
      LOG.warn("embedded engine: moving the log into the storage at close failed; the next open replays it", e);
    } finally {
      storage.close();
    }
  }
}
