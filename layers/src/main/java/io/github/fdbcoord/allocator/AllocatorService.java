package io.github.fdbcoord.allocator;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.Tuple;
import io.github.fdbcoord.coalescing.Coalescer;
import io.github.fdbcoord.fdb.FdbErrors;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
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
 *
 * <p>{@link #allocate(String)} and {@link #allocatePrefix(String)} coalesce: calls that arrive while
 * {@value #MAX_IN_FLIGHT} allocation transactions of this service run wait, and the next transaction
 * serves up to {@value #MAX_BATCH} of them, one windowed allocation after the other (each sees the
 * reservations of those before it, so no value is given twice). A failed shared transaction is run
 * again call by call unless every call would have met the failure alone (a timeout), so one call's
 * failure never fails its neighbours.
 */
public final class AllocatorService {
  private static final String WINDOWED = "hca";
  private static final String NAIVE = "naive";
  /**
   * Allocation transactions this service runs at once before further calls wait to be batched:
   * enough to keep a store with commit latency busy, few enough that calls arriving together share.
   */
  static final int MAX_IN_FLIGHT = 4;
  /** Allocations one coalesced transaction serves at most: each is a few reads and writes, so the transaction stays small. */
  static final int MAX_BATCH = 256;

  private final Database database;
  private final Subspace root;
  private final Executor executor;
  /** Concurrent {@link #allocate(String)} calls, served together. */
  final Coalescer<Allocation, Long> allocations;

  /** One call's request: compared by identity, so two calls for the same allocator get two values. */
  private static final class Allocation {
    final String name;

    Allocation(String name) {
      this.name = name;
    }
  }

  private AllocatorService(Database database, AllocatorServiceOptions options) {
    this.database = Objects.requireNonNull(database, "database");
    this.root = options.root();
    this.executor = options.executor() != null ? options.executor() : database.getExecutor();
    this.allocations = new Coalescer<>(batch -> database.runAsync(tr -> allocateEach(tr, batch), executor),
        AllocatorService::sharedByEveryCall, a -> 1, MAX_BATCH, Long.MAX_VALUE, MAX_IN_FLIGHT, executor,
        options.batchWindow());
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

  /**
   * Allocates from the windowed allocator {@code name}, in a transaction shared with the calls that
   * arrive together (see the class comment); a bad name fails the future (BAD_REQUEST) alone.
   */
  public CompletableFuture<Long> allocate(String name) {
    try {
      validateName(name);
    } catch (AllocatorException e) {
      return CompletableFuture.failedFuture(e);
    }
    Allocation call = new Allocation(name);
    return allocations.submit(List.of(call)).thenApply(values -> values.get(call));
  }

  /** {@link #allocate(String)} as a compact prefix. */
  public CompletableFuture<byte[]> allocatePrefix(String name) {
    return allocate(name).thenApply(AllocatorSchema::packPrefix);
  }

  /**
   * The batch's allocations one after the other in {@code tr}: run concurrently, two searches could
   * read the same candidate as free before either reserves it.
   */
  private CompletableFuture<Map<Allocation, Long>> allocateEach(Transaction tr, List<Allocation> batch) {
    Map<Allocation, Long> values = new HashMap<>();
    CompletableFuture<Void> chain = CompletableFuture.completedFuture(null);
    for (Allocation a : batch) {
      chain = chain.thenCompose(v -> allocator(a.name).allocateOnce(tr)).thenAccept(value -> values.put(a, value));
    }
    return chain.thenApply(v -> values);
  }

  /** A timeout: every call of the batch would have met it alone, so none is run again. */
  private static boolean sharedByEveryCall(Throwable t) {
    int code = FdbErrors.codeOf(t);
    return code == FdbErrors.TIMED_OUT || code == FdbErrors.TRANSACTION_TIMED_OUT;
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
