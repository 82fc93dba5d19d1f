package io.github.fdbcoord.allocator;

import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.Tuple;

import java.util.Objects;
import java.util.concurrent.Executor;

/**
 * How an {@link AllocatorService} is set up. Mutable builder-style setters, defaults:
 * root subspace {@code ("fdbcoord", "allocator")}, the database's executor.
 */
public final class AllocatorServiceOptions {
  /** Default root: the tuple-encoded {@code ("fdbcoord", "allocator")}. */
  public static final Subspace DEFAULT_ROOT = new Subspace(Tuple.from("fdbcoord", "allocator"));
  /** Longest allocator name accepted, in UTF-16 chars; names become part of every key. */
  public static final int MAX_NAME_LENGTH = 256;

  private Subspace root = DEFAULT_ROOT;
  private Executor executor;

  public AllocatorServiceOptions() {}

  /**
   * Where all allocators of the service live (each in {@code root[kind][name]}). Pass a
   * {@code DirectorySubspace} to keep them inside a directory.
   */
  public AllocatorServiceOptions setRoot(Subspace root) {
    this.root = Objects.requireNonNull(root, "root");
    return this;
  }

  public Subspace getRoot() {
    return root;
  }

  /** Executor for the retry loops and continuations; null means the database's own. */
  public AllocatorServiceOptions setExecutor(Executor executor) {
    this.executor = executor;
    return this;
  }

  public Executor getExecutor() {
    return executor;
  }
}
