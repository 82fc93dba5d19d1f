package io.github.fdbcoord.allocator;

import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.Tuple;
import io.github.fdbcoord.fdb.LayerDefaults;

import java.util.Objects;
import java.util.concurrent.Executor;

/**
 * How an {@link AllocatorService} is set up. Immutable; build with {@link #builder()}.
 *
 * <p>Defaults: root subspace {@code ("fdbcoord", "allocator")}, the database's executor.
 */
public final class AllocatorServiceOptions {
  /** Default root: the tuple-encoded {@code (LayerDefaults.ROOT_DIRECTORY, "allocator")}. */
  public static final Subspace DEFAULT_ROOT = new Subspace(Tuple.from(LayerDefaults.ROOT_DIRECTORY, "allocator"));
  /** Longest allocator name accepted, in UTF-16 chars; names become part of every key. */
  public static final int MAX_NAME_LENGTH = 256;

  private final Subspace root;
  private final Executor executor;
  private final Executor batchWindow;

  private AllocatorServiceOptions(Builder b) {
    this.root = b.root;
    this.executor = b.executor;
    this.batchWindow = b.batchWindow;
  }

  public static Builder builder() {
    return new Builder();
  }

  public static AllocatorServiceOptions defaults() {
    return builder().build();
  }

  /** Where all allocators of the service live (each in {@code root[kind][name]}). */
  public Subspace root() {
    return root;
  }

  /** Executor for the retry loops and continuations, or null for the database's own. */
  public Executor executor() {
    return executor;
  }

  /**
   * Where an allocation transaction that could start at once starts, so that the calls submitted
   * before it runs share it (see {@code Coalescer}), or null: at once. For callers on an event loop
   * over a store whose transactions complete before they return (the in-memory engine), an executor
   * that queues the start behind the loop's pending work lets the calls the loop received together
   * share one transaction.
   */
  public Executor batchWindow() {
    return batchWindow;
  }

  @Override
  public String toString() {
    return "AllocatorServiceOptions{root=" + root + ", executor=" + executor + ", batchWindow=" + batchWindow + "}";
  }

  /** Builds {@link AllocatorServiceOptions}. */
  public static final class Builder {
    private Subspace root = DEFAULT_ROOT;
    private Executor executor;
    private Executor batchWindow;

    private Builder() {}

    /**
     * See {@link AllocatorServiceOptions#root()}. Pass a {@code DirectorySubspace} to keep the
     * allocators inside a directory.
     */
    public Builder root(Subspace root) {
      this.root = Objects.requireNonNull(root, "root");
      return this;
    }

    /** Executor for the retry loops and continuations; null means the database's own. */
    public Builder executor(Executor executor) {
      this.executor = executor;
      return this;
    }

    /** See {@link AllocatorServiceOptions#batchWindow()}; null (the default): transactions start at once. */
    public Builder batchWindow(Executor window) {
      this.batchWindow = window;
      return this;
    }

    public AllocatorServiceOptions build() {
      return new AllocatorServiceOptions(this);
    }
  }
}
