package io.github.fdbcoord.client;

import io.github.fdbcoord.client.wire.ReadWriteLockWire;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The read-write lock ({@code <prefix>.rwlock}, docs/vertx.md) through a {@link CoordinationClient}: many readers
 * or one writer, FIFO. Each call completes, on the caller's context, with a typed reply or a
 * {@link io.vertx.core.eventbus.ReplyException} with the failure code of docs/vertx.md (400 bad request, 409
 * timed_out / not_held / abandoned, 503 unavailable), as the mutex's calls do. A {@code mode} passed to release,
 * heartbeat and downgrade may be null: the service then reads it from the lock's holders.
 *
 * <pre>
 * client.readWriteLocks().lock("catalog", Mode.WRITE).compose(lock -&gt;
 *     rebuild(lock.token())
 *         .compose(v -&gt; lock.downgrade())          // readers come in, no writer in between
 *         .compose(v -&gt; publish(lock.token()))
 *         .eventually(lock::release));
 * </pre>
 */
public final class ReadWriteLockClient extends PrimitiveClient {
  ReadWriteLockClient(CoordinationClient client) {
    super(client, client.readWriteLockAddress());
  }

  /** Shared (many readers) or exclusive (one writer). */
  public enum Mode {
    READ(ReadWriteLockWire.READ), WRITE(ReadWriteLockWire.WRITE);

    private final String wire;

    Mode(String wire) {
      this.wire = wire;
    }

    static Mode of(String wire) {
      for (Mode m : values()) {
        if (m.wire.equals(wire)) {
          return m;
        }
      }
      throw new IllegalArgumentException("a read-write lock mode is \"read\" or \"write\", got " + wire);
    }
  }

  /**
   * A grant as the service answered it.
   *
   * @param lease how long the grant lives without a {@link #heartbeat}
   */
  public record Grant(String name, String owner, Mode mode, ReadWriteToken token, Duration lease) {
    static Grant of(JsonObject j) {
      return new Grant(j.getString("name"), j.getString("owner"), Mode.of(j.getString("mode")),
          ReadWriteToken.parse(j.getString("token")), LeaseKeeper.lease(j));
    }
  }

  /** A holder of the lock. */
  public record Holder(String owner, Mode mode, ReadWriteToken token) {}

  /** A request waiting in the lock's queue. */
  public record Waiter(String owner, Mode mode) {}

  /** A lock read in one transaction: holders in owner order, the queue head first. */
  public record State(String name, List<Holder> holders, List<Waiter> queue) {
    static State of(JsonObject j) {
      List<Holder> holders = new ArrayList<>();
      for (Object o : j.getJsonArray("holders")) {
        JsonObject h = (JsonObject) o;
        holders.add(new Holder(h.getString("owner"), Mode.of(h.getString("mode")),
            ReadWriteToken.parse(h.getString("token"))));
      }
      List<Waiter> queue = new ArrayList<>();
      for (Object o : j.getJsonArray("queue")) {
        JsonObject w = (JsonObject) o;
        queue.add(new Waiter(w.getString("owner"), Mode.of(w.getString("mode"))));
      }
      return new State(j.getString("name"), List.copyOf(holders), List.copyOf(queue));
    }
  }

  /**
   * Waits up to {@code timeout} until {@code owner} holds lock {@code name} in {@code mode}; fails 409 timed_out
   * after leaving the queue. The holder then {@link #heartbeat}s more often than the lease, or uses
   * {@link #lock(String, Mode, LockOptions)}, which does.
   */
  public Future<Grant> acquire(String name, String owner, Mode mode, Duration timeout) {
    Objects.requireNonNull(mode, "mode");
    return waiting(ReadWriteLockWire.ACQUIRE, nameAndOwner(name, owner).put("mode", mode.wire), timeout)
        .map(Grant::of);
  }

  /** Ends the grant {@code token}; the queue's head goes in. Fails 409 not_held when it had ended. */
  public Future<Void> release(String name, String owner, ReadWriteToken token, Mode mode) {
    return request(ReadWriteLockWire.RELEASE, body(name, owner, token, mode)).mapEmpty();
  }

  /** Keeps the grant {@code token} alive for a lease; fails 409 not_held once it was lost. */
  public Future<Grant> heartbeat(String name, String owner, ReadWriteToken token, Mode mode) {
    return request(ReadWriteLockWire.HEARTBEAT, body(name, owner, token, mode)).map(Grant::of);
  }

  /**
   * Turns the write grant {@code token} into a read grant with a new token, letting the readers at the queue's head
   * in and no writer in between. Fails 400 for a read grant, 409 not_held when it had ended.
   */
  public Future<Grant> downgrade(String name, String owner, ReadWriteToken token, Mode mode) {
    return request(ReadWriteLockWire.DOWNGRADE, body(name, owner, token, mode)).map(Grant::of);
  }

  /** The lock's holders and queue. */
  public Future<State> state(String name) {
    return request(ReadWriteLockWire.STATE, new JsonObject().put("name", name)).map(State::of);
  }

  /**
   * Ends the acquires of {@code owner} waiting on the serving node (they fail 409 abandoned) and takes it out of the
   * queue; completes with how many it ended.
   */
  public Future<Integer> abandon(String name, String owner) {
    return request(ReadWriteLockWire.ABANDON, nameAndOwner(name, owner)).map(PrimitiveClient::abandoned);
  }

  /** As {@link #lock(String, Mode, LockOptions)} with the default options: a random owner, a 10 s wait. */
  public Future<ClientReadWriteLock> lock(String name, Mode mode) {
    return lock(name, mode, new LockOptions());
  }

  /**
   * Takes lock {@code name} in {@code mode} and keeps it until {@link ClientReadWriteLock#release()}: it heartbeats
   * on the caller's context, reports a loss through {@link ClientReadWriteLock#lost()}, and is released when the
   * caller's context closes. Fails with 409 timed_out when it was not granted within {@code options.getTimeout()}.
   */
  public Future<ClientReadWriteLock> lock(String name, Mode mode, LockOptions options) {
    return hold(options, owner -> acquire(name, owner, mode, options.getTimeout()),
        (context, g, renew, sentAt) -> new ClientReadWriteLock(this, context, g, renew, sentAt));
  }

  private static JsonObject body(String name, String owner, ReadWriteToken token, Mode mode) {
    return nameAndOwner(name, owner).put("token", token == null ? null : token.toString())
        .put("mode", mode == null ? null : mode.wire);
  }
}
