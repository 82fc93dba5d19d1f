package io.github.fdbcoord.mutex;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.Transaction;
import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.api.MutexOwner;
import io.github.fdbcoord.mutex.MutexSchema.EventRecord;
import io.github.fdbcoord.mutex.MutexSchema.Incarnation;
import io.github.fdbcoord.mutex.MutexSchema.Waiter;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * The writes that change who owns a mutex, each inside the caller's transaction: a grant of a free
 * mutex, the end of a grant (hand-off to the queue's head or to a named waiter, or the mutex becoming
 * free), with the lock event each appends. Shared by acquire, release, the reaper and the clean-up at open.
 *
 * <p>None of them reads more than the caller needs to decide: the event log is trimmed after the
 * transition commits, in a transaction of its own ({@link EventLogTrimmer#trimAfter}), so a
 * transition is its reads (issued together where the caller can) and one commit.
 */
final class MutexTransitions {
  private final MutexSchema schema;
  private final Incarnation incarnation;
  private final EventLogTrimmer trimmer;
  private final QueueFloors floors;
  private final Database db;
  private final Executor executor;
  private final HandOffHints hints;

  MutexTransitions(MutexSchema schema, Incarnation incarnation, long retentionVersions, QueueFloors floors,
      Database db, Executor executor, HandOffHints hints) {
    this.schema = schema;
    this.incarnation = incarnation;
    this.trimmer = new EventLogTrimmer(schema, retentionVersions);
    this.floors = floors;
    this.db = db;
    this.executor = executor;
    this.hints = hints;
  }

  /** Grants a free mutex to {@code owner}. */
  AfterCommit<LockEvent> grantFree(Transaction tr, String name, String owner) {
    return grant(tr, name, owner, new EventRecord(LockEvent.Type.ACQUIRED, null, null, owner), incarnation);
  }

  /**
   * The head of {@code name}'s queue as {@link #endGrant} needs it (with conflict, from the floor), for
   * a caller that starts it beside its own reads; null when nobody waits.
   */
  CompletableFuture<Waiter> readQueueHead(Transaction tr, String name) {
    return schema.readQueueHead(tr, name, floors.of(name));
  }

  /**
   * Ends {@code current}'s grant (released by its owner, or expired): the head of the queue becomes
   * owner in the same transaction, or the mutex becomes free when nobody waits. The queue head is
   * read with conflict, so an enqueue committed meanwhile is never stranded behind a free mutex.
   */
  CompletableFuture<AfterCommit<LockEvent>> endGrant(Transaction tr, String name, MutexOwner current, boolean released) {
    return endGrant(tr, name, current, released, readQueueHead(tr, name));
  }

  /** {@link #endGrant}, with the queue head's read ({@link #readQueueHead}) already started in {@code tr}. */
  CompletableFuture<AfterCommit<LockEvent>> endGrant(Transaction tr, String name, MutexOwner current, boolean released,
      CompletableFuture<Waiter> queueHead) {
    return queueHead.thenApply(head -> {
      if (head == null) {
        LockEvent.Type type = released ? LockEvent.Type.RELEASED : LockEvent.Type.EXPIRED;
        return free(tr, name, new EventRecord(type, current.owner(), current.token(), null));
      }
      schema.dequeue(tr, name, head);
      floors.learnOnCommit(tr, name, head.ticket());
      LockEvent.Type type = released ? LockEvent.Type.HANDED_OFF : LockEvent.Type.EXPIRED;
      hints.afterCommit(tr, name, head.owner());
      // The new owner is kept alive through the same host as its queue entry was.
      return grant(tr, name, head.owner(), new EventRecord(type, current.owner(), current.token(), head.owner()), head.via());
    });
  }

  /**
   * Ends {@code current}'s grant by handing it to {@code next}, a waiter anywhere in the queue (its entry read with
   * conflict by the caller): a HANDED_OFF event to it, as a release to the head would log. The waiters queued before
   * it keep their places; the queue's floor is left as it is, since those entries stay.
   */
  AfterCommit<LockEvent> handTo(Transaction tr, String name, MutexOwner current, Waiter next) {
    schema.dequeue(tr, name, next);
    hints.afterCommit(tr, name, next.owner());
    return grant(tr, name, next.owner(),
        new EventRecord(LockEvent.Type.HANDED_OFF, current.owner(), current.token(), next.owner()), next.via());
  }

  private AfterCommit<LockEvent> grant(Transaction tr, String name, String owner, EventRecord event, Incarnation via) {
    schema.grantOwner(tr, name, owner, via);
    schema.touchGeneration(tr, name);
    schema.appendEvent(tr, name, event);
    schema.markHeld(tr, name);
    trimmer.trimAfter(tr, db, executor, name);
    return AfterCommit.stamped(tr.getVersionstamp(), vs -> event.toEvent(name, FencingToken.of(vs)));
  }

  private AfterCommit<LockEvent> free(Transaction tr, String name, EventRecord event) {
    schema.clearOwner(tr, name);
    schema.touchGeneration(tr, name);
    schema.appendEvent(tr, name, event);
    schema.clearHeld(tr, name);
    trimmer.trimAfter(tr, db, executor, name);
    return AfterCommit.stamped(tr.getVersionstamp(), vs -> event.toEvent(name, FencingToken.of(vs)));
  }

  /** No more event-log trims start: the service closed. */
  void stop() {
    trimmer.stop();
  }

  static boolean isGrant(MutexOwner current, String owner, FencingToken token) {
    return current != null && current.owner().equals(owner) && (token == null || token.equals(current.token()));
  }

  /** Why {@code caller} may not release or heartbeat the mutex whose owner record is {@code current}. */
  static MutexException refusal(String name, String caller, FencingToken token, MutexOwner current) {
    if (current == null) {
      return new MutexNotHeldException(name, caller);
    }
    if (token != null && current.owner().equals(caller)) {
      return new NotOwnerException(name, caller, token, current);
    }
    return new NotOwnerException(name, caller, current);
  }
}
