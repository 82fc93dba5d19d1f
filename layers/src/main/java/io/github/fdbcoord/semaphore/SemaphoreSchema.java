package io.github.fdbcoord.semaphore;

import io.github.fdbcoord.mutex.MutexService;
import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.MutationType;
import com.apple.foundationdb.Range;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.ByteArrayUtil;
import com.apple.foundationdb.tuple.Tuple;
import com.apple.foundationdb.tuple.Versionstamp;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.fdb.Versionstamps;
import io.github.fdbcoord.lease.EndedGrants;
import io.github.fdbcoord.semaphore.SemaphoreService.Holder;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The whole key schema of the semaphore layer: a pack and an unpack function for every key and value, and one
 * function per query. {@link FdbSemaphoreService} only composes these.
 *
 * <pre>
 * root("active", name)                    = ''                         index of semaphores with holders or waiters (the reaper scans it)
 * root("s", name, "permits")              = (permits:int)              the permit count, fixed while the semaphore is in use
 * root("s", name, "generation")           = token:10 bytes             changes with every grant and every end of a grant (observers watch it)
 * root("s", name, "changes")              = token:10 bytes             changes with every enqueue and dequeue (observers watch it with the generation)
 * root("s", name, "holder", owner)        = (token:vstamp)             one permit held; written only at the grant, cleared at its end (its waiter watches it)
 * root("s", name, "beat", owner)          = (beats:int)                the holder's heartbeat count (heartbeats write here only)
 * root("s", name, "queue", ticket)        = (owner:str, beats:int)     FIFO queue, ticket = versionstamp of the enqueue
 * root("s", name, "queued", owner)        = (ticket:vstamp)            the owner's queue entry: nobody enqueues twice
 * root("ended") + token                   = (name, owner)              a grant its owner released lately ({@link EndedGrants})
 * </pre>
 *
 * <p>Every acquire reads the holder range and the queue head with conflict, so two grants that would exceed the
 * permits cannot both commit. The holder key is written only when a grant starts or ends, so a holder's fenced
 * transaction (which reads it with conflict) conflicts with the end of its grant and never with its own heartbeats;
 * a heartbeat reads the holder key with conflict and writes the beat key, which the reaper reads with conflict before
 * it ends a grant, so a heartbeat and an expiry never both commit.
 */
final class SemaphoreSchema {
  private static final String ACTIVE = "active";
  private static final String SEMAPHORES = "s";
  private static final String PERMITS = "permits";
  private static final String GENERATION = "generation";
  private static final String CHANGES = "changes";
  private static final String HOLDER = "holder";
  private static final String BEAT = "beat";
  private static final String QUEUE = "queue";
  private static final String QUEUED = "queued";
  private static final String ENDED = "ended";

  private final Subspace root;
  private final EndedGrants ended;

  SemaphoreSchema(Subspace root) {
    this.root = root;
    this.ended = new EndedGrants(root.get(ENDED));
  }

  /** The grants their owners released lately, which a retried release looks for. */
  EndedGrants ended() {
    return ended;
  }

  /** Checks a semaphore or owner name by the mutex's rules (non-null, non-empty, at most 1,024 UTF-8 bytes). */
  static String checkName(String value, String what) {
    return MutexService.checkName(value, what);
  }

  Subspace semaphore(String name) {
    return root.get(SEMAPHORES).get(name);
  }

  /** A queue entry: its ticket, owner and beat count. */
  record Waiter(Versionstamp ticket, String owner, long beats) {}

  /** The token form of a complete versionstamp (user version 0). */
  static FencingToken token(Versionstamp vs) {
    return FencingToken.of(vs.getTransactionVersion());
  }

  static Versionstamp versionstamp(FencingToken token) {
    return Versionstamp.complete(token.bytes(), 0);
  }

  // ---------------------------------------------------------------- active index

  byte[] packActiveKey(String name) {
    return root.pack(Tuple.from(ACTIVE, name));
  }

  String unpackActiveKey(byte[] key) {
    return root.unpack(key).getString(1);
  }

  // ---------------------------------------------------------------- permits

  byte[] packPermitsKey(String name) {
    return semaphore(name).pack(Tuple.from(PERMITS));
  }

  byte[] packPermitsValue(int permits) {
    return Tuple.from(permits).pack();
  }

  int unpackPermitsValue(byte[] value) {
    return (int) Tuple.fromBytes(value).getLong(0);
  }

  // ---------------------------------------------------------------- generation

  byte[] packGenerationKey(String name) {
    return semaphore(name).pack(Tuple.from(GENERATION));
  }

  /** SET_VERSIONSTAMPED_VALUE operand: the raw 10-byte versionstamp of the commit. */
  byte[] packGenerationValueForChange() {
    return Versionstamps.rawValue(new byte[0]);
  }

  byte[] packGenerationValue(FencingToken generation) {
    return generation.bytes();
  }

  FencingToken unpackGenerationValue(byte[] value) {
    return FencingToken.of(value);
  }

  // ---------------------------------------------------------------- holders

  byte[] packHolderKey(String name, String owner) {
    return semaphore(name).pack(Tuple.from(HOLDER, owner));
  }

  String unpackHolderKey(String name, byte[] key) {
    return semaphore(name).unpack(key).getString(1);
  }

  Range holderRange(String name) {
    return semaphore(name).range(Tuple.from(HOLDER));
  }

  /** SET_VERSIONSTAMPED_VALUE operand of a grant: the commit's versionstamp becomes the fencing token. */
  byte[] packHolderValueForGrant() {
    return Versionstamps.packValue(Tuple.from(Versionstamp.incomplete(0)));
  }

  byte[] packHolderValue(FencingToken token) {
    return Tuple.from(versionstamp(token)).pack();
  }

  FencingToken unpackHolderValue(byte[] value) {
    return token(Tuple.fromBytes(value).getVersionstamp(0));
  }

  byte[] packBeatKey(String name, String owner) {
    return semaphore(name).pack(Tuple.from(BEAT, owner));
  }

  byte[] packBeatValue(long beats) {
    return Tuple.from(beats).pack();
  }

  long unpackBeatValue(byte[] value) {
    return Tuple.fromBytes(value).getLong(0);
  }

  // ---------------------------------------------------------------- queue

  Range queueRange(String name) {
    return semaphore(name).range(Tuple.from(QUEUE));
  }

  /** SET_VERSIONSTAMPED_KEY operand of a new queue entry: the commit's versionstamp becomes the ticket. */
  byte[] packQueueKeyForEnqueue(String name) {
    return Versionstamps.packKey(semaphore(name).getKey(), Tuple.from(QUEUE, Versionstamp.incomplete(0)));
  }

  byte[] packQueueKey(String name, Versionstamp ticket) {
    return semaphore(name).pack(Tuple.from(QUEUE, ticket));
  }

  Versionstamp unpackQueueKey(String name, byte[] key) {
    return semaphore(name).unpack(key).getVersionstamp(1);
  }

  byte[] packQueueValue(String owner, long beats) {
    return Tuple.from(owner, beats).pack();
  }

  Waiter unpackQueueEntry(String name, byte[] key, byte[] value) {
    Tuple t = Tuple.fromBytes(value);
    return new Waiter(unpackQueueKey(name, key), t.getString(0), t.getLong(1));
  }

  byte[] packQueuedKey(String name, String owner) {
    return semaphore(name).pack(Tuple.from(QUEUED, owner));
  }

  /** SET_VERSIONSTAMPED_VALUE operand of the owner's queue index: the same versionstamp as its ticket. */
  byte[] packQueuedValueForEnqueue() {
    return Versionstamps.packValue(Tuple.from(Versionstamp.incomplete(0)));
  }

  byte[] packQueuedValue(Versionstamp ticket) {
    return Tuple.from(ticket).pack();
  }

  Versionstamp unpackQueuedValue(byte[] value) {
    return Tuple.fromBytes(value).getVersionstamp(0);
  }

  // ================================================================ queries

  CompletableFuture<Integer> readPermits(ReadTransaction tr, String name) {
    return tr.get(packPermitsKey(name)).thenApply(v -> v == null ? null : unpackPermitsValue(v));
  }

  /** Every holder, with a read conflict on the whole holder range. */
  CompletableFuture<List<Holder>> readHolders(ReadTransaction tr, String name) {
    return tr.getRange(holderRange(name)).asList().thenApply(kvs -> {
      List<Holder> out = new ArrayList<>(kvs.size());
      for (KeyValue kv : kvs) {
        out.add(new Holder(unpackHolderKey(name, kv.getKey()), unpackHolderValue(kv.getValue())));
      }
      return out;
    });
  }

  /** {@code owner}'s grant, or null. */
  CompletableFuture<FencingToken> readHolder(ReadTransaction tr, String name, String owner) {
    return tr.get(packHolderKey(name, owner)).thenApply(v -> v == null ? null : unpackHolderValue(v));
  }

  CompletableFuture<Long> readBeat(ReadTransaction tr, String name, String owner) {
    return tr.get(packBeatKey(name, owner)).thenApply(v -> v == null ? null : unpackBeatValue(v));
  }

  /** The first {@code limit} queue entries, oldest ticket first. */
  CompletableFuture<List<Waiter>> readQueue(ReadTransaction tr, String name, int limit) {
    Range r = queueRange(name);
    return tr.getRange(r.begin, r.end, limit).asList().thenApply(kvs -> {
      List<Waiter> out = new ArrayList<>(kvs.size());
      for (KeyValue kv : kvs) {
        out.add(unpackQueueEntry(name, kv.getKey(), kv.getValue()));
      }
      return out;
    });
  }

  CompletableFuture<Waiter> readWaiter(ReadTransaction tr, String name, Versionstamp ticket) {
    byte[] key = packQueueKey(name, ticket);
    return tr.get(key).thenApply(v -> v == null ? null : unpackQueueEntry(name, key, v));
  }

  /** {@code owner}'s ticket, or null when it does not wait. */
  CompletableFuture<Versionstamp> readTicket(ReadTransaction tr, String name, String owner) {
    return tr.get(packQueuedKey(name, owner)).thenApply(v -> v == null ? null : unpackQueuedValue(v));
  }

  /** Names of semaphores in use, after {@code after} (from the first when null), at most {@code limit}. */
  CompletableFuture<List<String>> readActive(ReadTransaction tr, String after, int limit) {
    Range all = root.range(Tuple.from(ACTIVE));
    byte[] begin = after == null ? all.begin : ByteArrayUtil.join(packActiveKey(after), new byte[] {0});
    return tr.getRange(begin, all.end, limit).asList().thenApply(kvs -> {
      List<String> out = new ArrayList<>(kvs.size());
      for (KeyValue kv : kvs) {
        out.add(unpackActiveKey(kv.getKey()));
      }
      return out;
    });
  }

  /**
   * The version of the semaphore's holders and queue: the newer of the generation and the changes key, so the
   * versionstamp of the last commit that changed either (all zeros when none ever did).
   */
  CompletableFuture<FencingToken> readVersion(ReadTransaction tr, String name) {
    return tr.get(packGenerationKey(name)).thenCombine(tr.get(packChangesKey(name)),
        SemaphoreSchema::newer);
  }

  /** The newer of two generation values (raw versionstamps, null when unset); all zeros when both are unset. */
  static FencingToken newer(byte[] a, byte[] b) {
    FencingToken x = FencingToken.of(a == null ? new byte[FencingToken.LENGTH] : a);
    FencingToken y = FencingToken.of(b == null ? new byte[FencingToken.LENGTH] : b);
    return y.isNewerThan(x) ? y : x;
  }

  /** A watch on the changes key (fires on the next enqueue or dequeue): waiters do not need it. */
  CompletableFuture<Void> watchChanges(Transaction tr, String name) {
    return tr.watch(packChangesKey(name));
  }

  byte[] packChangesKey(String name) {
    return semaphore(name).pack(Tuple.from(CHANGES));
  }

  /** A watch on the generation key (fires on the next grant or end of a grant). */
  CompletableFuture<Void> watchGeneration(Transaction tr, String name) {
    return tr.watch(packGenerationKey(name));
  }

  /**
   * A watch on {@code owner}'s holder key: fires when it is granted a permit (or its grant ends). A waiter watches
   * this rather than the generation, so that a grant wakes the one waiter it lets in, not every waiter.
   */
  CompletableFuture<Void> watchHolder(Transaction tr, String name, String owner) {
    return tr.watch(packHolderKey(name, owner));
  }

  // ================================================================ writes

  /**
   * Marks the semaphore in use with {@code permits}; the count is written only when none is stored
   * ({@code stored} false): every acquire reads it with a conflict, so rewriting it made every two acquires
   * conflict.
   */
  void markInUse(Transaction tr, String name, int permits, boolean stored) {
    if (!stored) {
      tr.set(packPermitsKey(name), packPermitsValue(permits));
    }
    tr.set(packActiveKey(name), new byte[0]);
  }

  /** Clears the permit count and the index entry of a semaphore with neither holders nor waiters. */
  void clearUnused(Transaction tr, String name) {
    tr.clear(packPermitsKey(name));
    tr.clear(packActiveKey(name));
  }

  /** Grants a permit to {@code owner}; its token is this commit's versionstamp. */
  void grant(Transaction tr, String name, String owner) {
    tr.mutate(MutationType.SET_VERSIONSTAMPED_VALUE, packHolderKey(name, owner), packHolderValueForGrant());
    tr.set(packBeatKey(name, owner), packBeatValue(0));
    bumpGeneration(tr, name);
  }

  /** Ends {@code owner}'s grant. */
  void removeHolder(Transaction tr, String name, String owner) {
    tr.clear(packHolderKey(name, owner));
    tr.clear(packBeatKey(name, owner));
    bumpGeneration(tr, name);
  }

  void setBeat(Transaction tr, String name, String owner, long beats) {
    tr.set(packBeatKey(name, owner), packBeatValue(beats));
  }

  void enqueue(Transaction tr, String name, String owner) {
    tr.mutate(MutationType.SET_VERSIONSTAMPED_KEY, packQueueKeyForEnqueue(name), packQueueValue(owner, 0));
    tr.mutate(MutationType.SET_VERSIONSTAMPED_VALUE, packQueuedKey(name, owner), packQueuedValueForEnqueue());
    bumpChanges(tr, name);
  }

  void setWaiterBeats(Transaction tr, String name, Waiter w, long beats) {
    tr.set(packQueueKey(name, w.ticket()), packQueueValue(w.owner(), beats));
  }

  void dequeue(Transaction tr, String name, Versionstamp ticket, String owner) {
    tr.clear(packQueueKey(name, ticket));
    tr.clear(packQueuedKey(name, owner));
    bumpChanges(tr, name);
  }

  /**
   * A blind write apart from the generation, so that queue changes wake observers and not the waiters (who watch the
   * generation, and would all read again on every enqueue).
   */
  private void bumpChanges(Transaction tr, String name) {
    tr.mutate(MutationType.SET_VERSIONSTAMPED_VALUE, packChangesKey(name), packGenerationValueForChange());
  }

  private void bumpGeneration(Transaction tr, String name) {
    tr.mutate(MutationType.SET_VERSIONSTAMPED_VALUE, packGenerationKey(name), packGenerationValueForChange());
  }
}
