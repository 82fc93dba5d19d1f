package io.github.fdbcoord.embedded.storage;

import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Reads every block of the storage's table files in the background, one pass per interval, so that damage
 * is found before a read needs the data (RocksDB checks a block's checksum only when it reads it). Damage is
 * reported as a read meeting it would report it ({@link RocksStorage#damage()}, logged once). A pass reads
 * one file at a time at full speed, then pauses so that the pass reads at most {@code bytesPerSecond} on
 * average: other reads and compactions share the disk meanwhile.
 */
public final class StorageScrub implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(StorageScrub.class);

  private final RocksStorage storage;
  private final long intervalNanos;
  private final long bytesPerSecond;
  private final Thread thread;
  private final Object wake = new Object();
  private final AtomicLong passes = new AtomicLong();
  private volatile boolean stopped;

  /** Starts scrubbing {@code storage} every {@code intervalNanos}, the first pass one interval from now. */
  public StorageScrub(RocksStorage storage, long intervalNanos, long bytesPerSecond) {
    if (intervalNanos <= 0 || bytesPerSecond <= 0) {
      throw new IllegalArgumentException("scrub interval and rate must be positive");
    }
    this.storage = storage;
    this.intervalNanos = intervalNanos;
    this.bytesPerSecond = bytesPerSecond;
    this.thread = new Thread(this::run, "fdb-embedded-scrub");
    thread.setDaemon(true);
    thread.setPriority(Thread.MIN_PRIORITY);
    thread.start();
  }

  /** Completed passes over every table file. */
  public long passes() {
    return passes.get();
  }

  private void run() {
    try {
      while (pause(intervalNanos)) {
        long started = System.nanoTime();
        long[] bytesAndDamaged = pass();
        if (bytesAndDamaged == null) {
          return;
        }
        passes.incrementAndGet();
        LOG.debug(String.format("engine storage %s: scrub pass read %d bytes in %d ms, %d damaged files",
            storage.directory(), bytesAndDamaged[0], (System.nanoTime() - started) / 1_000_000, bytesAndDamaged[1]));
      }
    } catch (RuntimeException e) {
      if (!stopped) {
        LOG.warn("engine storage " + storage.directory() + ": the background scrub stopped", e);
      }
    }
  }

  /** One pass: bytes read and damaged files found, or null when the scrub was stopped meanwhile. */
  private long[] pass() {
    long bytes = 0;
    long damaged = 0;
    Map<Path, Long> tables = storage.properties().liveTables();
    for (Map.Entry<Path, Long> table : tables.entrySet()) {
      if (stopped) {
        return null;
      }
      long started = System.nanoTime();
      String problem = StorageFiles.verifyTable(table.getKey());
      if (problem != null) {
        damaged++;
        storage.reportDamagedTable(table.getKey(), problem);
      }
      bytes += table.getValue();
      long due = TimeUnit.SECONDS.toNanos(1) * table.getValue() / bytesPerSecond;
      if (!pause(due - (System.nanoTime() - started))) {
        return null;
      }
    }
    return new long[] {bytes, damaged};
  }

  /** Waits {@code nanos} (or not at all when not positive); false once the scrub is stopped. */
  private boolean pause(long nanos) {
    long until = System.nanoTime() + nanos;
    synchronized (wake) {
      while (!stopped) {
        long left = until - System.nanoTime();
        if (left <= 0) {
          return true;
        }
        try {
          TimeUnit.NANOSECONDS.timedWait(wake, left);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return false;
        }
      }
    }
    return false;
  }

  /** Stops the scrub and waits for its thread (at most the one file it is reading). */
  @Override
  public void close() {
    stopped = true;
    synchronized (wake) {
      wake.notifyAll();
    }
    try {
      thread.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
