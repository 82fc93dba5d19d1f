package io.github.fdbcoord.directory;

import io.github.fdbcoord.fdb.FdbErrors;
import io.github.fdbcoord.api.DirectoryInfo;
import io.github.fdbcoord.api.DirectoryPage;
import com.apple.foundationdb.Database;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.ReadTransactionContext;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.TransactionContext;
import com.apple.foundationdb.directory.DirectoryAlreadyExistsException;
import com.apple.foundationdb.directory.DirectoryMoveException;
import com.apple.foundationdb.directory.DirectoryVersionException;
import com.apple.foundationdb.directory.MismatchedLayerException;
import com.apple.foundationdb.directory.NoSuchDirectoryException;
import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.github.fdbcoord.directory.DirectoryServiceException.Kind;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Directories (paths mapped to short key prefixes) over fdb-java's {@code DirectoryLayer}, which
 * does all the directory work, plus what its users need on top: typed errors, paged listing,
 * prefixes as bytes and hex, and a cache of opened paths that other processes cannot make stale.
 *
 * <p><b>The cache.</b> Every change of the tree made through a service (create, move, remove, a
 * create-or-open that created) also writes the committing transaction's versionstamp into one
 * version key. Every open reads that key once (one {@code get}) and serves a path from the cache
 * only if the entry was read under the same version; otherwise it walks the node tree and stores
 * the answer stamped with the version it read in the same transaction. So:
 * <ul>
 *   <li>after a move or remove has committed anywhere, every later transaction reads a newer
 *       version, misses, and sees the tree as it now is: a stale prefix is never returned;</li>
 *   <li>inside a caller's transaction the version read carries a read conflict, so a transaction
 *       that used a cached prefix and commits cannot overlap a concurrent move or remove;</li>
 *   <li>a transaction that itself changed the tree cannot read the version (FoundationDB refuses
 *       reads of a value being versionstamped) and so neither uses nor fills the cache.</li>
 * </ul>
 * Limitation: writes made directly through a {@code DirectoryLayer} (or another client) that
 * bypasses the service do not bump the version, and the cache does not see them until its entries
 * are evicted or {@link #invalidateCache()} is called.
 *
 * <p>Every method that takes no transaction runs in its own retried transaction; the overloads
 * taking a {@link TransactionContext} run inside the caller's transaction (or its retry loop).
 * Refusals fail the future with {@link DirectoryServiceException}; store failures stay
 * {@code FDBException}s.
 */
public final class DirectoryService {
  private final Database database;
  private final DirectorySchema schema;
  private final Executor executor;
  private final int maxPageSize;
  private final Cache<List<String>, CachedDirectory> cache;
  private final LongAdder hits = new LongAdder();
  private final LongAdder misses = new LongAdder();

  private DirectoryService(Database database, DirectoryServiceOptions options) {
    this.database = Objects.requireNonNull(database, "database");
    this.schema = new DirectorySchema(options.directoryLayer(), options.metadata(), options.rootPath());
    this.executor = options.executor() != null ? options.executor() : database.getExecutor();
    this.maxPageSize = options.maxPageSize();
    this.cache = options.cacheSize() == 0 ? null
        : Caffeine.newBuilder().maximumSize(options.cacheSize()).executor(executor).build();
  }

  public static DirectoryService create(Database database) {
    return create(database, DirectoryServiceOptions.defaults());
  }

  public static DirectoryService create(Database database, DirectoryServiceOptions options) {
    return new DirectoryService(database, Objects.requireNonNull(options, "options"));
  }

  // ---- create ----------------------------------------------------------------------------

  /** Creates the directory (and missing parents) without a layer tag; fails ALREADY_EXISTS if it exists. */
  public CompletableFuture<DirectoryInfo> create(List<String> path) {
    return create(database, path, null);
  }

  public CompletableFuture<DirectoryInfo> create(List<String> path, String layer) {
    return create(database, path, layer);
  }

  /** Creates the directory with {@code layer} as its tag (null or empty: none) inside {@code context}. */
  public CompletableFuture<DirectoryInfo> create(TransactionContext context, List<String> path, String layer) {
    return onPath(path, layer, (p, tag) -> run(context, tr -> createIn(tr, p, tag)));
  }

  /** Creates a partition: a directory whose subtree has its own node tree under its prefix. */
  public CompletableFuture<DirectoryInfo> createPartition(List<String> path) {
    return create(database, path, DirectoryInfo.PARTITION_LAYER);
  }

  // ---- open ------------------------------------------------------------------------------

  /** Opens an existing directory, from the cache when it is current; fails NOT_FOUND if missing. */
  public CompletableFuture<DirectoryInfo> open(List<String> path) {
    return open(database, path, null);
  }

  /** Opens and checks the layer tag (null or empty: no check); fails LAYER_MISMATCH if it differs. */
  public CompletableFuture<DirectoryInfo> open(List<String> path, String layer) {
    return open(database, path, layer);
  }

  public CompletableFuture<DirectoryInfo> open(ReadTransactionContext context, List<String> path, String layer) {
    return onPath(path, layer, (p, tag) -> read(context, tr -> openIn(tr, p, tag)));
  }

  // ---- create or open --------------------------------------------------------------------

  public CompletableFuture<DirectoryInfo> createOrOpen(List<String> path) {
    return createOrOpen(database, path, null);
  }

  public CompletableFuture<DirectoryInfo> createOrOpen(List<String> path, String layer) {
    return createOrOpen(database, path, layer);
  }

  /** Opens the directory, creating it (and missing parents) with {@code layer} if it is missing. */
  public CompletableFuture<DirectoryInfo> createOrOpen(TransactionContext context, List<String> path, String layer) {
    return onPath(path, layer, (p, tag) -> run(context, tr -> openOrNull(tr, p, tag)
        .thenCompose(opened -> opened != null ? CompletableFuture.completedFuture(opened) : createIn(tr, p, tag))));
  }

  // ---- list, exists ----------------------------------------------------------------------

  /**
   * Names of the subdirectories of {@code path} (empty list: the root), those after
   * {@code startAfter} (null: from the first), at most {@code limit}. The directory layer has no
   * ranged listing, so each page reads the directory's whole list of names.
   */
  public CompletableFuture<DirectoryPage> list(List<String> path, String startAfter, int limit) {
    return list(database, path, startAfter, limit);
  }

  public CompletableFuture<DirectoryPage> list(ReadTransactionContext context, List<String> path,
                                               String startAfter, int limit) {
    return guard(() -> {
      List<String> p = DirectoryPaths.validate(path, true);
      if (limit < 1 || limit > maxPageSize) {
        throw new DirectoryServiceException(Kind.BAD_REQUEST, p,
            "limit must be between 1 and " + maxPageSize + ", got " + limit);
      }
      if (startAfter != null && !DirectoryPaths.isWellFormed(startAfter)) {
        throw new DirectoryServiceException(Kind.BAD_REQUEST, p, "startAfter is not valid Unicode (unpaired surrogate)");
      }
      return translate(read(context, tr -> listNamesIn(tr, p)
          .thenApply(names -> DirectorySchema.page(names, startAfter, limit))));
    });
  }

  /** Whether the directory exists (answered from the cache when it is current). */
  public CompletableFuture<Boolean> exists(List<String> path) {
    return exists(database, path);
  }

  public CompletableFuture<Boolean> exists(ReadTransactionContext context, List<String> path) {
    return onPath(path, null, (p, noTag) -> read(context, tr -> openOrNull(tr, p, noTag)
        .thenApply(Objects::nonNull)));
  }

  // ---- move, remove ----------------------------------------------------------------------

  /**
   * Moves a directory and its subtree to {@code to}, whose parent must exist. Fails NOT_FOUND
   * (source or destination parent missing), ALREADY_EXISTS (destination taken), BAD_REQUEST
   * (destination inside the source, or in another partition).
   */
  public CompletableFuture<DirectoryInfo> move(List<String> from, List<String> to) {
    return move(database, from, to);
  }

  public CompletableFuture<DirectoryInfo> move(TransactionContext context, List<String> from, List<String> to) {
    return guard(() -> {
      List<String> src = DirectoryPaths.validate(from);
      List<String> dst = DirectoryPaths.validate(to);
      return translate(run(context, tr -> schema.move(tr, src, dst)
          .thenApply(moved -> changed(tr, moved))));
    });
  }

  /** Removes the directory, its subtree and all their contents; fails NOT_FOUND if missing. */
  public CompletableFuture<Void> remove(List<String> path) {
    return remove(database, path);
  }

  public CompletableFuture<Void> remove(TransactionContext context, List<String> path) {
    return onPath(path, null, (p, noTag) -> run(context, tr -> schema.remove(tr, p)
        .thenApply(removed -> changed(tr, removed))));
  }

  /** Removes the directory if it exists; completes with whether it did. */
  public CompletableFuture<Boolean> removeIfExists(List<String> path) {
    return removeIfExists(database, path);
  }

  public CompletableFuture<Boolean> removeIfExists(TransactionContext context, List<String> path) {
    return onPath(path, null, (p, noTag) -> run(context, tr -> schema.removeIfExists(tr, p)
        .thenApply(removed -> removed ? changed(tr, true) : false)));
  }

  // ---- cache -----------------------------------------------------------------------------

  /** Drops every cached path (needed only after changes made around the service). */
  public void invalidateCache() {
    if (cache != null) {
      cache.invalidateAll();
    }
  }

  /** Cache hits and misses of opens since this service was created, and the current entry count. */
  public CacheStats cacheStats() {
    return new CacheStats(hits.sum(), misses.sum(), cache == null ? 0 : cache.estimatedSize());
  }

  /** Counters of the open-path cache. */
  public record CacheStats(long hits, long misses, long size) {}

  // ---- composition -----------------------------------------------------------------------

  private CompletableFuture<DirectoryInfo> createIn(Transaction tr, List<String> path, byte[] tag) {
    return schema.create(tr, path, tag)
        .thenApply(created -> changed(tr, created));
  }

  /** Children of {@code path}; the service's root has none until something is created under it. */
  private CompletableFuture<List<String>> listNamesIn(ReadTransaction tr, List<String> path) {
    return schema.listNames(tr, path)
        .handle((names, error) -> error != null && path.isEmpty() && FdbErrors.unwrap(error) instanceof NoSuchDirectoryException
            ? List.<String>of() : rethrowIfFailed(names, error));
  }

  private static <T> T rethrowIfFailed(T value, Throwable error) {
    if (error == null) {
      return value;
    }
    throw error instanceof CompletionException ? (CompletionException) error : new CompletionException(error);
  }

  private <T> T changed(Transaction tr, T result) {
    schema.bumpVersion(tr);
    return result;
  }

  private CompletableFuture<DirectoryInfo> openIn(ReadTransaction tr, List<String> path, byte[] tag) {
    return schema.readVersion(tr)
        .thenCompose(version -> openAt(tr, path, tag, version));
  }

  /** The directory, or null when it does not exist; other failures propagate. */
  private CompletableFuture<DirectoryInfo> openOrNull(ReadTransaction tr, List<String> path, byte[] tag) {
    return openIn(tr, path, tag)
        .handle((opened, error) -> nullIfMissing(opened, error));
  }

  private static DirectoryInfo nullIfMissing(DirectoryInfo opened, Throwable error) {
    if (error == null) {
      return opened;
    }
    if (FdbErrors.unwrap(error) instanceof NoSuchDirectoryException) {
      return null;
    }
    return rethrowIfFailed(opened, error);
  }

  /** Serves from the cache if the entry was read under {@code version}; null version: no cache. */
  private CompletableFuture<DirectoryInfo> openAt(ReadTransaction tr, List<String> path, byte[] tag, byte[] version) {
    DirectoryInfo cached = cachedAt(path, version);
    if (cached != null) {
      hits.increment();
      checkLayer(cached, tag);
      return CompletableFuture.completedFuture(cached);
    }
    misses.increment();
    return schema.open(tr, path, tag)
        .thenApply(opened -> remember(path, version, opened));
  }

  private DirectoryInfo cachedAt(List<String> path, byte[] version) {
    if (cache == null || version == null) {
      return null;
    }
    CachedDirectory entry = cache.getIfPresent(path);
    return entry != null && Arrays.equals(entry.version, version) ? entry.info : null;
  }

  private DirectoryInfo remember(List<String> path, byte[] version, DirectoryInfo info) {
    if (cache != null && version != null) {
      cache.put(path, new CachedDirectory(version, info));
    }
    return info;
  }

  private static void checkLayer(DirectoryInfo info, byte[] tag) {
    if (tag.length > 0 && !Arrays.equals(tag, info.layerBytes())) {
      throw layerMismatch(info.path(), info.layerBytes(), tag, null);
    }
  }

  /**
   * Validates {@code path} and {@code layer} (null: none), then runs {@code body} on the path and the
   * packed layer tag with the directory layer's refusals translated. An invalid argument fails the
   * future as it is, before any transaction starts.
   */
  private <T> CompletableFuture<T> onPath(List<String> path, String layer,
                                          BiFunction<List<String>, byte[], CompletableFuture<T>> body) {
    return guard(() -> {
      List<String> p = DirectoryPaths.validate(path);
      byte[] tag = DirectorySchema.packLayer(DirectoryPaths.validateLayer(layer));
      return translate(body.apply(p, tag));
    });
  }

  private <T> CompletableFuture<T> run(TransactionContext context,
                                       Function<Transaction, CompletableFuture<T>> body) {
    Function<Transaction, CompletableFuture<T>> guarded = tr -> guard(() -> body.apply(tr));
    if (context instanceof Database) {
      return ((Database) context).runAsync(guarded, executor);
    }
    return Objects.requireNonNull(context, "context").runAsync(guarded);
  }

  private <T> CompletableFuture<T> read(ReadTransactionContext context,
                                        Function<ReadTransaction, CompletableFuture<T>> body) {
    Function<ReadTransaction, CompletableFuture<T>> guarded = tr -> guard(() -> body.apply(tr));
    if (context instanceof Database) {
      return ((Database) context).readAsync(guarded, executor);
    }
    return Objects.requireNonNull(context, "context").readAsync(guarded);
  }

  /** Turns a synchronous throw of the directory layer into a failed future, like its async errors. */
  private static <T> CompletableFuture<T> guard(Supplier<CompletableFuture<T>> call) {
    try {
      return call.get();
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  // ---- errors ----------------------------------------------------------------------------

  private <T> CompletableFuture<T> translate(CompletableFuture<T> future) {
    return future.exceptionally(this::rethrowTranslated);
  }

  private <T> T rethrowTranslated(Throwable error) {
    Throwable cause = FdbErrors.unwrap(error);
    Throwable translated = translate(cause);
    if (translated instanceof RuntimeException) {
      throw (RuntimeException) translated;
    }
    throw new CompletionException(translated);
  }

  /** The service's exception for a directory-layer refusal; anything else unchanged. */
  Throwable translate(Throwable cause) {
    if (cause instanceof NoSuchDirectoryException) {
      List<String> path = schema.unpackPath(((NoSuchDirectoryException) cause).path);
      return new DirectoryServiceException(Kind.NOT_FOUND, path,
          "directory does not exist: " + DirectoryPaths.format(path), cause);
    }
    if (cause instanceof DirectoryAlreadyExistsException) {
      List<String> path = schema.unpackPath(((DirectoryAlreadyExistsException) cause).path);
      return new DirectoryServiceException(Kind.ALREADY_EXISTS, path,
          "directory already exists: " + DirectoryPaths.format(path), cause);
    }
    if (cause instanceof MismatchedLayerException) {
      MismatchedLayerException e = (MismatchedLayerException) cause;
      return layerMismatch(schema.unpackPath(e.path), e.stored, e.opened, e);
    }
    if (cause instanceof DirectoryMoveException) {
      DirectoryMoveException e = (DirectoryMoveException) cause;
      List<String> from = schema.unpackPath(e.sourcePath);
      return new DirectoryServiceException(Kind.BAD_REQUEST, from,
          "cannot move " + DirectoryPaths.format(from) + " to " + DirectoryPaths.format(schema.unpackPath(e.destPath))
              + ": " + e.getMessage(), cause);
    }
    if (cause instanceof DirectoryVersionException) {
      return new DirectoryServiceException(Kind.INCOMPATIBLE_VERSION, null, cause.getMessage(), cause);
    }
    if (cause instanceof IllegalArgumentException) {
      return new DirectoryServiceException(Kind.BAD_REQUEST, null, cause.getMessage(), cause);
    }
    return cause;
  }

  private static DirectoryServiceException layerMismatch(List<String> path, byte[] stored, byte[] requested,
                                                         Throwable cause) {
    return new DirectoryServiceException(Kind.LAYER_MISMATCH, path,
        "directory " + DirectoryPaths.format(path) + " has layer '" + DirectorySchema.unpackLayer(stored)
            + "', not '" + DirectorySchema.unpackLayer(requested) + "'", cause);
  }

  /** A cached answer and the tree version it was read under. */
  private static final class CachedDirectory {
    final byte[] version;
    final DirectoryInfo info;

    CachedDirectory(byte[] version, DirectoryInfo info) {
      this.version = version;
      this.info = info;
    }
  }
}
