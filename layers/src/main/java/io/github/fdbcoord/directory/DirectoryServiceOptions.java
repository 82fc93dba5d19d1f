package io.github.fdbcoord.directory;

import com.apple.foundationdb.directory.DirectoryLayer;
import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.Tuple;
import io.github.fdbcoord.fdb.LayerDefaults;
import io.github.fdbcoord.fdb.OptionChecks;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;

/**
 * How a {@link DirectoryService} is set up. Immutable; build with {@link #builder()}.
 *
 * <p>Defaults: fdb-java's default {@link DirectoryLayer} (nodes under {@code \xfe}), metadata under
 * the tuple {@code ("fdbcoord", "directory-service")}, a cache of 10,000 paths, pages of at most
 * 10,000 names, the database's executor.
 *
 * <p>Every service instance (in every process) that works on the same directory layer must use
 * the same metadata subspace: the version key kept there is what invalidates their caches.
 */
public final class DirectoryServiceOptions {
  /** Default metadata subspace: the tuple {@code (LayerDefaults.ROOT_DIRECTORY, "directory-service")}. */
  public static final Subspace DEFAULT_METADATA =
      new Subspace(Tuple.from(LayerDefaults.ROOT_DIRECTORY, "directory-service"));
  public static final long DEFAULT_CACHE_SIZE = 10_000;
  public static final int DEFAULT_MAX_PAGE_SIZE = 10_000;

  private final DirectoryLayer directoryLayer;
  private final Subspace metadata;
  private final long cacheSize;
  private final int maxPageSize;
  private final Executor executor;
  private final List<String> rootPath;

  private DirectoryServiceOptions(Builder b) {
    this.directoryLayer = b.directoryLayer;
    this.metadata = b.metadata;
    this.cacheSize = b.cacheSize;
    this.maxPageSize = b.maxPageSize;
    this.executor = b.executor;
    this.rootPath = b.rootPath;
  }

  public static Builder builder() {
    return new Builder();
  }

  public static DirectoryServiceOptions defaults() {
    return builder().build();
  }

  /**
   * The directory under which all of the service's paths live: with root {@code ["svc"]}, the
   * service path {@code ["a"]} is the directory layer's {@code ["svc", "a"]}, and results and
   * errors show {@code ["a"]}. The empty path is the directory layer's own root.
   */
  public List<String> rootPath() {
    return rootPath;
  }

  /** The directory layer doing the work. */
  public DirectoryLayer directoryLayer() {
    return directoryLayer;
  }

  /** Where the service keeps its own keys (the cache version key). */
  public Subspace metadata() {
    return metadata;
  }

  /** Most paths kept in the open-path cache; 0 means no cache. */
  public long cacheSize() {
    return cacheSize;
  }

  /** Largest {@code limit} a list request may ask for. */
  public int maxPageSize() {
    return maxPageSize;
  }

  /** Executor for retry loops and continuations, or null for the database's own. */
  public Executor executor() {
    return executor;
  }

  @Override
  public String toString() {
    return "DirectoryServiceOptions{rootPath=" + rootPath + ", metadata=" + metadata + ", cacheSize=" + cacheSize
        + ", maxPageSize=" + maxPageSize + ", executor=" + executor + "}";
  }

  /** Builds {@link DirectoryServiceOptions}; each setter refuses a bad value at once. */
  public static final class Builder {
    private DirectoryLayer directoryLayer = DirectoryLayer.getDefault();
    private Subspace metadata = DEFAULT_METADATA;
    private long cacheSize = DEFAULT_CACHE_SIZE;
    private int maxPageSize = DEFAULT_MAX_PAGE_SIZE;
    private Executor executor;
    private List<String> rootPath = List.of();

    private Builder() {}

    /**
     * See {@link DirectoryServiceOptions#rootPath()}. Default: the empty path. The root directory is
     * created with the first directory created under it. A malformed path is refused with a
     * {@link DirectoryServiceException} (the same rule as every path the service accepts).
     */
    public Builder rootPath(List<String> rootPath) {
      this.rootPath = DirectoryPaths.validate(rootPath, true);
      return this;
    }

    /** The directory layer doing the work (e.g. one with node/content subspaces of its own). */
    public Builder directoryLayer(DirectoryLayer directoryLayer) {
      this.directoryLayer = Objects.requireNonNull(directoryLayer, "directoryLayer");
      return this;
    }

    /** Where the service keeps its own keys (the cache version key). Must not hold user data. */
    public Builder metadata(Subspace metadata) {
      this.metadata = Objects.requireNonNull(metadata, "metadata");
      return this;
    }

    /** Most paths kept in the open-path cache (at least 0); 0 turns the cache off. */
    public Builder cacheSize(long cacheSize) {
      this.cacheSize = OptionChecks.atLeast(cacheSize, 0L, "cacheSize");
      return this;
    }

    /** Largest {@code limit} a list request may ask for (at least 1). */
    public Builder maxPageSize(int maxPageSize) {
      this.maxPageSize = OptionChecks.atLeast(maxPageSize, 1, "maxPageSize");
      return this;
    }

    /** Executor for retry loops and continuations; null means the database's own. */
    public Builder executor(Executor executor) {
      this.executor = executor;
      return this;
    }

    public DirectoryServiceOptions build() {
      return new DirectoryServiceOptions(this);
    }
  }
}
