package io.github.fdbcoord.embedded.log;

import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.text.MessageFormat;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongConsumer;

/**
 * The commit log's group commit: {@link #append} only queues the record. One thread takes everything
 * queued, writes it with one write and one {@code fdatasync} ({@link FileChannel#force(boolean)
 * force(false)}), then hands those futures to a second thread that completes them in order; whatever
 * arrives during the sync goes into the next batch. Batch n+1 is written only after batch n's sync
 * returned; recovery relies on that to tell a torn tail from corruption (see {@link SegmentReader}).
 * Rolls (the start of a new segment) go through the same queue, so a segment ends exactly at the
 * records appended before the roll.
 *
 * <p>A write or sync that fails for lack of disk space ({@link OutOfSpace}) does not fail the log: the
 * writer <em>stalls</em>. The records not yet synced stay queued and their futures fail with
 * {@link LogStalledException} (they may reach the disk later: their callers must treat their outcome as
 * unknown); records appended during the stall are queued the same way. Every {@link #STALL_RETRY_NANOS}
 * the writer writes them again from the end of the last synced batch, overwriting whatever the failed
 * attempt left there (after a failed fsync, Linux may have dropped the dirty pages: only a new write makes
 * them durable), and once that succeeds reports the records durable to {@link #onDurableAfterStall}.
 */
final class GroupCommitWriter {
  private static final Logger LOG = LoggerFactory.getLogger(GroupCommitWriter.class);
  /** How often a stalled writer tries to write its records again. */
  static final long STALL_RETRY_NANOS = 200_000_000L;

  /** A queued record. */
  private record Pending(long version, byte[] payload, CompletableFuture<Void> future) {}

  /** A queued request to start a new segment whose records all have versions >= base. */
  private record Roll(long base, CompletableFuture<Void> future) {}

  private final Path dir;
  private final LogSegments segments;

  // Guarded by mutex: the queue and everything the appending side decides.
  private final ReentrantLock mutex = new ReentrantLock();
  private final Condition queued = mutex.newCondition();
  private ArrayList<Object> queue = new ArrayList<>();
  private long lastVersion;
  private long bytesSinceSnapshot;
  /** Record bytes appended since the writer opened. Written under mutex; read anywhere. */
  private volatile long bytesAppended;
  private boolean closing;
  private IOException failure;
  /** Why the writer is stalled (out of disk space), or null. Written under mutex; read anywhere. */
  private volatile IOException stalled;
  /** Items of a stalled batch, written again before anything queued since. */
  private List<Object> retained = List.of();
  /** The highest version whose future failed with a stall and is not yet synced, or -1. */
  private long stalledThrough = -1;
  /** Told the version through which records whose futures failed with a stall are now durable. */
  private volatile LongConsumer onDurableAfterStall = v -> {};
  /** Rolls not yet covered by a snapshot, by the version {@link #roll()} returned. */
  private final Map<Long, CompletableFuture<Void>> rolls = new HashMap<>();

  // Owned by the sync thread after construction.
  private final SegmentFile file;
  /** A stall's records are not all synced yet (see {@link #resumeIfStalled}). */
  private boolean recovering;
  /** The new segment's listing in the manifest failed for lack of space: written before any record. */
  private boolean manifestStale;
  private LogSegments.Segment current;
  private long nextBatch;

  private final AtomicLong syncs = new AtomicLong();
  private final Thread syncThread;
  /**
   * Completes record futures, in order. Off the sync thread, so the next write+fsync starts while the
   * callers' continuations run (measured in the engine: a third of each sync cycle), and so no caller code
   * ever runs on the thread that touches the file (an interrupt there would close the channel).
   */
  private final ExecutorService completer;
  private volatile Thread completerThread;

  /** Starts writing after what {@code recovery} found, into its last segment; starts the threads. */
  GroupCommitWriter(FileLayer files, Path dir, LogSegments segments, LogRecovery.Recovered recovery) {
    this.dir = dir;
    this.segments = segments;
    this.lastVersion = recovery.version;
    this.bytesSinceSnapshot = recovery.liveBytes;
    this.current = segments.last();
    this.file = new SegmentFile(files, recovery.channel, recovery.writePos);
    this.nextBatch = recovery.nextBatch;
    this.completer = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "commit-log-complete " + dir);
      t.setDaemon(true);
      completerThread = t;
      return t;
    });
    this.syncThread = new Thread(this::syncLoop, "commit-log-sync " + dir);
    this.syncThread.setDaemon(true);
    this.syncThread.start();
  }

  /** See {@link CommitLog#append}. */
  CompletableFuture<Void> append(long version, byte[] payload) {
    Objects.requireNonNull(payload, "payload");
    if (payload.length > LogFormat.MAX_PAYLOAD) {
      throw new IllegalArgumentException("commit log record of " + payload.length + " bytes exceeds the limit of "
          + LogFormat.MAX_PAYLOAD);
    }
    mutex.lock();
    try {
      if (closing) {
        throw new IllegalStateException("commit log " + dir + " is closed");
      }
      if (failure != null) {
        // Decided under the mutex the sync thread sets the failure under: a record is either queued
        // before it (its outcome then unknown) or refused here (then certainly not written).
        return CompletableFuture.failedFuture(new LogFailedException(dir, failure));
      }
      if (version <= lastVersion) {
        throw new IllegalArgumentException("commit log versions must ascend: got " + version + " after "
            + lastVersion);
      }
      lastVersion = version;
      bytesSinceSnapshot += LogFormat.RECORD_HEADER_SIZE + payload.length;
      bytesAppended += LogFormat.RECORD_HEADER_SIZE + payload.length;
      CompletableFuture<Void> future = new CompletableFuture<>();
      enqueue(new Pending(version, payload, future));
      IOException stall = stalled;
      if (stall != null) {
        // Written once space is back, like the stalled batch before it: its outcome is unknown now.
        stalledThrough = version;
        future.completeExceptionally(new LogStalledException(dir, stall));
      }
      return future;
    } finally {
      mutex.unlock();
    }
  }

  /** @throws IllegalStateException once the writer is closed (the directory may belong to another process) */
  void checkOpen() {
    mutex.lock();
    try {
      if (closing) {
        throw new IllegalStateException("commit log " + dir + " is closed");
      }
    } finally {
      mutex.unlock();
    }
  }

  /** See {@link CommitLog#bytesAppended}. */
  long bytesAppended() {
    return bytesAppended;
  }

  /** See {@link CommitLog#bytesSinceSnapshot}. */
  long bytesSinceSnapshot() {
    mutex.lock();
    try {
      return bytesSinceSnapshot;
    } finally {
      mutex.unlock();
    }
  }

  /**
   * Queues the start of a new segment after the last record appended (once per version), and returns
   * that record's version. See {@link CommitLog#rollSegment}.
   */
  long roll() throws IOException {
    mutex.lock();
    try {
      if (closing) {
        throw new IllegalStateException("commit log " + dir + " is closed");
      }
      if (failure != null) {
        throw new IOException("commit log " + dir + " failed earlier: " + describe(failure), failure);
      }
      long version = lastVersion;
      rolls.computeIfAbsent(version, v -> {
        CompletableFuture<Void> done = new CompletableFuture<>();
        enqueue(new Roll(v + 1, done));
        return done;
      });
      bytesSinceSnapshot = 0;
      return version;
    } finally {
      mutex.unlock();
    }
  }

  /**
   * The roll {@link #roll()} queued after {@code version}, completed once every record up to it is synced
   * and its segment closed; null when there is none pending.
   *
   * @throws IllegalStateException if the writer is closed (the directory may belong to another process)
   */
  CompletableFuture<Void> rollAfter(long version) {
    mutex.lock();
    try {
      if (closing) {
        throw new IllegalStateException("commit log " + dir + " is closed");
      }
      return rolls.get(version);
    } finally {
      mutex.unlock();
    }
  }

  /** Forgets the rolls at or below {@code version}: a snapshot or the storage covers them. */
  void forgetRollsThrough(long version) {
    mutex.lock();
    try {
      rolls.keySet().removeIf(v -> v <= version);
    } finally {
      mutex.unlock();
    }
  }

  /** The versions of the pending rolls, for error messages. */
  String pendingRolls() {
    mutex.lock();
    try {
      return rolls.keySet().toString();
    } finally {
      mutex.unlock();
    }
  }

  /** Why the writer is stalled for lack of disk space, or null. */
  IOException stalled() {
    return stalled;
  }

  /** See {@link CommitLog#onDurableAfterStall}. */
  void onDurableAfterStall(LongConsumer listener) {
    onDurableAfterStall = Objects.requireNonNull(listener, "listener");
  }

  /**
   * False once the writer is closing or while it is stalled.
   *
   * @throws IOException if a write or sync failed earlier
   */
  boolean isWorking() throws IOException {
    mutex.lock();
    try {
      if (closing || stalled != null) {
        return false;
      }
      if (failure != null) {
        throw new IOException("commit log " + dir + " failed earlier: " + describe(failure), failure);
      }
      return true;
    } finally {
      mutex.unlock();
    }
  }

  /**
   * Waits for outstanding syncs and completions, stops the threads, trims the segment and writes the
   * manifest (unless a write failed), closes the segment. Returns false when it was closed already.
   */
  boolean close() {
    mutex.lock();
    try {
      if (closing) {
        return false;
      }
      closing = true;
      queued.signalAll();
    } finally {
      mutex.unlock();
    }
    boolean interrupted = false;
    while (true) {
      try {
        syncThread.join();
        completer.shutdown();
        // Called from a continuation of one of our futures: the rest of the queue completes after it returns.
        while (Thread.currentThread() != completerThread && !completer.awaitTermination(1, TimeUnit.MINUTES)) {
          LOG.warn(MessageFormat.format("commit log {0}: still completing futures at close", dir));
        }
        break;
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    try {
      if (failureSoFar() == null) {
        // A cleanly closed segment ends at its last record, so the next open has no zeros to check.
        file.trim();
        segments.writeManifest();
      }
    } catch (IOException e) {
      LOG.warn("commit log " + dir + ": trimming the segment or writing its manifest failed", e);
    }
    try {
      file.close();
    } catch (IOException e) {
      LOG.warn("commit log " + dir + ": closing the segment failed", e);
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    return true;
  }

  /** Number of fsyncs of segment data so far (group commit makes it far lower than the number of records). */
  long syncCount() {
    return syncs.get();
  }

  private void enqueue(Object item) {
    queue.add(item);
    if (queue.size() == 1) {
      queued.signal();
    }
  }

  private void syncLoop() {
    while (true) {
      ArrayList<Object> batch;
      mutex.lock();
      try {
        if (stalled != null && !closing) {
          long wait = STALL_RETRY_NANOS;
          while (wait > 0 && !closing) {
            wait = queued.awaitNanos(wait);
          }
        }
        while (queue.isEmpty() && retained.isEmpty() && !closing) {
          queued.awaitUninterruptibly();
        }
        if (closing && (stalled != null || queue.isEmpty())) {
          // Closing while out of space: what is still unsynced was answered "unknown" and is dropped.
          abandon(retained);
          abandon(queue);
          return;
        }
        batch = new ArrayList<>(retained);
        batch.addAll(queue);
        retained = List.of();
        queue = new ArrayList<>();
      } catch (InterruptedException e) {
        // Nobody interrupts this thread (see completer); if someone does, retry at once.
        continue;
      } finally {
        mutex.unlock();
      }
      process(batch);
    }
  }

  /** Fails the rolls among {@code items} at close: a stalled writer never reaches them. */
  private void abandon(List<Object> items) {
    IOException why = stalled != null ? stalled : new IOException("commit log " + dir + " is closed");
    for (Object item : items) {
      if (item instanceof Roll roll) {
        roll.future.completeExceptionally(new UncheckedIOException(why));
      }
    }
  }

  private void process(List<Object> batch) {
    int synced = 0;
    try {
      IOException earlier = failureSoFar();
      if (earlier != null) {
        throw earlier;
      }
      if (manifestStale) {
        segments.writeManifest();
        manifestStale = false;
      }
      for (int i = 0; i < batch.size(); i++) {
        Object item = batch.get(i);
        if (item instanceof Pending p) {
          file.put(p.version, nextBatch, p.payload);
        } else {
          Roll roll = (Roll) item;
          sync(batch, synced, i);
          synced = i;
          startSegment(roll.base);
          synced = i + 1;
          roll.future.complete(null);
        }
      }
      sync(batch, synced, batch.size());
    } catch (Throwable e) {
      if (e instanceof IOException io && OutOfSpace.is(io)) {
        stall(batch.subList(synced, batch.size()), io);
        return;
      }
      // Whatever went wrong, no future may be left hanging: fail them and refuse further appends.
      IOException failed = e instanceof IOException io ? io : new IOException("commit log sync failed", e);
      mutex.lock();
      try {
        if (failure == null) {
          failure = failed;
          LOG.error("commit log " + dir + " failed; refusing further appends", failed);
        }
        // No longer a stall to wait out: commits held for it go on, and fail as the log does.
        stalled = null;
        failed = failure;
      } finally {
        mutex.unlock();
      }
      List<CompletableFuture<Void>> failedFutures = new ArrayList<>();
      for (int i = synced; i < batch.size(); i++) {
        Object item = batch.get(i);
        if (item instanceof Roll roll) {
          roll.future.completeExceptionally(new UncheckedIOException(failed));
        } else {
          failedFutures.add(((Pending) item).future);
        }
      }
      UncheckedIOException error = new UncheckedIOException(failed);
      completer.execute(() -> failedFutures.forEach(f -> f.completeExceptionally(error)));
    }
  }

  /**
   * Keeps {@code unsynced} to be written again from the end of the last synced batch, and fails the
   * futures of its records with {@link LogStalledException}: they may reach the disk (the failed write may
   * have put part of them there, and the retry will write them).
   */
  private void stall(List<Object> unsynced, IOException why) {
    file.rewindToSynced();
    List<CompletableFuture<Void>> unknown = new ArrayList<>();
    mutex.lock();
    try {
      if (stalled == null) {
        LOG.warn("commit log " + dir + ": out of disk space (" + why.getMessage() + "); commits wait until space is"
            + " freed, and the records being written are written again then");
      }
      stalled = why;
      recovering = true;
      retained = new ArrayList<>(unsynced);
      // Those queued meanwhile too: from now on no record is acknowledged until the stall ends.
      for (List<Object> items : List.of(unsynced, queue)) {
        for (Object item : items) {
          if (item instanceof Pending p && !p.future.isDone()) {
            unknown.add(p.future);
            stalledThrough = Math.max(stalledThrough, p.version);
          }
        }
      }
    } finally {
      mutex.unlock();
    }
    LogStalledException error = new LogStalledException(dir, why);
    completer.execute(() -> unknown.forEach(f -> f.completeExceptionally(error)));
  }

  private IOException failureSoFar() {
    mutex.lock();
    try {
      return failure;
    } finally {
      mutex.unlock();
    }
  }

  /** Writes and syncs the buffered records batch[from, to), then completes their futures. */
  private void sync(List<Object> batch, int from, int to) throws IOException {
    long lastSynced = -1;
    long count = 0;
    for (int i = from; i < to; i++) {
      if (batch.get(i) instanceof Pending p) {
        lastSynced = p.version;
        count++;
      }
    }
    if (count == 0) {
      return;
    }
    file.sync();
    syncs.incrementAndGet();
    nextBatch++;
    segments.recordSynced(current, lastSynced, count);
    resumeIfStalled(lastSynced);
    CompletableFuture<?>[] done = new CompletableFuture<?>[(int) count];
    int k = 0;
    for (int i = from; i < to; i++) {
      if (batch.get(i) instanceof Pending p) {
        done[k++] = p.future;
      }
    }
    completer.execute(() -> {
      for (CompletableFuture<?> f : done) {
        f.complete(null);
      }
    });
  }

  /**
   * After a sync: a stall is over once something was synced; records whose futures failed with it
   * are durable through {@code lastSynced}, which the listener learns before any later future completes.
   */
  private void resumeIfStalled(long lastSynced) {
    if (!recovering) {
      return;
    }
    long unknownThrough;
    mutex.lock();
    try {
      if (stalled != null) {
        stalled = null;
        LOG.info("commit log " + dir + ": disk space is back, records written again; commits go on");
      }
      unknownThrough = stalledThrough;
      if (stalledThrough <= lastSynced) {
        stalledThrough = -1;
        recovering = false;
      }
    } finally {
      mutex.unlock();
    }
    if (unknownThrough >= 0) {
      long durable = Math.min(unknownThrough, lastSynced);
      LongConsumer listener = onDurableAfterStall;
      completer.execute(() -> listener.accept(durable));
    }
  }

  /** Closes the current segment (already synced) and starts one at base; a no-op while the current one is empty. */
  private void startSegment(long base) throws IOException {
    if (current.records == 0) {
      return;
    }
    // Trimmed before the next segment exists: a segment other than the last one ends at its last record.
    file.trim();
    Path path = dir.resolve(LogFormat.segmentName(base));
    // A retry after a stall creates it again.
    file.startNext(path, LogFormat.segmentHeader(base, nextBatch));
    LogSegments.Segment segment = new LogSegments.Segment(path, base, base - 1, 0);
    segments.startNext(current, segment);
    current = segment;
    // Listed only now that its header is durable, and before any record goes into it.
    manifestStale = true;
    segments.writeManifest();
    manifestStale = false;
  }

  /** What a failure says, for the messages of those who meet it later (an exception without a message: its type). */
  static String describe(Throwable failure) {
    return failure.getMessage() != null ? failure.getMessage() : failure.toString();
  }
}
