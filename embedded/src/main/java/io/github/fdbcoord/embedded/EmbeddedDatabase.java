package io.github.fdbcoord.embedded;

import com.apple.foundationdb.FDBException;
import io.github.fdbcoord.embedded.client.DatabaseContext;
import io.github.fdbcoord.embedded.client.EmbeddedTransaction;
import io.github.fdbcoord.embedded.client.OptionParams;
import io.github.fdbcoord.embedded.client.TransactionDefaults;
import io.github.fdbcoord.embedded.client.Unsupported;
import io.github.fdbcoord.embedded.engine.Backup;
import io.github.fdbcoord.embedded.engine.DurableStore;
import io.github.fdbcoord.embedded.engine.Engine;
import io.github.fdbcoord.embedded.engine.Limits;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.DatabaseOptions;
import com.apple.foundationdb.EventKeeper;
import com.apple.foundationdb.KeyRangeArrayResult;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.Tenant;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.tuple.Tuple;
import io.github.fdbcoord.embedded.log.FileLayer;
import io.github.fdbcoord.embedded.log.LogFormat;
import io.github.fdbcoord.embedded.storage.RocksStorage;
import io.github.fdbcoord.fdb.FdbErrors;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * An in-process implementation of fdb-java's {@link Database} with FoundationDB's transaction
 * semantics: serializable transactions at a read version, conflict detection, read-your-writes,
 * atomic operations, versionstamps and watches. In memory by default, durable in a data directory
 * when one is configured. fdb-java's own layers ({@code DirectoryLayer}, {@code Subspace},
 * {@code Tuple}) run on it unchanged.
 *
 * <pre>{@code
 * try (EmbeddedDatabase db = EmbeddedDatabase.inMemory()) {
 *   db.run(tr -> { tr.set(key, value); return null; });
 * }
 * }</pre>
 */
public final class EmbeddedDatabase implements Database {
  private final EmbeddedOptions embeddedOptions;
  private final Engine engine;
  private final Executor executor;
  private final ExecutorService ownedExecutor;
  private final TransactionDefaults defaults = new TransactionDefaults();
  private final DatabaseContext context;
  private final DatabaseOptions options = new DatabaseOptions(this::setOption);

  private EmbeddedDatabase(EmbeddedOptions embeddedOptions, Engine engine, Executor executor,
      ExecutorService ownedExecutor) {
    this.embeddedOptions = embeddedOptions;
    this.engine = engine;
    this.executor = executor;
    this.ownedExecutor = ownedExecutor;
    this.context = new DatabaseContext(this, engine, defaults, CommitsHeldException::new);
  }

  /** A new, empty database in memory. */
  public static EmbeddedDatabase inMemory() {
    return open(EmbeddedOptions.inMemory());
  }

  /**
   * Opens a database. With a data directory, what is stored there is recovered first and every
   * later commit is acknowledged only once it is on disk.
   *
   * @throws java.io.UncheckedIOException when the data directory cannot be opened or recovered
   */
  public static EmbeddedDatabase open(EmbeddedOptions options) {
    ExecutorService owned = null;
    Executor executor = options.executor();
    if (executor == null) {
      owned = defaultExecutor();
      executor = owned;
    }
    Engine engine = DurableStore.open(options.engineConfig());
    return new EmbeddedDatabase(options, engine, executor, owned);
  }

  /**
   * Reads every block of every table file of a closed data directory's storage and checks its checksum: one
   * line per damaged file, naming it and what RocksDB found (empty when nothing is damaged). The commit log
   * is not read: every open checks its records. Reads only: the directory is left as it was.
   *
   * @throws IllegalStateException when the data directory is open (here or in another process)
   * @throws IllegalArgumentException when {@code dataDirectory} holds no engine storage
   * @throws java.io.UncheckedIOException when the storage cannot be opened for reading (the message says why)
   */
  public static List<String> verify(Path dataDirectory) {
    Path storage = dataDirectory.resolve(RocksStorage.DIRECTORY);
    if (!Files.isDirectory(storage)) {
      throw new IllegalArgumentException(dataDirectory + " is not a data directory of the embedded engine: it has no "
          + RocksStorage.DIRECTORY + " subdirectory");
    }
    Path lockFile = dataDirectory.resolve(LogFormat.LOCK_FILE);
    try (Closeable lock = FileLayer.NIO.tryLock(lockFile)) {
      if (lock == null) {
        throw new IllegalStateException("data directory " + dataDirectory + " is in use (" + lockFile
            + " is held): stop the service or the process that has it open, then verify it");
      }
      return RocksStorage.verifyTables(storage);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot verify the data directory " + dataDirectory + ": " + e.getMessage(), e);
    }
  }

  /**
   * The transactions' executor when the options name none: fdb-java's own default, a cached pool of
   * daemon threads. Each hand-off wakes an idle thread (a durable commit's completion is one), which a
   * fork-join pool avoids, but a fork-join pool's workers run the tasks they submit themselves before
   * any submitted from outside: under a steady load of continuations, commit completions and timeouts
   * waited there for up to 70 s ({@code EmbeddedDatabaseTest} checks that they are not starved). A
   * cached pool also never runs out of threads for callbacks that block.
   */
  private static ExecutorService defaultExecutor() {
    AtomicInteger n = new AtomicInteger();
    return Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "fdb-embedded-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
  }

  /** The engine's options, as opened. */
  public EmbeddedOptions embeddedOptions() {
    return embeddedOptions;
  }

  /**
   * Why new commits are being held back right now, or empty: the data directory's (or the storage's)
   * disk has less free space than {@link EmbeddedOptions#minFreeSpaceBytes} (which directory, how much
   * is free), or a write of the commit log, the storage or the log's manifest failed for lack of space
   * (a disk filled faster than the free space is checked). Held commits go on once space is freed; a
   * transaction that times out, is cancelled or is closed while held is never committed. Reads are not
   * affected. Empty once the engine is closed or has stopped (commits then fail rather than wait).
   */
  public Optional<String> commitsHeldBecause() {
    return Optional.ofNullable(engine.lowOnSpace());
  }

  /**
   * The damage found in the storage's files, or empty: the first damaged file a read, a write, the
   * background scrub ({@link EmbeddedOptions#scrubInterval}) or {@link EmbeddedOptions#verifyChecksumsAtOpen}
   * found, with RocksDB's description. Reads of damaged data fail with 1522 ({@code file_corrupt}); once
   * damage is found it stays reported until the database is reopened (docs/embedded-durability.md).
   */
  public Optional<String> storageDamage() {
    return Optional.ofNullable(engine.storageDamage());
  }

  /**
   * Backs the running database up into {@code target} (missing or empty, outside the data directory)
   * on the database's executor; see {@link #backup(Path, Executor)}.
   */
  public CompletableFuture<BackupInfo> backup(Path target) {
    return backup(target, executor);
  }

  /**
   * Backs the running database up into {@code target}, a directory that is missing or empty and lies
   * outside the data directory, while commits go on: a RocksDB checkpoint of the storage (hard links
   * when on the same file system) and the commit log's records after it, then a list of every file with
   * its CRC32C, written last. The backup holds every commit acknowledged before this call. The work
   * runs on {@code executor}; the caller's thread only checks {@code target}. Open the backup with
   * {@link #restore}. The future fails with {@link IllegalStateException} for a database in memory, closed
   * or failed, with {@link IllegalArgumentException} for an unusable {@code target}, and with
   * {@link java.io.UncheckedIOException} when writing fails (what it wrote is removed).
   */
  public CompletableFuture<BackupInfo> backup(Path target, Executor executor) {
    return engine.backup(target, executor).thenApply(EmbeddedDatabase::info);
  }

  /**
   * Makes {@code dataDirectory} (missing or empty) a data directory that opens to exactly the state the
   * backup in {@code backup} holds, after checking each of its files against the list the backup wrote
   * last. Offline: nothing may have {@code dataDirectory} open.
   *
   * @throws IOException naming what is wrong when the backup is incomplete (it never finished) or
   *     damaged (a file missing, changed or added), in which case nothing is left in
   *     {@code dataDirectory}, or when {@code dataDirectory} is not empty
   */
  public static BackupInfo restore(Path backup, Path dataDirectory) throws IOException {
    return info(Backup.restore(backup, dataDirectory));
  }

  private static BackupInfo info(Backup.Result r) {
    return new BackupInfo(r.directory(), r.version(), r.bytes(), r.files(), Duration.ofNanos(r.nanos()));
  }

  /** Passes over the whole storage the background scrub completed since the database opened (0 when it is off). */
  public long scrubPasses() {
    return engine.scrubPasses();
  }

  @Override
  public Transaction createTransaction(Executor e) {
    return createTransaction(e, null);
  }

  @Override
  public Transaction createTransaction(Executor e, EventKeeper eventKeeper) {
    engine.checkUsable();
    return new EmbeddedTransaction(context, e);
  }

  @Override
  public DatabaseOptions options() {
    return options;
  }

  private void setOption(int code, byte[] param) {
    switch (code) {
      case 20:
        engine.setMaxWatches((int) OptionParams.intParam(param, 0, 1_000_000));
        break;
      case 26:
        defaults.snapshotRyw++;
        break;
      case 27:
        defaults.snapshotRyw--;
        break;
      case 500:
        defaults.timeoutMillis = OptionParams.intParam(param, 0, Integer.MAX_VALUE);
        break;
      case 501:
        defaults.retryLimit = OptionParams.intParam(param, -1, Integer.MAX_VALUE);
        break;
      case 502:
        defaults.maxRetryDelayMillis = OptionParams.intParam(param, 0, Integer.MAX_VALUE);
        break;
      case 503:
        defaults.sizeLimit = OptionParams.intParam(param, 32, Limits.TRANSACTION_SIZE_LIMIT);
        break;
      default:
        // Location cache, machine/datacenter ids, tracing: nothing to do in one process.
        break;
    }
  }

  @Override
  public Executor getExecutor() {
    return executor;
  }

  // ---------------------------------------------------------------- retry loops

  @Override
  public <T> T run(Function<? super Transaction, T> retryable, Executor e) {
    Transaction t = createTransaction(e);
    try {
      while (true) {
        try {
          T result = retryable.apply(t);
          t.commit().join();
          return result;
        } catch (RuntimeException err) {
          t = t.onError(err).join();
        }
      }
    } finally {
      t.close();
    }
  }

  @Override
  public <T> T read(Function<? super ReadTransaction, T> retryable, Executor e) {
    return run(retryable, e);
  }

  @Override
  public <T> CompletableFuture<T> runAsync(Function<? super Transaction, ? extends CompletableFuture<T>> retryable,
      Executor e) {
    return new RetryLoop<T>(createTransaction(e), retryable).start();
  }

  @Override
  public <T> CompletableFuture<T> readAsync(
      Function<? super ReadTransaction, ? extends CompletableFuture<T>> retryable, Executor e) {
    return runAsync(retryable, e);
  }

  /**
   * FoundationDB's retry loop: run the body, commit, and on error let {@code onError} decide
   * whether to retry. Iterative, so bodies and commits that complete at once (in memory, with no
   * latency) do not grow the stack.
   */
  private static final class RetryLoop<T> {
    private final Function<? super Transaction, ? extends CompletableFuture<T>> body;
    private final CompletableFuture<T> result = new CompletableFuture<>();
    private Transaction tr;

    RetryLoop(Transaction tr, Function<? super Transaction, ? extends CompletableFuture<T>> body) {
      this.tr = tr;
      this.body = body;
    }

    CompletableFuture<T> start() {
      loop();
      return result.whenComplete((v, t) -> tr.close());
    }

    private void loop() {
      while (true) {
        CompletableFuture<T> attempt = attempt();
        if (!attempt.isDone()) {
          attempt.whenComplete((v, t) -> {
            if (handle(v, t)) {
              loop();
            }
          });
          return;
        }
        T value = null;
        Throwable error = null;
        try {
          value = attempt.join();
        } catch (CompletionException e) {
          error = e.getCause();
        } catch (RuntimeException e) {
          error = e;
        }
        if (!handle(value, error)) {
          return;
        }
      }
    }

    /** One try: the body, then the commit; the value once both succeed. */
    private CompletableFuture<T> attempt() {
      CompletableFuture<T> ran;
      try {
        ran = body.apply(tr);
      } catch (RuntimeException e) {
        ran = CompletableFuture.failedFuture(e);
      }
      if (ran == null) {
        ran = CompletableFuture.failedFuture(new NullPointerException("retryable returned a null future"));
      }
      return ran.thenCompose(v -> tr.commit().thenApply(x -> v));
    }

    /** Returns true when the loop should go on synchronously; false when finished or continuing later. */
    private boolean handle(T value, Throwable error) {
      if (error == null) {
        result.complete(value);
        return false;
      }
      if (error instanceof CompletionException && error.getCause() != null) {
        error = error.getCause();
      }
      if (!(error instanceof RuntimeException)) {
        result.completeExceptionally(error);
        return false;
      }
      CompletableFuture<Transaction> next = tr.onError(error);
      if (next.isDone() && !next.isCompletedExceptionally()) {
        tr = next.join();
        return true;
      }
      next.whenComplete((t, err) -> {
        if (err != null) {
          result.completeExceptionally(err instanceof CompletionException && err.getCause() != null
              ? err.getCause() : err);
        } else {
          tr = t;
          loop();
        }
      });
      return false;
    }
  }

  // ---------------------------------------------------------------- unsupported features

  @Override
  public Tenant openTenant(Tuple tenantName) {
    throw FdbErrors.error(FdbErrors.UNSUPPORTED_OPERATION);
  }

  @Override
  public Tenant openTenant(byte[] tenantName, Executor e) {
    throw FdbErrors.error(FdbErrors.UNSUPPORTED_OPERATION);
  }

  @Override
  public Tenant openTenant(Tuple tenantName, Executor e) {
    throw FdbErrors.error(FdbErrors.UNSUPPORTED_OPERATION);
  }

  @Override
  public Tenant openTenant(byte[] tenantName, Executor e, EventKeeper eventKeeper) {
    throw FdbErrors.error(FdbErrors.UNSUPPORTED_OPERATION);
  }

  @Override
  public Tenant openTenant(Tuple tenantName, Executor e, EventKeeper eventKeeper) {
    throw FdbErrors.error(FdbErrors.UNSUPPORTED_OPERATION);
  }

  @Override
  public double getMainThreadBusyness() {
    return 0;
  }

  @Override
  public CompletableFuture<byte[]> purgeBlobGranules(byte[] b, byte[] e, long v, boolean force, Executor ex) {
    return Unsupported.future();
  }

  @Override
  public CompletableFuture<Void> waitPurgeGranulesComplete(byte[] purgeKey, Executor ex) {
    return Unsupported.future();
  }

  @Override
  public CompletableFuture<Boolean> blobbifyRange(byte[] b, byte[] e, Executor ex) {
    return Unsupported.future();
  }

  @Override
  public CompletableFuture<Boolean> blobbifyRangeBlocking(byte[] b, byte[] e, Executor ex) {
    return Unsupported.future();
  }

  @Override
  public CompletableFuture<Boolean> unblobbifyRange(byte[] b, byte[] e, Executor ex) {
    return Unsupported.future();
  }

  @Override
  public CompletableFuture<KeyRangeArrayResult> listBlobbifiedRanges(byte[] b, byte[] e, int limit, Executor ex) {
    return Unsupported.future();
  }

  @Override
  public CompletableFuture<Long> verifyBlobRange(byte[] b, byte[] e, long v, Executor ex) {
    return Unsupported.future();
  }

  @Override
  public CompletableFuture<Boolean> flushBlobRange(byte[] b, byte[] e, boolean compact, long v, Executor ex) {
    return Unsupported.future();
  }

  @Override
  public CompletableFuture<byte[]> getClientStatus(Executor e) {
    // fdb-java's client status is a JSON object whose "Healthy" says whether the client can work.
    FDBException failure = engine.failure();
    String damage = engine.storageDamage();
    String held = engine.lowOnSpace();
    String status;
    if (failure != null) {
      status = "\"Healthy\":false,\"ErrorCode\":" + failure.getCode() + ",\"Error\":" + jsonString(failure.getMessage());
    } else if (damage != null) {
      status = "\"Healthy\":false,\"StorageDamage\":" + jsonString(damage);
    } else if (held != null) {
      status = "\"Healthy\":false,\"CommitsHeld\":" + jsonString(held);
    } else {
      status = "\"Healthy\":true";
    }
    return CompletableFuture.completedFuture(("{" + status + ",\"Engine\":\"embedded\"}")
        .getBytes(StandardCharsets.UTF_8));
  }

  /** {@code s} as a JSON string literal (the module has no JSON library for one status line). */
  private static String jsonString(String s) {
    StringBuilder out = new StringBuilder("\"");
    for (char c : String.valueOf(s).toCharArray()) {
      if (c == '"' || c == '\\') {
        out.append('\\').append(c);
      } else if (c < 0x20) {
        out.append(String.format("\\u%04x", (int) c));
      } else {
        out.append(c);
      }
    }
    return out.append('"').toString();
  }

  /** Waits for outstanding durable commits, fails pending watches, and releases the data directory. */
  @Override
  public void close() {
    engine.close();
    if (ownedExecutor != null) {
      ownedExecutor.shutdown();
    }
  }
}
