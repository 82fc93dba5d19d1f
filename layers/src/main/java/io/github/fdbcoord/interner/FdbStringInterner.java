package io.github.fdbcoord.interner;

import io.github.fdbcoord.api.InternedString;
import io.github.fdbcoord.api.InternerStats;
import io.github.fdbcoord.coalescing.Coalescer;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.async.AsyncUtil;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.ToLongFunction;

import static io.github.fdbcoord.interner.FdbInternerService.guard;

/** {@link StringInterner} of one namespace incarnation. */
final class FdbStringInterner implements StringInterner {
  private final FdbInternerService service;
  private final String name;
  private final long incarnation;
  private final InternerSchema schema;
  private final InternerCache cache;
  private final InternerOptions options;
  /** Cache misses of concurrent calls, served together (see {@link Coalescer}). */
  final Coalescer<String, Long> interns;
  private final Coalescer<Long, String> lookups;
  private final Coalescer<String, Long> resolves;

  FdbStringInterner(FdbInternerService service, String name, long incarnation, InternerSchema schema) {
    this.service = service;
    this.name = name;
    this.incarnation = incarnation;
    this.schema = schema;
    this.cache = service.cache();
    this.options = service.options();
    this.interns = coalescer(this::internTransaction, FdbStringInterner::weightOf);
    this.lookups = coalescer(ids -> service.read(tr -> readStrings(tr, ids)).thenApply(this::rememberStrings),
        id -> Long.BYTES);
    this.resolves = coalescer(strings -> service.read(tr -> readIds(tr, strings)).thenApply(this::remember),
        FdbStringInterner::weightOf);
  }

  /**
   * Transactions of one kind a namespace handle runs at once before further calls wait to be
   * batched: enough to keep a store with commit latency busy, few enough that calls arriving
   * together share transactions.
   */
  static final int MAX_IN_FLIGHT = 4;
  /**
   * Keys from which waiting calls start a transaction of their own past {@link #MAX_IN_FLIGHT} (up to
   * {@link InternerOptions#maxTransactionsInFlight()}): at a hundred strings the reads and writes per
   * string cost far more than a transaction's read version and commit, so sharing saves little and
   * waiting costs the concurrency. On one real FoundationDB, 64 clients interning batches of 100
   * through 4 shared transactions were once measured 1.29x slower than with a handle each; issue
   * 36's runs found the two rates alike and 4 in flight cheaper in client CPU (docs/sizing.md).
   */
  static final int FULL_BATCH = 64;
  /** Bytes of strings one coalesced transaction takes at most (FoundationDB advises transactions under 1 MB). */
  static final long MAX_BATCH_BYTES = 1 << 20;

  private <K, V> Coalescer<K, V> coalescer(Function<List<K>, CompletableFuture<Map<K, V>>> tx,
      ToLongFunction<K> weight) {
    return new Coalescer<>(tx, FdbStringInterner::sharedByEveryRequest, weight, options.maxBatchSize(),
        MAX_BATCH_BYTES, Math.min(MAX_IN_FLIGHT, options.maxTransactionsInFlight()), FULL_BATCH,
        options.maxTransactionsInFlight(), service.executor(), options.batchWindow());
  }

  /** Failures every request of a batch would have met alone: no point in running them again one by one. */
  private static boolean sharedByEveryRequest(Throwable t) {
    return t instanceof InternerException e
        && (e.kind() == InternerException.Kind.NOT_FOUND || e.kind() == InternerException.Kind.TIMEOUT);
  }

  /** A string's share of a transaction: its forward key and its reverse value, roughly. */
  private static long weightOf(String s) {
    return 2L * s.length() + 16;
  }

  @Override
  public String namespace() {
    return name;
  }

  @Override
  public int sequenceBits() {
    return schema.sequenceBits();
  }

  long incarnation() {
    return incarnation;
  }

  InternerSchema schema() {
    return schema;
  }

  // ---- intern ---------------------------------------------------------------------------------

  @Override
  public CompletableFuture<List<Long>> intern(List<String> strings) {
    return guard(() -> {
      checkBatch(strings);
      long[] ids = new long[strings.size()];
      LinkedHashSet<String> misses = new LinkedHashSet<>();
      for (int i = 0; i < ids.length; i++) {
        Long cached = cache.id(incarnation, checkNotNull(strings, i));
        if (cached == null) {
          misses.add(checkString(strings, i));
        } else {
          ids[i] = cached;
        }
      }
      if (misses.isEmpty()) {
        return CompletableFuture.completedFuture(boxed(ids));
      }
      return interns.submit(new ArrayList<>(misses)).thenApply(assigned -> fillIds(strings, ids, assigned));
    });
  }

  /** One transaction interning {@code strings} (the misses of one call, or of several coalesced); their ids. */
  private CompletableFuture<Map<String, Long>> internTransaction(List<String> strings) {
    service.internTransactions.increment();
    return service.run(tr -> internInTransaction(tr, strings))
        .thenApply(batch -> {
          // Read-through: only ids the transaction read are cached; newly assigned ones are
          // cached when a later read proves them (see InternerCache).
          remember(batch.found);
          return batch.ids;
        });
  }

  @Override
  public CompletableFuture<Long> intern(String string) {
    return guard(() -> {
      List<String> one = Collections.singletonList(string);
      Long cached = cache.id(incarnation, checkNotNull(one, 0));
      return cached != null ? CompletableFuture.completedFuture(cached) : intern(one).thenApply(ids -> ids.get(0));
    });
  }

  /**
   * One attempt: read the forward records of {@code strings} (with conflict ranges, so two clients
   * that both find a string absent and both assign it cannot both commit), then take ids for the
   * absent ones from random sequences. The first sequence's counter is read speculatively alongside
   * the forward records: when nothing is new the transaction writes nothing and that read costs no
   * conflict, and when something is new it saves a round trip.
   */
  private CompletableFuture<PendingBatch> internInTransaction(Transaction tr, List<String> strings) {
    service.internAttempts.increment();
    long firstSequence = options.sequencePicker().pick(schema.sequenceBits());
    // Packed once: the same keys are read now and written for the absent strings.
    byte[][] forwardKeys = new byte[strings.size()][];
    ValueBatch reads = new ValueBatch(strings.size() + 2);
    reads.add(0, tr.get(schema.metaKey()));
    reads.add(1, schema.readCounterValue(tr, firstSequence));
    for (int i = 0; i < forwardKeys.length; i++) {
      forwardKeys[i] = schema.packForwardKey(strings.get(i));
      reads.add(i + 2, tr.get(forwardKeys[i]));
    }
    return reads.values().thenCompose(values -> {
      requireNamespace(values[0] == null ? null : InternerSchema.unpackMeta(values[0]));
      PendingBatch batch = new PendingBatch(strings, forwardKeys, values);
      Allocation allocation = new Allocation(tr, firstSequence, InternerSchema.unpackCounter(values[1]));
      return allocation.take(batch.absentCount()).thenApply(ids -> batch.assign(ids).write(tr));
    });
  }

  private Void requireNamespace(Integer bits) {
    if (bits == null) {
      service.forget(this);
      throw new InternerException(InternerException.Kind.NOT_FOUND,
          "interner namespace '" + name + "' was removed; open it again");
    }
    return null;
  }

  /** Strings of one attempt, split into those that already have ids and those that need one. */
  private final class PendingBatch {
    /** Ids the attempt read from the store. */
    final Map<String, Long> found;
    /** Ids of every string of the batch: found, or assigned by this attempt. */
    final Map<String, Long> ids;
    private final List<String> absent = new ArrayList<>();
    private final List<byte[]> absentKeys = new ArrayList<>();
    private long[] newIds;

    /** {@code values[i + 2]}: the forward record of {@code strings.get(i)}, null when absent. */
    PendingBatch(List<String> strings, byte[][] forwardKeys, byte[][] values) {
      found = new HashMap<>();
      for (int i = 0; i < strings.size(); i++) {
        byte[] id = values[i + 2];
        if (id == null) {
          absent.add(strings.get(i));
          absentKeys.add(forwardKeys[i]);
        } else {
          found.put(strings.get(i), InternerSchema.unpackIdValue(id));
        }
      }
      ids = new HashMap<>(found);
    }

    int absentCount() {
      return absent.size();
    }

    PendingBatch assign(long[] allocated) {
      newIds = allocated;
      return this;
    }

    PendingBatch write(Transaction tr) {
      for (int i = 0; i < absent.size(); i++) {
        String s = absent.get(i);
        long id = newIds[i];
        schema.writeForward(tr, absentKeys.get(i), id);
        schema.writeReverse(tr, id, s);
        ids.put(s, id);
      }
      return this;
    }
  }

  /**
   * Takes ids from random sequences within one transaction: the first non-exhausted sequence
   * serves as many ids as it has left, another random one the rest. Reading the counter (with a
   * conflict range) and writing it back is what keeps two transactions from handing out the same
   * counter; an atomic ADD on a snapshot read would not, because the ids must be known before the
   * commit. Exhausted sequences are skipped; too many in a row fail with EXHAUSTED.
   */
  private final class Allocation {
    private final Transaction tr;
    private long sequence;
    private CompletableFuture<Long> counter;
    private long[] ids;
    private int filled;
    private int exhaustedHits;

    /** {@code firstCounter}: the first sequence's counter, read with the transaction's other reads. */
    Allocation(Transaction tr, long firstSequence, long firstCounter) {
      this.tr = tr;
      this.sequence = firstSequence;
      this.counter = CompletableFuture.completedFuture(firstCounter);
    }

    CompletableFuture<long[]> take(int count) {
      ids = new long[count];
      // Almost always the first sequence serves them all: no loop, no further future.
      if (count == 0 || !takeFromCurrent(counter.join())) {
        return CompletableFuture.completedFuture(ids);
      }
      return AsyncUtil.whileTrue(() -> counter.thenApply(this::takeFromCurrent), service.executor())
          .thenApply(v -> ids);
    }

    /** Takes what the current sequence can give; true while more ids are needed. */
    private boolean takeFromCurrent(long next) {
      long capacity = schema.counterCapacity();
      if (Long.compareUnsigned(next, capacity) >= 0) {
        exhaustedHits++;
        if (exhaustedHits >= options.maxSequenceTries()) {
          throw new InternerException(InternerException.Kind.EXHAUSTED, "no free sequence in interner namespace '"
              + name + "': " + exhaustedHits + " random sequences were exhausted (each holds 2^"
              + schema.counterBits() + " ids; sequenceBits " + schema.sequenceBits() + ")");
        }
        moveToAnotherSequence();
        return true;
      }
      long remaining = capacity - next;
      int wanted = ids.length - filled;
      int k = Long.compareUnsigned(remaining, wanted) >= 0 ? wanted : (int) remaining;
      for (int j = 0; j < k; j++) {
        ids[filled + j] = schema.packId(sequence, next + j);
      }
      schema.writeCounter(tr, sequence, next + k);
      filled += k;
      if (filled == ids.length) {
        return false;
      }
      moveToAnotherSequence();
      return true;
    }

    private void moveToAnotherSequence() {
      sequence = options.sequencePicker().pick(schema.sequenceBits());
      counter = schema.readCounter(tr, sequence);
    }
  }

  /** Caches ids read by a transaction, once it committed (or, for reads, completed). */
  private Map<String, Long> remember(Map<String, Long> assigned) {
    assigned.forEach((s, id) -> cache.putId(incarnation, s, id));
    return assigned;
  }

  private static List<Long> fillIds(List<String> strings, long[] ids, Map<String, Long> assigned) {
    for (int i = 0; i < ids.length; i++) {
      Long id = assigned.get(strings.get(i));
      if (id != null) {
        ids[i] = id;
      }
    }
    return boxed(ids);
  }

  // ---- lookup: id -> string -------------------------------------------------------------------

  @Override
  public CompletableFuture<List<Optional<String>>> lookup(List<Long> ids) {
    return guard(() -> {
      checkBatch(ids);
      String[] strings = new String[ids.size()];
      LinkedHashSet<Long> misses = new LinkedHashSet<>();
      for (int i = 0; i < strings.length; i++) {
        long id = checkId(ids, i);
        strings[i] = cache.string(incarnation, id);
        if (strings[i] == null) {
          misses.add(id);
        }
      }
      if (misses.isEmpty()) {
        return CompletableFuture.completedFuture(optionals(strings));
      }
      return lookups.submit(new ArrayList<>(misses))
          .thenApply(found -> {
            for (int i = 0; i < strings.length; i++) {
              strings[i] = strings[i] != null ? strings[i] : found.get(ids.get(i));
            }
            return optionals(strings);
          });
    });
  }

  @Override
  public CompletableFuture<Optional<String>> lookup(long id) {
    return guard(() -> {
      List<Long> one = Collections.singletonList(id);
      checkId(one, 0);
      String cached = cache.string(incarnation, id);
      return cached != null
          ? CompletableFuture.completedFuture(Optional.of(cached))
          : lookup(one).thenApply(l -> l.get(0));
    });
  }

  private CompletableFuture<Map<Long, String>> readStrings(ReadTransaction tr, List<Long> ids) {
    ValueBatch reads = new ValueBatch(ids.size());
    for (int i = 0; i < ids.size(); i++) {
      reads.add(i, tr.get(schema.packReverseKey(ids.get(i))));
    }
    return reads.values().thenApply(values -> {
      Map<Long, String> found = new HashMap<>(ids.size() * 2);
      for (int i = 0; i < ids.size(); i++) {
        if (values[i] != null) {
          found.put(ids.get(i), InternerSchema.unpackStringValue(values[i]));
        }
      }
      return found;
    });
  }

  private Map<Long, String> rememberStrings(Map<Long, String> found) {
    found.forEach((id, s) -> cache.put(incarnation, s, id));
    return found;
  }

  // ---- resolve: string -> id without assigning ------------------------------------------------

  @Override
  public CompletableFuture<List<OptionalLong>> resolve(List<String> strings) {
    return guard(() -> {
      checkBatch(strings);
      Long[] ids = new Long[strings.size()];
      LinkedHashSet<String> misses = new LinkedHashSet<>();
      for (int i = 0; i < ids.length; i++) {
        ids[i] = cache.id(incarnation, checkNotNull(strings, i));
        if (ids[i] == null) {
          misses.add(checkString(strings, i));
        }
      }
      if (misses.isEmpty()) {
        return CompletableFuture.completedFuture(optionalLongs(ids));
      }
      return resolves.submit(new ArrayList<>(misses))
          .thenApply(found -> {
            for (int i = 0; i < ids.length; i++) {
              ids[i] = ids[i] != null ? ids[i] : found.get(strings.get(i));
            }
            return optionalLongs(ids);
          });
    });
  }

  @Override
  public CompletableFuture<OptionalLong> resolve(String string) {
    return guard(() -> {
      List<String> one = Collections.singletonList(string);
      Long cached = cache.id(incarnation, checkNotNull(one, 0));
      return cached != null
          ? CompletableFuture.completedFuture(OptionalLong.of(cached))
          : resolve(one).thenApply(l -> l.get(0));
    });
  }

  private CompletableFuture<Map<String, Long>> readIds(ReadTransaction tr, List<String> strings) {
    ValueBatch reads = new ValueBatch(strings.size());
    for (int i = 0; i < strings.size(); i++) {
      reads.add(i, tr.get(schema.packForwardKey(strings.get(i))));
    }
    return reads.values().thenApply(values -> {
      Map<String, Long> found = new HashMap<>(strings.size() * 2);
      for (int i = 0; i < strings.size(); i++) {
        if (values[i] != null) {
          found.put(strings.get(i), InternerSchema.unpackIdValue(values[i]));
        }
      }
      return found;
    });
  }

  // ---- browsing: stats and pages in id order --------------------------------------------------

  @Override
  public CompletableFuture<InternerStats> stats() {
    return service.read(tr -> InternerSchema.readMeta(tr, schema.namespace())
        .thenCombine(schema.readUsage(tr, service.executor()), (bits, usage) -> {
          requireNamespace(bits);
          return new InternerStats(name, usage.idsAssigned(), usage.sequencesInUse(), schema.sequenceBits());
        }));
  }

  @Override
  public CompletableFuture<List<InternedString>> list(long afterId, int limit) {
    return guard(() -> {
      if (limit < 1 || limit > options.maxBatchSize()) {
        throw InternerException.badRequest("limit must be between 1 and " + options.maxBatchSize() + ", got " + limit);
      }
      return service.read(tr -> schema.readReversePage(tr, afterId, limit, service.executor()));
    });
  }

  // ---- input checks ---------------------------------------------------------------------------

  private void checkBatch(List<?> batch) {
    if (batch == null) {
      throw InternerException.badRequest("batch must not be null");
    }
    if (batch.size() > options.maxBatchSize()) {
      throw InternerException.badRequest("batch of " + batch.size() + " elements exceeds the limit of "
          + options.maxBatchSize());
    }
  }

  private static String checkNotNull(List<String> strings, int index) {
    String s = strings.get(index);
    if (s == null) {
      throw InternerException.badRequest("string at index " + index + " is null");
    }
    return s;
  }

  /** Full check of a string that missed the cache (a cached string passed it already). */
  private String checkString(List<String> strings, int index) {
    String s = checkNotNull(strings, index);
    int keyLength = schema.forwardKeyLength(s);
    if (keyLength < 0) {
      throw InternerException.badRequest("string at index " + index
          + " is not well-formed UTF-16 (it has an unpaired surrogate), so it has no UTF-8 form");
    }
    if (keyLength > InternerSchema.KEY_SIZE_LIMIT) {
      throw InternerException.badRequest("string at index " + index + " is too long: "
          + (InternerSchema.tupleStringLength(s) - 2) + " bytes encoded, its key would be " + keyLength
          + " bytes but FoundationDB keys are limited to " + InternerSchema.KEY_SIZE_LIMIT
          + " bytes; at most " + schema.maxStringBytes() + " UTF-8 bytes fit in namespace '" + name
          + "' (NUL characters count twice)");
    }
    return s;
  }

  private long checkId(List<Long> ids, int index) {
    Long id = ids.get(index);
    if (id == null) {
      throw InternerException.badRequest("id at index " + index + " is null");
    }
    if (!schema.isValidId(id)) {
      throw InternerException.badRequest("id " + InternerIds.format(id) + " at index " + index
          + " is not a valid id in namespace '" + name + "': its sequence part (the top "
          + schema.sequenceBits() + " bits) is 0, which is reserved");
    }
    return id;
  }

  private static List<Long> boxed(long[] ids) {
    return Arrays.stream(ids).boxed().toList();
  }

  private static List<Optional<String>> optionals(String[] strings) {
    return Arrays.stream(strings).map(Optional::ofNullable).toList();
  }

  private static List<OptionalLong> optionalLongs(Long[] ids) {
    return Arrays.stream(ids).map(id -> id == null ? OptionalLong.empty() : OptionalLong.of(id)).toList();
  }
}
