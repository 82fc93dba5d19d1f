package io.github.fdbcoord.directory;

import com.apple.foundationdb.directory.DirectoryLayer;
import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.Tuple;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;

/**
 * How a {@link DirectoryService} is set up. Defaults: fdb-java's default {@link DirectoryLayer}
 * (nodes under {@code \xfe}), metadata under the tuple {@code ("fdbcoord", "directory-service")},
 * a cache of 10,000 paths, pages of at most 10,000 names, the database's executor.
 *
 * <p>Every service instance (in every process) that works on the same directory layer must use
 * the same metadata subspace: the version key kept there is what invalidates their caches.
 */
public final class DirectoryServiceOptions {
  public static final Subspace DEFAULT_METADATA = new Subspace(Tuple.from("fdbcoord", "directory-service"));
  public static final long DEFAULT_CACHE_SIZE = 10_000;
  public static final int DEFAULT_MAX_PAGE_SIZE = 10_000;

  private DirectoryLayer directoryLayer = DirectoryLayer.getDefault();
  private Subspace metadata = DEFAULT_METADATA;
  private long cacheSize = DEFAULT_CACHE_SIZE;
  private int maxPageSize = DEFAULT_MAX_PAGE_SIZE;
  private Executor executor;
  private List<String> rootPath = List.of();

  public DirectoryServiceOptions() {}

  /**
   * The directory under which all of the service's paths live: with root {@code ["svc"]}, the
   * service path {@code ["a"]} is the directory layer's {@code ["svc", "a"]}, and results and
   * errors show {@code ["a"]}. Default: the empty path, the directory layer's own root. The root
   * directory is created with the first directory created under it.
   */
  public DirectoryServiceOptions setRootPath(List<String> rootPath) {
    this.rootPath = DirectoryPaths.validate(rootPath, true);
    return this;
  }

  public List<String> getRootPath() {
    return rootPath;
  }

  /** The directory layer doing the work (e.g. one with node/content subspaces of its own). */
  public DirectoryServiceOptions setDirectoryLayer(DirectoryLayer directoryLayer) {
    this.directoryLayer = Objects.requireNonNull(directoryLayer, "directoryLayer");
    return this;
  }

  public DirectoryLayer getDirectoryLayer() {
    return directoryLayer;
  }

  /** Where the service keeps its own keys (the cache version key). Must not hold user data. */
  public DirectoryServiceOptions setMetadata(Subspace metadata) {
    this.metadata = Objects.requireNonNull(metadata, "metadata");
    return this;
  }

  public Subspace getMetadata() {
    return metadata;
  }

  /** Most paths kept in the open-path cache; 0 turns the cache off. */
  public DirectoryServiceOptions setCacheSize(long cacheSize) {
    if (cacheSize < 0) {
      throw new IllegalArgumentException("cacheSize must not be negative, got " + cacheSize);
    }
    this.cacheSize = cacheSize;
    return this;
  }

  public long getCacheSize() {
    return cacheSize;
  }

  /** Largest {@code limit} a list request may ask for. */
  public DirectoryServiceOptions setMaxPageSize(int maxPageSize) {
    if (maxPageSize < 1) {
      throw new IllegalArgumentException("maxPageSize must be at least 1, got " + maxPageSize);
    }
    this.maxPageSize = maxPageSize;
    return this;
  }

  public int getMaxPageSize() {
    return maxPageSize;
  }

  /** Executor for retry loops and continuations; null means the database's own. */
  public DirectoryServiceOptions setExecutor(Executor executor) {
    this.executor = executor;
    return this;
  }

  public Executor getExecutor() {
    return executor;
  }
}
