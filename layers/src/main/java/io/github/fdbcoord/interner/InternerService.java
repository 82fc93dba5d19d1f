package io.github.fdbcoord.interner;

import com.apple.foundationdb.Database;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Named interner namespaces over one {@link Database}. Each namespace is a directory (fdb-java
 * {@code DirectoryLayer}, layer tag {@code fdbcoord.interner}) under {@link InternerOptions#rootPath()}.
 * Opened namespaces are kept, so opening the same name again costs nothing. All namespaces share one
 * bounded read-through cache.
 *
 * <p>Every future fails with an {@link InternerException}.
 */
public interface InternerService {

  static InternerService create(Database db, InternerOptions options) {
    return new FdbInternerService(db, options);
  }

  static InternerService create(Database db) {
    return create(db, InternerOptions.defaults());
  }

  InternerOptions options();

  /**
   * The namespace {@code name}, created with {@link InternerOptions#sequenceBits()} if it does not
   * exist. BAD_REQUEST: the name is null, empty, longer than 256 characters or not well-formed
   * UTF-16, or the directory exists but belongs to another layer.
   */
  CompletableFuture<StringInterner> open(String name);

  /** The namespace {@code name} if it exists; NOT_FOUND otherwise. Creates nothing. */
  CompletableFuture<StringInterner> openExisting(String name);

  /** Names of all namespaces, sorted; empty when there are none. */
  CompletableFuture<List<String>> listNamespaces();

  /**
   * Removes the namespace and all its strings and ids; true if it existed. Handles to it held by
   * this service stop working (intern fails with NOT_FOUND) and its cache entries are dropped.
   * Other processes keep cached entries of it until they notice (see docs/interner.md).
   */
  CompletableFuture<Boolean> removeNamespace(String name);
}
