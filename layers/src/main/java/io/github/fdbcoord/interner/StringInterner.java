package io.github.fdbcoord.interner;

import io.github.fdbcoord.api.InternedString;
import io.github.fdbcoord.api.InternerStats;

import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;

/**
 * One interner namespace: strings to collision-free unsigned 64-bit ids and back.
 *
 * <p>Every future fails with an {@link InternerException} whose {@link InternerException#kind()}
 * says what went wrong. Batches are all-or-nothing: one bad element fails the whole call with
 * BAD_REQUEST naming its index, and nothing is written.
 *
 * <p>Ids are unsigned (see {@link InternerIds}); 0 is never an id. A handle is bound to the namespace
 * incarnation it opened: after the namespace is removed, {@link #intern} fails with NOT_FOUND and the
 * caller re-opens it through {@link InternerService#open}.
 */
public interface StringInterner {

  /** The namespace's name (the last element of its directory path). */
  String namespace();

  /** Sequence bits of this namespace, fixed when it was created. */
  int sequenceBits();

  /**
   * The ids of {@code strings}, in the same order, assigning new ids to strings never seen before,
   * all in one transaction. The same string always gets the same id, also when many clients intern
   * it at the same moment; duplicates within the batch get the same id. An empty batch gives an
   * empty list.
   *
   * <p>BAD_REQUEST: null list or element, unpaired surrogate, a string whose key would exceed
   * FoundationDB's 10,000-byte key limit, more than {@link InternerOptions#maxBatchSize()} strings
   * or a batch too large for one transaction. NOT_FOUND: the namespace was removed. EXHAUSTED: no
   * free sequence found. CONFLICT / TIMEOUT / STORE_FAILURE: from the store.
   */
  CompletableFuture<List<Long>> intern(List<String> strings);

  /** {@link #intern(List)} for one string. */
  CompletableFuture<Long> intern(String string);

  /**
   * The strings of {@code ids}, in the same order; empty for an id no string has. BAD_REQUEST for a
   * null element or an id whose sequence part is 0 (never assigned by construction).
   */
  CompletableFuture<List<Optional<String>>> lookup(List<Long> ids);

  /** {@link #lookup(List)} for one id. */
  CompletableFuture<Optional<String>> lookup(long id);

  /**
   * The ids of {@code strings}, in the same order, without assigning any: empty for a string never
   * interned. Same input rules as {@link #intern(List)}.
   */
  CompletableFuture<List<OptionalLong>> resolve(List<String> strings);

  /** {@link #resolve(List)} for one string. */
  CompletableFuture<OptionalLong> resolve(String string);

  /**
   * How many strings the namespace holds and how many of its sequences are in use, read in one
   * transaction from the sequence counters (never from the strings themselves). NOT_FOUND: the
   * namespace was removed.
   */
  CompletableFuture<InternerStats> stats();

  /**
   * At most {@code limit} strings with ids above {@code afterId} (compared unsigned; 0 starts at the
   * first), in unsigned id order: page by passing the last id of the previous page. BAD_REQUEST:
   * {@code limit} outside 1..{@link InternerOptions#maxBatchSize()}.
   */
  CompletableFuture<List<InternedString>> list(long afterId, int limit);
}
