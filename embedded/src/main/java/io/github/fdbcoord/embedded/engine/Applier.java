package io.github.fdbcoord.embedded.engine;

import io.github.fdbcoord.embedded.log.CommitLog;
import io.github.fdbcoord.embedded.log.LogRecordWriter;
import io.github.fdbcoord.embedded.log.OutOfSpace;
import io.github.fdbcoord.embedded.storage.RocksStorage;
import io.github.fdbcoord.embedded.storage.VersionedStore;

import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Moves durable commits that left the MVCC window into the storage (durable mode only), in version
 * order, then drops them from the window; flushes the storage and truncates the log behind it; checks
 * the free disk space and records the newest acknowledged version in the log's manifest. One thread.
 */
final class Applier {
  private static final Logger LOG = LoggerFactory.getLogger(Applier.class);
  /** Versions stay in memory this long past the MVCC window before they move to the storage. */
  private static final long APPLY_LAG_VERSIONS = 1_000_000L;
  /**
   * Commits wait while the oldest commit not yet in the storage is older than this: the applier
   * shares the cores with every client, and a window that grows beyond the MVCC window costs heap
   * and collector time on every commit (FoundationDB's ratekeeper throttles on storage lag too).
   */
  private static final long MAX_APPLY_BACKLOG_VERSIONS =
      Engine.MAX_READ_TRANSACTION_LIFE_VERSIONS + APPLY_LAG_VERSIONS + 1_000_000L;
  /** The applier's pause between rounds. */
  private static final long APPLY_INTERVAL_NANOS = 20_000_000L;
  /** Bytes of changes written to the storage in one batch. */
  private static final long APPLY_BATCH_BYTES = 8L << 20;
  /** How often the applier looks at the free disk space (a statfs call). */
  private static final long SPACE_CHECK_INTERVAL_NANOS = 200_000_000L;
  /** How often the log's manifest records the newest acknowledged version (what recovery must find). */
  private static final long MANIFEST_INTERVAL_NANOS = 1_000_000_000L;
  /** How soon a write, flush or manifest that failed for lack of disk space is tried again. */
  private static final long OUT_OF_SPACE_RETRY_NANOS = 1_000_000_000L;
  /** How soon a write the storage refused, rather than make it wait, is tried again (the batch is built anew). */
  private static final long STALL_RETRY_NANOS = 100_000_000L;
  /** Chains evicted per hold of the commit lock. */
  private static final int EVICT_CHUNK = 2048;

  /** The applier's steps that write to disk; one that failed for lack of space holds commits until it succeeds. */
  private enum DiskStep { APPLY, FLUSH, MANIFEST }

  /** One commit's changes, as logged, waiting to be applied to the storage. */
  private record Applied(long version, byte[] changes) {}

  private final Engine engine;
  private final ReentrantLock commitLock;
  private final VersionedStore store;
  private final RocksStorage storage;
  private final CommitLog log;
  private final DiskSpaceGate space;
  private final long compactAfterLogBytes;
  private final long maxUnappliedBytes;
  /** Null outside tests. */
  private final ApplyObserver observer;
  /** Durable commits not yet in the storage, oldest first. Guarded by commitLock. */
  private final ArrayDeque<Applied> toApply = new ArrayDeque<>();
  /** Bytes of changes in {@link #toApply}: what the window holds beyond the chains themselves. */
  private final AtomicLong toApplyBytes = new AtomicLong();
  /** Version of the oldest commit in {@link #toApply} ({@code Long.MAX_VALUE}: none). Written under commitLock. */
  private volatile long oldestUnapplied = Long.MAX_VALUE;
  private final Thread thread;
  /** A log roll whose records are truncated once the storage holds them, or -1. Applier thread only. */
  private long rolledAt = -1;
  /** The flush and truncation behind {@link #rolledAt} in progress, or null. Applier thread only (and close, after it). */
  private CompletableFuture<Void> truncation;
  /** Why commits are held: a step that failed for lack of disk space, or null. */
  private volatile String outOfSpace;
  /** The step {@link #outOfSpace} names. Applier thread only (and the truncator, before it completes). */
  private DiskStep failedStep;
  /** When {@link #failedStep} is tried again. Applier thread only. */
  private long retryAt;
  /** The storage's last write was refused because RocksDB would have made it wait. Applier thread only. */
  private boolean writesStalled;
  /** When a write the storage refused is tried again. Applier thread only. */
  private long stallRetryAt;
  /** Runs {@link #truncation}s. */
  private final ExecutorService truncator;

  Applier(Engine engine, ReentrantLock commitLock, VersionedStore store, CommitLog log, DiskSpaceGate space,
      EngineConfig config) {
    this.engine = engine;
    this.commitLock = commitLock;
    this.store = store;
    this.storage = store.base();
    this.log = log;
    this.space = space;
    this.compactAfterLogBytes = config.compactAfterLogBytes();
    this.maxUnappliedBytes = config.maxUnappliedBytes();
    this.observer = config.applyObserver();
    this.thread = new Thread(this::applyLoop, "fdb-embedded-storage");
    thread.setDaemon(true);
    this.truncator = Executors.newSingleThreadExecutor(r -> {
      Thread th = new Thread(r, "fdb-embedded-truncate");
      th.setDaemon(true);
      return th;
    });
  }

  void start() {
    thread.start();
  }

  /** Queues a logged commit's changes for the storage. Caller holds the commit lock. */
  void enqueue(long version, byte[] changes) {
    if (toApply.isEmpty()) {
      oldestUnapplied = version;
    }
    toApply.addLast(new Applied(version, changes));
    toApplyBytes.addAndGet(changes.length);
  }

  /** Why commits are held because the storage or the log's manifest could not be written for lack of space, or null. */
  String outOfSpace() {
    return outOfSpace;
  }

  /** A disk step failed for lack of space: commits wait, and it is retried after a pause. Applier thread only. */
  private void ranOutOfSpace(DiskStep step, String what, Throwable e) {
    retryAt = System.nanoTime() + OUT_OF_SPACE_RETRY_NANOS;
    if (failedStep == null) {
      String reason = what + " failed for lack of disk space (" + e.getMessage() + "); retried until space is freed";
      LOG.warn("embedded engine: " + reason + "; new commits wait, reads go on");
      failedStep = step;
      outOfSpace = reason;
    }
  }

  /** {@code step} succeeded: if it was the one that failed for lack of space, commits go on. Applier thread only. */
  private void succeeded(DiskStep step) {
    if (failedStep == step) {
      failedStep = null;
      outOfSpace = null;
      LOG.info("embedded engine: " + step.name().toLowerCase(Locale.ROOT) + " succeeded again; held commits go on");
    }
  }

  /**
   * Whether {@code step} waits for the pause after a failure for lack of space (of any step: RocksDB
   * recovers by itself, and a flush or write every round while it is stopped only gets in its way).
   * Applier thread only.
   */
  private boolean waitingToRetry(DiskStep step) {
    return failedStep != null && System.nanoTime() - retryAt < 0;
  }

  /**
   * Whether the storage lags too far behind: the changes waiting for it and the window's chains live on
   * the heap.
   */
  boolean lagging() {
    return toApplyBytes.get() > maxUnappliedBytes || engine.clock() - oldestUnapplied > MAX_APPLY_BACKLOG_VERSIONS;
  }

  /**
   * The applier: versions older than the MVCC window (and durable in the log) go to the storage in
   * version order, then leave the window; the log is truncated behind what the storage has flushed.
   */
  private void applyLoop() {
    long nextManifest = System.nanoTime();
    long nextSpaceCheck = System.nanoTime() + SPACE_CHECK_INTERVAL_NANOS;
    while (!engine.isClosed()) {
      LockSupport.parkNanos(APPLY_INTERVAL_NANOS);
      if (engine.isClosed()) {
        return;
      }
      try {
        // Also as soon as the log has taken what the last check allowed it: commits wait for this one.
        if (System.nanoTime() - nextSpaceCheck >= 0 || space.appendBudgetSpent()) {
          nextSpaceCheck = System.nanoTime() + SPACE_CHECK_INTERVAL_NANOS;
          space.check();
        }
        applyThrough(engine.clock() - Engine.MAX_READ_TRANSACTION_LIFE_VERSIONS - APPLY_LAG_VERSIONS);
        // Also when nothing was applied: a commit may have queued just as the last ones left.
        engine.releaseHeldCommits(true);
        maybeTruncateLog();
        if (System.nanoTime() - nextManifest >= 0) {
          nextManifest = System.nanoTime() + MANIFEST_INTERVAL_NANOS;
          try {
            log.recordAcknowledged();
            succeeded(DiskStep.MANIFEST);
          } catch (IOException e) {
            if (!OutOfSpace.is(e)) {
              throw e;
            }
            ranOutOfSpace(DiskStep.MANIFEST, "writing the commit log's manifest", e);
          }
        }
      } catch (IOException e) {
        // The applier's I/O errors are the log's (its manifest, roll or truncation).
        engine.stop("commit log", e);
        return;
      } catch (RuntimeException e) {
        engine.stop("storage " + storage.directory(), e);
        return;
      }
    }
  }

  /** Applies every durable commit up to {@code target} to the storage and drops it from the window. */
  private void applyThrough(long target) {
    if (waitingToRetry(DiskStep.APPLY) || (writesStalled && System.nanoTime() - stallRetryAt < 0)) {
      return;
    }
    applyNow(target);
  }

  /** {@link #applyThrough}, also during the pause after a failure for lack of space (the close's last try). */
  private void applyNow(long target) {
    while (true) {
      long through = Math.min(target, engine.visibleVersion());
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
      try {
        if (!storage.tryApply(batch, version)) {
          // RocksDB stops (or slows) writes until its compactions catch up, which may wait for disk space:
          // tried again next round; meanwhile the backlog grows and holds commits as any lag does.
          requeue(ready, bytes);
          stallRetryAt = System.nanoTime() + STALL_RETRY_NANOS;
          if (!writesStalled) {
            writesStalled = true;
            LOG.warn("embedded engine: the storage " + storage.directory() + " makes writes wait (" + storage.stallCause()
                + "); commits wait once the backlog exceeds its limits");
          }
          return;
        }
        if (writesStalled) {
          writesStalled = false;
          LOG.info("embedded engine: the storage " + storage.directory() + " takes writes again");
        }
      } catch (RuntimeException e) {
        if (!RocksStorage.outOfSpace(e)) {
          throw e;
        }
        // Nothing of the batch was written (one atomic write): it goes back to the front of the queue.
        requeue(ready, bytes);
        ranOutOfSpace(DiskStep.APPLY, "writing to the storage " + storage.directory(), e);
        return;
      }
      succeeded(DiskStep.APPLY);
      if (observer != null) {
        observer.reached(ApplyStep.WRITTEN, version, bytes >= APPLY_BATCH_BYTES);
      }
      evict(version, keys, ranges);
      // A long catch-up lets held commits through as soon as it is back within the limits.
      engine.releaseHeldCommits(true);
      if (bytes < APPLY_BATCH_BYTES) {
        return;
      }
    }
  }

  /** Puts a batch that could not be written back at the front of the queue, in order. */
  private void requeue(List<Applied> batch, long bytes) {
    commitLock.lock();
    try {
      for (int i = batch.size() - 1; i >= 0; i--) {
        toApply.addFirst(batch.get(i));
      }
      toApplyBytes.addAndGet(bytes);
      oldestUnapplied = toApply.peekFirst().version;
    } finally {
      commitLock.unlock();
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
  private void maybeTruncateLog() throws IOException {
    if (truncation != null) {
      if (!truncation.isDone()) {
        return;
      }
      try {
        truncation.join();
        succeeded(DiskStep.FLUSH);
      } catch (CompletionException e) {
        Throwable cause = e.getCause();
        truncation = null;
        if (RocksStorage.outOfSpace(cause) || OutOfSpace.is(cause)) {
          // Kept: the same roll is flushed and truncated again after a pause.
          ranOutOfSpace(DiskStep.FLUSH, "flushing the storage " + storage.directory() + " to truncate the log", cause);
          return;
        }
        if (cause instanceof UncheckedIOException io) {
          throw io.getCause();
        }
        throw cause instanceof RuntimeException r ? r : e;
      }
      truncation = null;
      rolledAt = -1;
    }
    if (waitingToRetry(DiskStep.FLUSH)) {
      return;
    }
    if (rolledAt < 0) {
      if (log.bytesSinceSnapshot() < compactAfterLogBytes) {
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
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }, truncator);
    }
  }

  /**
   * Stops the applier (the engine is closed), then (unless the engine failed) moves every durable commit
   * to the storage, flushes it and truncates the log, so that the next open has nothing to replay.
   */
  void close() {
    LockSupport.unpark(thread);
    try {
      thread.join();
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
      if (engine.failure() == null) {
        applyNow(Long.MAX_VALUE);
        storage.flush();
        long rolled = log.rollSegment();
        // Only behind what the storage holds: a write that failed for lack of space left commits in the queue,
        // and the log is then all that holds them.
        long through = Math.min(rolled, storage.durableVersion());
        if (through < rolled) {
          LOG.warn("embedded engine: the storage holds versions through " + through + " of " + rolled
              + " at close (" + outOfSpace + "); the next open replays the rest from the log");
        }
        log.truncateThrough(through);
      }
    } catch (RuntimeException | IOException e) {
      LOG.warn("embedded engine: moving the log into the storage at close failed; the next open replays it", e);
    } finally {
      storage.close();
    }
  }
}
