package io.github.fdbcoord.interner;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.directory.DirectoryLayer;
import com.apple.foundationdb.directory.DirectorySubspace;
import com.apple.foundationdb.subspace.Subspace;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import java.util.function.Supplier;

/** {@link InternerService} over fdb-java's interfaces. */
final class FdbInternerService implements InternerService {
  static final int MAX_NAME_LENGTH = 256;

  private final Database db;
  private final InternerOptions options;
  private final Executor executor;
  private final DirectoryLayer directory;
  private final InternerCache cache;
  private final AtomicLong incarnations = new AtomicLong();
  /** Attempts of intern transactions, retries included; tests compare it with calls to see conflicts happen. */
  final LongAdder internAttempts = new LongAdder();
  /** Intern transactions started (one per call with cache misses). */
  final LongAdder internTransactions = new LongAdder();
  private final ConcurrentHashMap<String, CompletableFuture<StringInterner>> handles = new ConcurrentHashMap<>();

  FdbInternerService(Database db, InternerOptions options) {
    this.db = Objects.requireNonNull(db, "db");
    this.options = Objects.requireNonNull(options, "options");
    this.executor = options.executor() != null ? options.executor() : db.getExecutor();
    this.directory = options.directoryLayer();
    this.cache = new InternerCache(options.cacheMaxBytes());
  }

  @Override
  public InternerOptions options() {
    return options;
  }

  Executor executor() {
    return executor;
  }

  InternerCache cache() {
    return cache;
  }

  @Override
  public CompletableFuture<StringInterner> open(String name) {
    return guard(() -> {
      List<String> path = pathOf(name);
      CompletableFuture<StringInterner> handle = handles.computeIfAbsent(name, n -> createOrOpen(n, path));
      // Outside computeIfAbsent: a failed open must not stay cached.
      handle.whenComplete((h, e) -> {
        if (e != null) {
          handles.remove(name, handle);
        }
      });
      return handle;
    });
  }

  @Override
  public CompletableFuture<StringInterner> openExisting(String name) {
    return guard(() -> {
      List<String> path = pathOf(name);
      StringInterner cached = opened(handles.get(name));
      if (cached != null) {
        return CompletableFuture.completedFuture(cached);
      }
      return read(tr -> directory.exists(tr, path)
          .thenCompose(exists -> exists ? openInTransaction(tr, name, path) : notFound(name)))
          .thenApply(h -> {
            CompletableFuture<StringInterner> done = CompletableFuture.completedFuture(h);
            CompletableFuture<StringInterner> prior = handles.putIfAbsent(name, done);
            StringInterner kept = opened(prior);
            return kept != null ? kept : h;
          });
    });
  }

  @Override
  public CompletableFuture<List<String>> listNamespaces() {
    return read(tr -> directory.exists(tr, options.rootPath())
        .thenCompose(exists -> exists
            ? directory.list(tr, options.rootPath())
            : CompletableFuture.completedFuture(Collections.<String>emptyList())))
        .thenApply(names -> {
          List<String> sorted = new ArrayList<>(names);
          Collections.sort(sorted);
          return sorted;
        });
  }

  @Override
  public CompletableFuture<Boolean> removeNamespace(String name) {
    return guard(() -> {
      List<String> path = pathOf(name);
      return run(tr -> directory.removeIfExists(tr, path))
          .thenApply(removed -> {
            StringInterner handle = opened(handles.remove(name));
            if (handle != null) {
              cache.invalidate(((FdbStringInterner) handle).incarnation());
            }
            return removed;
          });
    });
  }

  /** Called by a handle that found its namespace gone: the next open must look again. */
  void forget(FdbStringInterner handle) {
    handles.computeIfPresent(handle.namespace(), (n, f) ->
        opened(f) == handle ? null : f);
    cache.invalidate(handle.incarnation());
  }

  /** The handle of a successfully completed open, or null (absent, still opening, or failed); never waits. */
  private static StringInterner opened(CompletableFuture<StringInterner> f) {
    return f != null && f.isDone() && !f.isCompletedExceptionally() ? f.getNow(null) : null;
  }

  private CompletableFuture<StringInterner> createOrOpen(String name, List<String> path) {
    return run(tr -> directory.createOrOpen(tr, path, InternerSchema.LAYER)
        .thenCompose(sub -> initMeta(tr, sub))
        .thenApply(meta -> newHandle(name, meta)));
  }

  private CompletableFuture<StringInterner> openInTransaction(ReadTransaction tr, String name, List<String> path) {
    return directory.open(tr, path, InternerSchema.LAYER)
        .thenCompose(sub -> InternerSchema.readMeta(tr, sub)
            .thenApply(bits -> bits == null ? null : new OpenedNamespace(sub, bits)))
        .thenCompose(meta -> meta == null ? notFound(name) : CompletableFuture.completedFuture(newHandle(name, meta)));
  }

  /** Records the split of a new namespace, or reads back the split of an existing one. */
  private CompletableFuture<OpenedNamespace> initMeta(Transaction tr, DirectorySubspace sub) {
    return InternerSchema.readMeta(tr, sub).thenApply(bits -> {
      if (bits != null) {
        return new OpenedNamespace(sub, bits);
      }
      InternerSchema.writeMeta(tr, sub, options.sequenceBits());
      return new OpenedNamespace(sub, options.sequenceBits());
    });
  }

  private StringInterner newHandle(String name, OpenedNamespace meta) {
    return new FdbStringInterner(this, name, incarnations.incrementAndGet(),
        new InternerSchema(meta.subspace(), meta.sequenceBits()));
  }

  /** A handle of this service on a namespace another service opened; lets tests vary options per call. */
  StringInterner newHandleForTest(StringInterner opened) {
    FdbStringInterner other = (FdbStringInterner) opened;
    return new FdbStringInterner(this, other.namespace(), incarnations.incrementAndGet(), other.schema());
  }

  private record OpenedNamespace(DirectorySubspace subspace, int sequenceBits) {}

  private static <T> CompletableFuture<T> notFound(String name) {
    return CompletableFuture.failedFuture(new InternerException(InternerException.Kind.NOT_FOUND,
        "interner namespace '" + name + "' does not exist"));
  }

  private List<String> pathOf(String name) {
    if (name == null || name.isEmpty()) {
      throw InternerException.badRequest("namespace name must be a non-empty string");
    }
    if (name.length() > MAX_NAME_LENGTH) {
      throw InternerException.badRequest("namespace name is " + name.length()
          + " characters long, at most " + MAX_NAME_LENGTH + " are allowed");
    }
    if (InternerSchema.tupleStringLength(name) < 0) {
      throw InternerException.badRequest("namespace name is not well-formed UTF-16 (unpaired surrogate)");
    }
    List<String> path = new ArrayList<>(options.rootPath());
    path.add(name);
    return path;
  }

  // ---- transactions ---------------------------------------------------------------------------

  /** A read-write transaction with the configured timeout, retry limit and executor; failures as InternerException. */
  <T> CompletableFuture<T> run(Function<Transaction, CompletableFuture<T>> body) {
    AtomicBoolean first = new AtomicBoolean(true);
    return mapErrors(db.runAsync(tr -> {
      // Timeout and retry limit cover all attempts (API >= 610 keeps them across onError), so set them once.
      if (first.getAndSet(false)) {
        applyTimeout(tr);
      }
      return body.apply(tr);
    }, executor));
  }

  /** A read-only transaction with the configured timeout, retry limit and executor; failures as InternerException. */
  <T> CompletableFuture<T> read(Function<ReadTransaction, CompletableFuture<T>> body) {
    AtomicBoolean first = new AtomicBoolean(true);
    return mapErrors(db.readAsync(tr -> {
      if (first.getAndSet(false)) {
        applyTimeout(tr);
      }
      return body.apply(tr);
    }, executor));
  }

  private void applyTimeout(ReadTransaction tr) {
    long millis = options.transactionTimeout().toMillis();
    if (millis > 0) {
      tr.options().setTimeout(millis);
    }
    if (options.retryLimit() >= 0) {
      tr.options().setRetryLimit(options.retryLimit());
    }
  }

  static <T> CompletableFuture<T> mapErrors(CompletableFuture<T> f) {
    return f.exceptionallyCompose(t -> CompletableFuture.failedFuture(InternerException.from(t)));
  }

  /** Runs {@code body}, turning an exception it throws synchronously into a failed future. */
  static <T> CompletableFuture<T> guard(Supplier<CompletableFuture<T>> body) {
    try {
      return body.get();
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(InternerException.from(e));
    }
  }
}
