package io.github.fdbcoord.rwlock;

import com.apple.foundationdb.KeySelector;
import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.MutationType;
import com.apple.foundationdb.Range;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.Tuple;
import com.apple.foundationdb.tuple.Versionstamp;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.fdb.Versionstamps;
import io.github.fdbcoord.lease.EndedGrants;
import io.github.fdbcoord.mutex.MutexService;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The whole key schema of the read-write lock layer: a pack and an unpack function for every key
 * and value, and one function per query. {@link FdbReadWriteLockService} only composes these.
 *
 * <pre>
 * root("active", name)              = ''                          locks with a holder or a waiter (the reaper scans it)
 * root("l", name, "grant", owner)   = (mode:str, token:vstamp)    one per holder; written only when the grant is made, downgraded or ends
 * root("l", name, "lease", owner)   = (expiresAt:int)             the holder's lease (ms since the epoch); heartbeats rewrite it
 * root("l", name, "queue", ticket)  = (owner:str, mode:str, expiresAt:int)   FIFO queue, ticket = versionstamp of the enqueue
 * root("l", name, "queued", owner)  = (ticket:vstamp)             the owner's queue entry: nobody enqueues twice
 * root("l", name, "generation")     = 10 bytes                    a commit's versionstamp, written by every grant (observers watch it; a waiter watches its grant key)
 * root("l", name, "changes")         = 10 bytes                    a commit's versionstamp, written by every enqueue, dequeue and end of a grant (observers watch it with the generation)
 * root("l", name, "writer")         = (owner:str)                 while a writer holds: a reader reads this key (with a conflict) instead of the holders
 * root("ended") + token             = (lock, owner[, successor])  a grant its owner released or downgraded lately ({@link EndedGrants})
 * </pre>
 *
 * <p>The grant key and the lease key are apart so that a holder's heartbeats never touch what
 * {@code fence} reads with a conflict: a fenced transaction conflicts with the end of its own grant
 * (release, expiry, downgrade) and with nothing else. A queue entry's deadline is rewritten by its
 * waiter's heartbeats; the reaper removes holders and waiters whose deadline passed.
 *
 * <p>A grant's token is written with SET_VERSIONSTAMPED_VALUE: several grants made by one commit (a
 * writer's release handing the lock to a run of readers) get distinct user versions.
 */
final class ReadWriteLockSchema {
  /** Longest lock or owner name, in UTF-8 bytes (the mutex layer's limit). */
  static final int MAX_NAME_BYTES = MutexService.MAX_NAME_BYTES;

  private static final String ACTIVE = "active";
  private static final String LOCKS = "l";
  private static final String GRANT = "grant";
  private static final String LEASE = "lease";
  private static final String QUEUE = "queue";
  private static final String QUEUED = "queued";
  private static final String GENERATION = "generation";
  private static final String CHANGES = "changes";
  private static final String WRITER = "writer";
  private static final String ENDED = "ended";

  private final Subspace root;
  private final EndedGrants ended;

  ReadWriteLockSchema(Subspace root) {
    this.root = root;
    this.ended = new EndedGrants(root.get(ENDED));
  }

  /** The grants their owners ended lately, which a retried release or downgrade looks for. */
  EndedGrants ended() {
    return ended;
  }

  /** The subspace holding everything about lock {@code name}. */
  Subspace lock(String name) {
    return root.get(LOCKS).get(name);
  }

  /** Checks a lock or owner name: non-empty, at most {@link #MAX_NAME_BYTES} UTF-8 bytes. */
  static String checkName(String value, String what) {
    return MutexService.checkName(value, what);
  }

  /** One holder: its grant key's owner and its value. */
  record Holder(String owner, LockMode mode, Versionstamp token) {
    ReadWriteGrant toGrant(String lock) {
      return new ReadWriteGrant(lock, owner, mode, token);
    }
  }

  /** One queue entry: key (ticket) and value. */
  record Waiter(Versionstamp ticket, String owner, LockMode mode, long expiresAt) {}

  // ---------------------------------------------------------------- grant

  Range grantRange(String name) {
    return lock(name).range(Tuple.from(GRANT));
  }

  byte[] packGrantKey(String name, String owner) {
    return lock(name).pack(Tuple.from(GRANT, owner));
  }

  String unpackGrantKey(String name, byte[] key) {
    return lock(name).unpack(key).getString(1);
  }

  /** SET_VERSIONSTAMPED_VALUE operand of a new grant: the commit's versionstamp with {@code userVersion} becomes the token. */
  byte[] packGrantValueForGrant(LockMode mode, int userVersion) {
    return Versionstamps.packValue(Tuple.from(mode.name(), Versionstamp.incomplete(userVersion)));
  }

  byte[] packGrantValue(LockMode mode, Versionstamp token) {
    return Tuple.from(mode.name(), token).pack();
  }

  /** The grant value's mode and token, as a holder of {@code owner}. */
  Holder unpackGrantValue(String owner, byte[] value) {
    Tuple t = Tuple.fromBytes(value);
    return new Holder(owner, LockMode.valueOf(t.getString(0)), t.getVersionstamp(1));
  }

  // ---------------------------------------------------------------- lease

  Range leaseRange(String name) {
    return lock(name).range(Tuple.from(LEASE));
  }

  byte[] packLeaseKey(String name, String owner) {
    return lock(name).pack(Tuple.from(LEASE, owner));
  }

  String unpackLeaseKey(String name, byte[] key) {
    return lock(name).unpack(key).getString(1);
  }

  byte[] packLeaseValue(long expiresAt) {
    return Tuple.from(expiresAt).pack();
  }

  long unpackLeaseValue(byte[] value) {
    return Tuple.fromBytes(value).getLong(0);
  }

  // ---------------------------------------------------------------- queue

  Range queueRange(String name) {
    return lock(name).range(Tuple.from(QUEUE));
  }

  /** SET_VERSIONSTAMPED_KEY operand of a new queue entry: the commit's versionstamp becomes the ticket. */
  byte[] packQueueKeyForEnqueue(String name) {
    return Versionstamps.packKey(lock(name).getKey(), Tuple.from(QUEUE, Versionstamp.incomplete(0)));
  }

  byte[] packQueueKey(String name, Versionstamp ticket) {
    return lock(name).pack(Tuple.from(QUEUE, ticket));
  }

  Versionstamp unpackQueueKey(String name, byte[] key) {
    return lock(name).unpack(key).getVersionstamp(1);
  }

  byte[] packQueueValue(String owner, LockMode mode, long expiresAt) {
    return Tuple.from(owner, mode.name(), expiresAt).pack();
  }

  /** The queue value under {@code ticket}, as a waiter. */
  Waiter unpackQueueValue(Versionstamp ticket, byte[] value) {
    Tuple t = Tuple.fromBytes(value);
    return new Waiter(ticket, t.getString(0), LockMode.valueOf(t.getString(1)), t.getLong(2));
  }

  byte[] packQueuedKey(String name, String owner) {
    return lock(name).pack(Tuple.from(QUEUED, owner));
  }

  String unpackQueuedKey(String name, byte[] key) {
    return lock(name).unpack(key).getString(1);
  }

  /** SET_VERSIONSTAMPED_VALUE operand: the same versionstamp as the queue key written in the same commit. */
  byte[] packQueuedValueForEnqueue() {
    return Versionstamps.packValue(Tuple.from(Versionstamp.incomplete(0)));
  }

  byte[] packQueuedValue(Versionstamp ticket) {
    return Tuple.from(ticket).pack();
  }

  Versionstamp unpackQueuedValue(byte[] value) {
    return Tuple.fromBytes(value).getVersionstamp(0);
  }

  // ---------------------------------------------------------------- generation

  byte[] packGenerationKey(String name) {
    return lock(name).pack(Tuple.from(GENERATION));
  }

  /** SET_VERSIONSTAMPED_VALUE operand: the raw 10-byte versionstamp of the commit. */
  byte[] packGenerationValueForChange() {
    return Versionstamps.rawValue(new byte[0]);
  }

  byte[] packGenerationValue(byte[] versionstamp) {
    return versionstamp.clone();
  }

  byte[] unpackGenerationValue(byte[] value) {
    return value.clone();
  }

  // ---------------------------------------------------------------- writer

  byte[] packWriterKey(String name) {
    return lock(name).pack(Tuple.from(WRITER));
  }

  byte[] packWriterValue(String owner) {
    return Tuple.from(owner).pack();
  }

  String unpackWriterValue(byte[] value) {
    return Tuple.fromBytes(value).getString(0);
  }

  /**
   * Whether a writer holds {@code name}, read with a conflict: a reader that may go in reads this one key, not the
   * holders, so that readers going in at once do not conflict with each other (each writes a holder key), only with
   * a writer's grant or end.
   */
  CompletableFuture<Boolean> readWriterHolds(ReadTransaction tr, String name) {
    return tr.get(packWriterKey(name)).thenApply(v -> v != null);
  }

  // ---------------------------------------------------------------- active index

  Range activeRange() {
    return root.range(Tuple.from(ACTIVE));
  }

  byte[] packActiveKey(String name) {
    return root.pack(Tuple.from(ACTIVE, name));
  }

  String unpackActiveKey(byte[] key) {
    return root.unpack(key).getString(1);
  }

  byte[] packActiveValue() {
    return new byte[0];
  }

  // ================================================================ queries

  /** {@code owner}'s grant, or null when it holds nothing. */
  CompletableFuture<Holder> readGrant(ReadTransaction tr, String name, String owner) {
    return tr.get(packGrantKey(name, owner)).thenApply(v -> v == null ? null : unpackGrantValue(owner, v));
  }

  /** Every holder, in owner order. */
  CompletableFuture<List<Holder>> readHolders(ReadTransaction tr, String name) {
    return tr.getRange(grantRange(name)).asList().thenApply(kvs -> {
      List<Holder> out = new ArrayList<>(kvs.size());
      for (KeyValue kv : kvs) {
        out.add(unpackGrantValue(unpackGrantKey(name, kv.getKey()), kv.getValue()));
      }
      return out;
    });
  }

  /** Makes {@code owner} a holder in {@code mode}, its token this commit's versionstamp with {@code userVersion}. */
  void writeGrant(Transaction tr, String name, String owner, LockMode mode, int userVersion) {
    tr.mutate(MutationType.SET_VERSIONSTAMPED_VALUE, packGrantKey(name, owner), packGrantValueForGrant(mode, userVersion));
    if (mode == LockMode.WRITE) {
      tr.set(packWriterKey(name), packWriterValue(owner));
    }
  }

  /** Ends {@code owner}'s grant in {@code mode}: its grant and its lease (and the writer key for a writer). */
  void clearGrant(Transaction tr, String name, String owner, LockMode mode) {
    tr.clear(packGrantKey(name, owner));
    tr.clear(packLeaseKey(name, owner));
    if (mode == LockMode.WRITE) {
      tr.clear(packWriterKey(name));
    }    touchChanges(tr, name);
  }

  /** A writer's grant became a reader's (downgrade): no writer holds any more. */
  void clearWriter(Transaction tr, String name) {
    tr.clear(packWriterKey(name));
  }

  /** Every holder's lease deadline, by owner. */
  CompletableFuture<Map<String, Long>> readLeases(ReadTransaction tr, String name) {
    return tr.getRange(leaseRange(name)).asList().thenApply(kvs -> {
      Map<String, Long> out = new LinkedHashMap<>();
      for (KeyValue kv : kvs) {
        out.put(unpackLeaseKey(name, kv.getKey()), unpackLeaseValue(kv.getValue()));
      }
      return out;
    });
  }

  void writeLease(Transaction tr, String name, String owner, long expiresAt) {
    tr.set(packLeaseKey(name, owner), packLeaseValue(expiresAt));
  }

  /** Up to {@code limit} queue entries, head first. */
  CompletableFuture<List<Waiter>> readQueue(ReadTransaction tr, String name, int limit) {
    return tr.getRange(queueRange(name), limit).asList().thenApply(kvs -> {
      List<Waiter> out = new ArrayList<>(kvs.size());
      for (KeyValue kv : kvs) {
        out.add(unpackQueueValue(unpackQueueKey(name, kv.getKey()), kv.getValue()));
      }
      return out;
    });
  }

  /** Appends {@code owner} to the queue under this commit's versionstamp and indexes the entry by owner. */
  void enqueue(Transaction tr, String name, String owner, LockMode mode, long expiresAt) {
    tr.mutate(MutationType.SET_VERSIONSTAMPED_KEY, packQueueKeyForEnqueue(name), packQueueValue(owner, mode, expiresAt));
    tr.mutate(MutationType.SET_VERSIONSTAMPED_VALUE, packQueuedKey(name, owner), packQueuedValueForEnqueue());
    touchChanges(tr, name);
  }

  /** The ticket of {@code owner}'s queue entry, or null when it does not wait. */
  CompletableFuture<Versionstamp> readTicket(ReadTransaction tr, String name, String owner) {
    return tr.get(packQueuedKey(name, owner)).thenApply(v -> v == null ? null : unpackQueuedValue(v));
  }

  /** The queue entry under {@code ticket}, or null. */
  CompletableFuture<Waiter> readWaiter(ReadTransaction tr, String name, Versionstamp ticket) {
    return tr.get(packQueueKey(name, ticket)).thenApply(v -> v == null ? null : unpackQueueValue(ticket, v));
  }

  /** Rewrites a queue entry in place (same ticket: the waiter keeps its place). */
  void writeWaiter(Transaction tr, String name, Waiter w) {
    tr.set(packQueueKey(name, w.ticket()), packQueueValue(w.owner(), w.mode(), w.expiresAt()));
  }

  void dequeue(Transaction tr, String name, Waiter w) {
    tr.clear(packQueueKey(name, w.ticket()));
    tr.clear(packQueuedKey(name, w.owner()));
    touchChanges(tr, name);
  }

  /**
   * A blind write apart from the generation, so that changes the generation does not record (the queue's, and a
   * release that lets nobody in) wake observers and not the waiters, who watch the generation and would all read
   * again on every enqueue.
   */
  private void touchChanges(Transaction tr, String name) {
    tr.mutate(MutationType.SET_VERSIONSTAMPED_VALUE, packChangesKey(name), packGenerationValueForChange());
  }

  byte[] packChangesKey(String name) {
    return lock(name).pack(Tuple.from(CHANGES));
  }

  /** A watch on the changes key (fires on the next enqueue, dequeue or end of a grant). */
  CompletableFuture<Void> watchChanges(Transaction tr, String name) {
    return tr.watch(packChangesKey(name));
  }

  /**
   * The version of the lock's holders and queue: the newer of the generation and the changes key, so the versionstamp
   * of the last commit that changed either (all zeros when none ever did).
   */
  CompletableFuture<FencingToken> readVersion(ReadTransaction tr, String name) {
    return tr.get(packGenerationKey(name)).thenCombine(tr.get(packChangesKey(name)),
        ReadWriteLockSchema::newer);
  }

  /** The newer of two generation values (raw versionstamps, null when unset); all zeros when both are unset. */
  static FencingToken newer(byte[] a, byte[] b) {
    FencingToken x = FencingToken.of(a == null ? new byte[FencingToken.LENGTH] : a);
    FencingToken y = FencingToken.of(b == null ? new byte[FencingToken.LENGTH] : b);
    return y.isNewerThan(x) ? y : x;
  }

  /** Records a change of holders: every waiter's watch fires. */
  void touchGeneration(Transaction tr, String name) {
    tr.mutate(MutationType.SET_VERSIONSTAMPED_VALUE, packGenerationKey(name), packGenerationValueForChange());
  }

  /** Fires once the generation differs from what {@code tr} read (after {@code tr} commits). */
  CompletableFuture<Void> watchGeneration(Transaction tr, String name) {
    return tr.watch(packGenerationKey(name));
  }

  /**
   * Fires once {@code owner}'s grant key differs from what {@code tr} read: it was granted (or its grant ended). A
   * waiter watches this rather than the generation, so that a grant wakes the waiters it lets in, not every waiter.
   */
  CompletableFuture<Void> watchGrant(Transaction tr, String name, String owner) {
    return tr.watch(packGrantKey(name, owner));
  }

  void markActive(Transaction tr, String name) {
    tr.set(packActiveKey(name), packActiveValue());
  }

  void clearActive(Transaction tr, String name) {
    tr.clear(packActiveKey(name));
  }

  /** Up to {@code limit} names of active locks after {@code after} (from the first when null), in key order. */
  CompletableFuture<List<String>> readActive(ReadTransaction tr, String after, int limit) {
    Range r = activeRange();
    KeySelector begin = after == null
        ? KeySelector.firstGreaterOrEqual(r.begin)
        : KeySelector.firstGreaterThan(packActiveKey(after));
    return tr.getRange(begin, KeySelector.firstGreaterOrEqual(r.end), limit).asList().thenApply(kvs -> {
      List<String> out = new ArrayList<>(kvs.size());
      for (KeyValue kv : kvs) {
        out.add(unpackActiveKey(kv.getKey()));
      }
      return out;
    });
  }
}
