package io.github.fdbcoord.mutex;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.api.MutexOwner;
import io.github.fdbcoord.api.QueueEntry;
import com.apple.foundationdb.KeySelector;
import com.apple.foundationdb.KeyValue;
import com.apple.foundationdb.MutationType;
import com.apple.foundationdb.Range;
import com.apple.foundationdb.ReadTransaction;
import com.apple.foundationdb.Transaction;
import com.apple.foundationdb.subspace.Subspace;
import com.apple.foundationdb.tuple.Tuple;
import com.apple.foundationdb.tuple.Versionstamp;
import io.github.fdbcoord.fdb.Versionstamps;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The whole key schema of the mutex layer: a pack and an unpack function for every key and value,
 * and one function per query. Public operations ({@link FdbMutexService}) only compose these.
 *
 * <pre>
 * root("held", name)                 = ''                                  index of mutexes that have an owner (the reaper scans it)
 * root("m", name, "owner")           = (owner:str, token:vstamp, heartbeats:int, host, incarnation)   the owner record; absent when free
 * root("m", name, "generation")      = token:10 bytes                      changes only when ownership changes (waiters watch it)
 * root("m", name, "queue", ticket)   = (owner:str, host, incarnation, beats:int)   FIFO queue, ticket = versionstamp of the enqueue
 * root("m", name, "queued", owner)   = (ticket:vstamp)                     the owner's queue entry: nobody enqueues twice
 * root("m", name, "events", seq)     = (type:str, prevOwner, prevToken, owner)   log of ownership transitions, trimmed by age (EventLogTrimmer)
 * </pre>
 *
 * <p>The heartbeat lives in the owner record, so a heartbeat, a release and a reaper's hand-off all
 * write or read-with-conflict the same key: whichever commits second conflicts, and on retry sees
 * the new state. Waiters watch the generation key instead, which heartbeats never touch.
 *
 * <p>Owner records and queue entries name the {@link Incarnation} (host and start) of the service
 * through which they were made or last kept alive, so a restarted host can find and remove what
 * died with its previous incarnation. A queue entry's beat count changes with each heartbeat of
 * its waiter: the reaper removes entries whose count stays unchanged for a lease.
 */
final class MutexSchema {
  /** Longest mutex or owner name, in UTF-8 bytes; keeps every key far below FoundationDB's 10,000-byte limit. */
  static final int MAX_NAME_BYTES = MutexService.MAX_NAME_BYTES;

  private static final String HELD = "held";
  private static final String MUTEXES = "m";
  private static final String OWNER = "owner";
  private static final String GENERATION = "generation";
  private static final String QUEUE = "queue";
  private static final String QUEUED = "queued";
  private static final String EVENTS = "events";

  private final Subspace root;

  MutexSchema(Subspace root) {
    this.root = root;
  }

  Subspace root() {
    return root;
  }

  /** The subspace holding everything about mutex {@code name}. */
  Subspace mutex(String name) {
    return root.get(MUTEXES).get(name);
  }

  /** Checks a mutex or owner name: non-empty, at most {@link #MAX_NAME_BYTES} UTF-8 bytes. */
  static String checkName(String value, String what) {
    if (value == null) {
      throw new IllegalArgumentException(what + " must not be null");
    }
    if (value.isEmpty()) {
      throw new IllegalArgumentException(what + " must not be empty");
    }
    int bytes = value.getBytes(StandardCharsets.UTF_8).length;
    if (bytes > MAX_NAME_BYTES) {
      throw new IllegalArgumentException(what + " is " + bytes + " UTF-8 bytes long, at most " + MAX_NAME_BYTES + " allowed");
    }
    return value;
  }

  // ---------------------------------------------------------------- owner record

  byte[] packOwnerKey(String name) {
    return mutex(name).pack(Tuple.from(OWNER));
  }

  /** The token form of a complete versionstamp: its 10 bytes (the user version is always 0 here). */
  static FencingToken token(Versionstamp vs) {
    if (!vs.isComplete()) {
      throw new IllegalArgumentException("an incomplete versionstamp is no fencing token");
    }
    return FencingToken.of(vs.getTransactionVersion());
  }

  /** The versionstamp a token or ticket was taken from (user version 0). */
  static Versionstamp versionstamp(FencingToken token) {
    return Versionstamp.complete(token.bytes(), 0);
  }

  /**
   * The host incarnation through which an owner record or queue entry was made or last kept alive:
   * {@code host} is the configured host id (null when the service has none), {@code id} is unique
   * to one start of that service.
   */
  record Incarnation(String host, String id) {
    Incarnation {
      Objects.requireNonNull(id, "id");
    }

    /** Whether this is an earlier start of {@code current}'s host (never true without a host id). */
    boolean isEarlierOf(Incarnation current) {
      return host != null && host.equals(current.host()) && !id.equals(current.id());
    }
  }

  /** SET_VERSIONSTAMPED_VALUE operand of a new grant: the commit's versionstamp becomes the fencing token. */
  byte[] packOwnerValueForGrant(String owner, Incarnation via) {
    return Versionstamps.packValue(Tuple.from(owner, Versionstamp.incomplete(0), 0L, hostOf(via), idOf(via)));
  }

  byte[] packOwnerValue(MutexOwner record, Incarnation via) {
    return Tuple.from(record.owner(), versionstamp(record.token()), record.heartbeats(), hostOf(via), idOf(via)).pack();
  }

  MutexOwner unpackOwnerValue(byte[] value) {
    Tuple t = Tuple.fromBytes(value);
    return new MutexOwner(t.getString(0), token(t.getVersionstamp(1)), t.getLong(2));
  }

  /** The incarnation that made or last heartbeated the grant; null for records written without one. */
  Incarnation unpackOwnerIncarnation(byte[] value) {
    Tuple t = Tuple.fromBytes(value);
    return incarnation(t, 3);
  }

  private static String hostOf(Incarnation via) {
    return via == null ? null : via.host();
  }

  private static String idOf(Incarnation via) {
    return via == null ? null : via.id();
  }

  /** Elements {@code i} and {@code i + 1} of {@code t} as an incarnation (records of older versions have none). */
  private static Incarnation incarnation(Tuple t, int i) {
    return t.size() > i + 1 && t.get(i + 1) != null ? new Incarnation(t.getString(i), t.getString(i + 1)) : null;
  }

  // ---------------------------------------------------------------- generation

  byte[] packGenerationKey(String name) {
    return mutex(name).pack(Tuple.from(GENERATION));
  }

  /** SET_VERSIONSTAMPED_VALUE operand: the raw 10-byte versionstamp of the transition's commit. */
  byte[] packGenerationValueForTransition() {
    return Versionstamps.rawValue(new byte[0]);
  }

  byte[] packGenerationValue(FencingToken generation) {
    return generation.bytes();
  }

  FencingToken unpackGenerationValue(byte[] value) {
    return FencingToken.of(value);
  }

  // ---------------------------------------------------------------- queue

  Range queueRange(String name) {
    return mutex(name).range(Tuple.from(QUEUE));
  }

  /** SET_VERSIONSTAMPED_KEY operand of a new queue entry: the commit's versionstamp becomes the ticket. */
  byte[] packQueueKeyForEnqueue(String name) {
    return Versionstamps.packKey(mutex(name).getKey(), Tuple.from(QUEUE, Versionstamp.incomplete(0)));
  }

  byte[] packQueueKey(String name, Versionstamp ticket) {
    return mutex(name).pack(Tuple.from(QUEUE, ticket));
  }

  Versionstamp unpackQueueKey(String name, byte[] key) {
    return mutex(name).unpack(key).getVersionstamp(1);
  }

  /**
   * One queue entry: key (ticket) and value (owner, the incarnation through which it was made or
   * last kept alive, and its beat count, which each heartbeat of the waiter increments).
   */
  record Waiter(Versionstamp ticket, String owner, Incarnation via, long beats) {
    QueueEntry toQueueEntry() {
      return new QueueEntry(owner, token(ticket));
    }
  }

  byte[] packQueueValue(String owner, Incarnation via, long beats) {
    return Tuple.from(owner, hostOf(via), idOf(via), beats).pack();
  }

  /** The owner of a queue value. */
  String unpackQueueValue(byte[] value) {
    return Tuple.fromBytes(value).getString(0);
  }

  Waiter unpackWaiter(String name, byte[] key, byte[] value) {
    Tuple t = Tuple.fromBytes(value);
    return new Waiter(unpackQueueKey(name, key), t.getString(0), incarnation(t, 1), t.size() > 3 ? t.getLong(3) : 0L);
  }

  byte[] packQueuedKey(String name, String owner) {
    return mutex(name).pack(Tuple.from(QUEUED, owner));
  }

  String unpackQueuedKey(String name, byte[] key) {
    return mutex(name).unpack(key).getString(1);
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

  // ---------------------------------------------------------------- events

  /** One recorded transition, before it is named and sequenced as a {@link LockEvent}. */
  record EventRecord(LockEvent.Type type, String previousOwner, FencingToken previousToken, String owner) {
    LockEvent toEvent(String mutex, FencingToken sequence) {
      return new LockEvent(type, mutex, sequence, Optional.ofNullable(previousOwner),
          Optional.ofNullable(previousToken), Optional.ofNullable(owner));
    }
  }

  Range eventRange(String name) {
    return mutex(name).range(Tuple.from(EVENTS));
  }

  /** SET_VERSIONSTAMPED_KEY operand: the event's sequence is the transition commit's versionstamp. */
  byte[] packEventKeyForTransition(String name) {
    return Versionstamps.packKey(mutex(name).getKey(), Tuple.from(EVENTS, Versionstamp.incomplete(0)));
  }

  byte[] packEventKey(String name, FencingToken sequence) {
    return mutex(name).pack(Tuple.from(EVENTS, versionstamp(sequence)));
  }

  FencingToken unpackEventKey(String name, byte[] key) {
    return token(mutex(name).unpack(key).getVersionstamp(1));
  }

  byte[] packEventValue(EventRecord e) {
    return Tuple.from(e.type().name(), e.previousOwner(),
        e.previousToken() == null ? null : versionstamp(e.previousToken()), e.owner()).pack();
  }

  EventRecord unpackEventValue(byte[] value) {
    Tuple t = Tuple.fromBytes(value);
    Versionstamp prevToken = t.getVersionstamp(2);
    return new EventRecord(LockEvent.Type.valueOf(t.getString(0)), t.getString(1),
        prevToken == null ? null : token(prevToken), t.getString(3));
  }

  // ---------------------------------------------------------------- held index

  Range heldRange() {
    return root.range(Tuple.from(HELD));
  }

  byte[] packHeldKey(String name) {
    return root.pack(Tuple.from(HELD, name));
  }

  String unpackHeldKey(byte[] key) {
    return root.unpack(key).getString(1);
  }

  byte[] packHeldValue() {
    return new byte[0];
  }

  // ================================================================ queries

  /** The owner record, or null when the mutex is free. */
  CompletableFuture<MutexOwner> readOwner(ReadTransaction tr, String name) {
    return tr.get(packOwnerKey(name)).thenApply(v -> v == null ? null : unpackOwnerValue(v));
  }

  /** The owner record's raw bytes (what the reaper compares), or null when free. */
  CompletableFuture<byte[]> readOwnerBytes(ReadTransaction tr, String name) {
    return tr.get(packOwnerKey(name));
  }

  /** Makes {@code owner} the owner with a fresh token (this commit's versionstamp) and no heartbeats yet. */
  void grantOwner(Transaction tr, String name, String owner, Incarnation via) {
    tr.mutate(MutationType.SET_VERSIONSTAMPED_VALUE, packOwnerKey(name), packOwnerValueForGrant(owner, via));
  }

  void writeOwner(Transaction tr, String name, MutexOwner record, Incarnation via) {
    tr.set(packOwnerKey(name), packOwnerValue(record, via));
  }

  void clearOwner(Transaction tr, String name) {
    tr.clear(packOwnerKey(name));
  }

  /** The token of the last ownership transition, or null when the mutex never had an owner. */
  CompletableFuture<FencingToken> readGeneration(ReadTransaction tr, String name) {
    return tr.get(packGenerationKey(name)).thenApply(v -> v == null ? null : unpackGenerationValue(v));
  }

  void touchGeneration(Transaction tr, String name) {
    tr.mutate(MutationType.SET_VERSIONSTAMPED_VALUE, packGenerationKey(name), packGenerationValueForTransition());
  }

  /** Fires once the generation differs from what {@code tr} read (after {@code tr} commits). */
  CompletableFuture<Void> watchGeneration(Transaction tr, String name) {
    return tr.watch(packGenerationKey(name));
  }

  /** Appends {@code owner} to the queue under this commit's versionstamp and indexes the entry by owner. */
  void enqueue(Transaction tr, String name, String owner, Incarnation via) {
    tr.mutate(MutationType.SET_VERSIONSTAMPED_KEY, packQueueKeyForEnqueue(name), packQueueValue(owner, via, 0L));
    tr.mutate(MutationType.SET_VERSIONSTAMPED_VALUE, packQueuedKey(name, owner), packQueuedValueForEnqueue());
  }

  /** The queue entry under {@code ticket}, or null when there is none. */
  CompletableFuture<Waiter> readWaiter(ReadTransaction tr, String name, Versionstamp ticket) {
    byte[] key = packQueueKey(name, ticket);
    return tr.get(key).thenApply(v -> v == null ? null : unpackWaiter(name, key, v));
  }

  /** Rewrites a queue entry in place (same ticket, so the waiter keeps its place). */
  void writeWaiter(Transaction tr, String name, Waiter waiter) {
    tr.set(packQueueKey(name, waiter.ticket()), packQueueValue(waiter.owner(), waiter.via(), waiter.beats()));
  }

  /** Up to {@code limit} queue entries with their incarnations and beat counts, head first. */
  CompletableFuture<List<Waiter>> readWaiters(ReadTransaction tr, String name, int limit) {
    return tr.getRange(queueRange(name), limit).asList()
        .thenApply(kvs -> {
          List<Waiter> out = new ArrayList<>(kvs.size());
          for (KeyValue kv : kvs) {
            out.add(unpackWaiter(name, kv.getKey(), kv.getValue()));
          }
          return out;
        });
  }

  /** The ticket of {@code owner}'s queue entry, or null when it does not wait. */
  CompletableFuture<Versionstamp> readTicket(ReadTransaction tr, String name, String owner) {
    return tr.get(packQueuedKey(name, owner)).thenApply(v -> v == null ? null : unpackQueuedValue(v));
  }

  /**
   * The first waiter at or after {@code floor} (from the start of the queue when null), or null
   * when there is none. With conflict (unless {@code tr} is a snapshot) only from {@code floor}: an
   * enqueue always lands after it.
   */
  CompletableFuture<Waiter> readQueueHead(ReadTransaction tr, String name, Versionstamp floor) {
    return tr.getRange(queueBegin(name, floor), queueRange(name).end, 1).asList()
        .thenApply(kvs -> kvs.isEmpty() ? null : unpackWaiter(name, kvs.get(0).getKey(), kvs.get(0).getValue()));
  }

  /** Where a queue read starts: at {@code floor}, or at the start of the queue when null. */
  private byte[] queueBegin(String name, Versionstamp floor) {
    return floor == null ? queueRange(name).begin : packQueueKey(name, floor);
  }

  /** Up to {@code limit} waiters, head first. */
  CompletableFuture<List<QueueEntry>> readQueue(ReadTransaction tr, String name, int limit) {
    return tr.getRange(queueRange(name), limit).asList()
        .thenApply(kvs -> {
          List<QueueEntry> out = new ArrayList<>(kvs.size());
          for (KeyValue kv : kvs) {
            out.add(new QueueEntry(unpackQueueValue(kv.getValue()), token(unpackQueueKey(name, kv.getKey()))));
          }
          return out;
        });
  }

  /**
   * The tickets of the waiters ahead of {@code ticket} (all of them when {@code ticket} is null),
   * head first, reading from {@code floor} (see {@link #readQueueHead}).
   */
  CompletableFuture<List<Versionstamp>> readTicketsBefore(ReadTransaction tr, String name, Versionstamp floor,
      Versionstamp ticket) {
    byte[] end = ticket == null ? queueRange(name).end : packQueueKey(name, ticket);
    return tr.getRange(queueBegin(name, floor), end).asList().thenApply(kvs -> {
      List<Versionstamp> out = new ArrayList<>(kvs.size());
      for (KeyValue kv : kvs) {
        out.add(unpackQueueKey(name, kv.getKey()));
      }
      return out;
    });
  }

  void dequeue(Transaction tr, String name, Waiter waiter) {
    dequeue(tr, name, waiter.toQueueEntry());
  }

  void dequeue(Transaction tr, String name, QueueEntry entry) {
    tr.clear(packQueueKey(name, versionstamp(entry.ticket())));
    tr.clear(packQueuedKey(name, entry.owner()));
  }

  /** Logs a transition under this commit's versionstamp. */
  void appendEvent(Transaction tr, String name, EventRecord event) {
    tr.mutate(MutationType.SET_VERSIONSTAMPED_KEY, packEventKeyForTransition(name), packEventValue(event));
  }

  /** The first event key at or after commit version {@code version}: events before it are older. */
  byte[] packEventCutoffKey(String name, long version) {
    byte[] token = ByteBuffer.allocate(FencingToken.LENGTH).putLong(version).putShort((short) 0).array();
    return packEventKey(name, FencingToken.of(token));
  }

  /** Up to {@code limit} events with a sequence after {@code after} (all retained ones when null), oldest first. */
  CompletableFuture<List<LockEvent>> readEventsAfter(
      ReadTransaction tr, String name, FencingToken after, int limit) {
    Range r = eventRange(name);
    KeySelector begin = after == null
        ? KeySelector.firstGreaterOrEqual(r.begin)
        : KeySelector.firstGreaterThan(packEventKey(name, after));
    return tr.getRange(begin, KeySelector.firstGreaterOrEqual(r.end), limit).asList()
        .thenApply(kvs -> {
          List<LockEvent> out = new ArrayList<>(kvs.size());
          for (KeyValue kv : kvs) {
            out.add(unpackEventValue(kv.getValue()).toEvent(name, unpackEventKey(name, kv.getKey())));
          }
          return out;
        });
  }

  /** Up to {@code limit} events with a sequence at or after {@code from}, oldest first. */
  CompletableFuture<List<LockEvent>> readEventsFrom(
      ReadTransaction tr, String name, FencingToken from, int limit) {
    Range r = eventRange(name);
    return tr.getRange(KeySelector.firstGreaterOrEqual(packEventKey(name, from)),
            KeySelector.firstGreaterOrEqual(r.end), limit).asList()
        .thenApply(kvs -> unpackEvents(name, kvs));
  }

  /** The newest retained event, or null when the log is empty. */
  CompletableFuture<LockEvent> readLatestEvent(ReadTransaction tr, String name) {
    return tr.getRange(eventRange(name), 1, true).asList()
        .thenApply(kvs -> kvs.isEmpty() ? null : unpackEvents(name, kvs).get(0));
  }

  private List<LockEvent> unpackEvents(String name, List<KeyValue> kvs) {
    List<LockEvent> out = new ArrayList<>(kvs.size());
    for (KeyValue kv : kvs) {
      out.add(unpackEventValue(kv.getValue()).toEvent(name, unpackEventKey(name, kv.getKey())));
    }
    return out;
  }

  void markHeld(Transaction tr, String name) {
    tr.set(packHeldKey(name), packHeldValue());
  }

  void clearHeld(Transaction tr, String name) {
    tr.clear(packHeldKey(name));
  }

  /** Up to {@code limit} names of held mutexes after {@code after} (from the first when null), in key order. */
  CompletableFuture<List<String>> readHeld(ReadTransaction tr, String after, int limit) {
    Range r = heldRange();
    KeySelector begin = after == null
        ? KeySelector.firstGreaterOrEqual(r.begin)
        : KeySelector.firstGreaterThan(packHeldKey(after));
    return tr.getRange(begin, KeySelector.firstGreaterOrEqual(r.end), limit).asList()
        .thenApply(kvs -> {
          List<String> out = new ArrayList<>(kvs.size());
          for (KeyValue kv : kvs) {
            out.add(unpackHeldKey(kv.getKey()));
          }
          return out;
        });
  }
}
