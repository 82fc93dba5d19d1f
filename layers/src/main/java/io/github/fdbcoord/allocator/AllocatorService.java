package io.github.fdbcoord.allocator;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.Tuple;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * Named allocators over one database. Each name gets its own subspace, so allocators never share
 * values' keys: windowed allocators live in {@code root["hca"][name]}, naive ones in
 * {@code root["naive"][name]} (a naive and a windowed allocator of the same name are independent).
 *
 * <p>Allocator objects are cheap and stateless (all state is in the database): two services or two
 * processes over the same root hand out disjoint values for the same name.
 */
public final class AllocatorService {
  private static final String WINDOWED = "hca";
  private static final String NAIVE = "naive";

  private final Database database;
  private final Subspace root;
  private final Executor executor;

  private AllocatorService(Database database, AllocatorServiceOptions options) {
    this.database = Objects.requireNonNull(database, "database");
    this.root = options.root();
    this.executor = options.executor() != null ? options.executor() : database.getExecutor();
  }

  public static AllocatorService create(Database database) {
    return create(database, AllocatorServiceOptions.defaults());
  }

  public static AllocatorService create(Database database, AllocatorServiceOptions options) {
    return new AllocatorService(database, Objects.requireNonNull(options, "options"));
  }

  /** The windowed high-contention allocator called {@code name}. */
  public HighContentionAllocator allocator(String name) {
    validateName(name);
    // Not memoised: allocators hold no state, and names may come from requests (unbounded).
    return new HighContentionAllocator(name, database, subspaceOf(WINDOWED, name), executor);
  }

  /** The naive single-counter allocator called {@code name} (a baseline, see {@link NaiveAllocator}). */
  public NaiveAllocator naiveAllocator(String name) {
    validateName(name);
    return new NaiveAllocator(name, database, subspaceOf(NAIVE, name), executor);
  }

  /** Allocates from the windowed allocator {@code name}; a bad name fails the future (BAD_REQUEST). */
  public CompletableFuture<Long> allocate(String name) {
    try {
      return allocator(name).allocate();
    } catch (AllocatorException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** Allocates from the windowed allocator {@code name}, as a compact prefix. */
  public CompletableFuture<byte[]> allocatePrefix(String name) {
    try {
      return allocator(name).allocatePrefix();
    } catch (AllocatorException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** The subspace holding the windowed allocator {@code name}'s state. */
  public Subspace subspaceOf(String name) {
    validateName(name);
    return subspaceOf(WINDOWED, name);
  }

  public Subspace root() {
    return root;
  }

  private Subspace subspaceOf(String kind, String name) {
    return root.get(Tuple.from(kind, name));
  }

  /** Rejects names that are missing, empty, too long, or not valid Unicode text. */
  public static void validateName(String name) {
    if (name == null) {
      throw AllocatorException.badRequest("allocator name is missing");
    }
    if (name.isEmpty()) {
      throw AllocatorException.badRequest("allocator name must not be empty");
    }
    if (name.length() > AllocatorServiceOptions.MAX_NAME_LENGTH) {
      throw AllocatorException.badRequest("allocator name is " + name.length()
          + " characters long, the limit is " + AllocatorServiceOptions.MAX_NAME_LENGTH);
    }
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      boolean paired = Character.isHighSurrogate(c) && i + 1 < name.length()
          && Character.isLowSurrogate(name.charAt(i + 1));
      if (paired) {
        i++;
      } else if (Character.isSurrogate(c)) {
        throw AllocatorException.badRequest("allocator name holds an unpaired surrogate at index " + i);
      }
    }
  }
}
