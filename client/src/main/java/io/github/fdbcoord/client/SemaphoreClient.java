package io.github.fdbcoord.client;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.client.wire.SemaphoreWire;
import io.github.fdbcoord.client.wire.WireProtocol;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The fenced semaphore ({@code <prefix>.semaphore}, docs/vertx.md) through a {@link CoordinationClient}: N permits
 * per semaphore, each grant with its own fencing token. Each call completes, on the caller's context, with a typed
 * reply or a {@link io.vertx.core.eventbus.ReplyException} with the failure code of docs/vertx.md (400 bad request,
 * 409 timed_out / not_held / conflict / abandoned, 503 unavailable), as the mutex's calls do.
 *
 * <pre>
 * client.semaphores().permit("exports", 3).compose(permit -&gt;
 *     runExport(permit.token()).eventually(permit::release));
 * </pre>
 */
public final class SemaphoreClient extends PrimitiveClient {
  SemaphoreClient(CoordinationClient client) {
    super(client, client.semaphoreAddress());
  }

  /**
   * A permit as the service answered it.
   *
   * @param name the semaphore
   * @param owner the owner holding it
   * @param token the grant's fencing token: greater than every earlier grant's of the semaphore
   * @param lease how long the grant lives without a {@link #heartbeat}
   */
  public record Permit(String name, String owner, FencingToken token, Duration lease) {
    static Permit of(JsonObject j) {
      return new Permit(j.getString("name"), j.getString("owner"), FencingToken.parse(j.getString("token")),
          LeaseKeeper.lease(j));
    }
  }

  /** A holder of a permit. */
  public record Holder(String owner, FencingToken token) {}

  /**
   * A semaphore read in one transaction.
   *
   * @param permits its permit count, 0 when unused
   * @param holders the grants held
   * @param waiters the owners waiting, first first
   */
  public record State(String name, int permits, List<Holder> holders, List<String> waiters) {
    static State of(JsonObject j) {
      List<Holder> holders = new ArrayList<>();
      for (Object o : j.getJsonArray("holders")) {
        JsonObject h = (JsonObject) o;
        holders.add(new Holder(h.getString("owner"), FencingToken.parse(h.getString("token"))));
      }
      JsonArray waiters = j.getJsonArray("waiters");
      return new State(j.getString("name"), j.getInteger("permits"), List.copyOf(holders),
          List.copyOf(WireProtocol.strings(waiters)));
    }
  }

  /**
   * Waits up to {@code timeout} until {@code owner} holds one of the {@code permits} (1 to
   * {@value SemaphoreWire#MAX_PERMITS}) permits of {@code name}, FIFO; fails 409 timed_out after leaving the queue,
   * 409 conflict when the semaphore is in use with another count. The holder then {@link #heartbeat}s more often
   * than the lease, or uses {@link #permit(String, int, LockOptions)}, which does.
   */
  public Future<Permit> acquire(String name, String owner, int permits, Duration timeout) {
    return waiting(SemaphoreWire.ACQUIRE, nameAndOwner(name, owner).put("permits", permits), timeout)
        .map(Permit::of);
  }

  /** Ends the grant {@code token}; the first waiter gets the permit. Fails 409 not_held when it had ended. */
  public Future<Void> release(String name, String owner, FencingToken token) {
    return request(SemaphoreWire.RELEASE, body(name, owner, token)).mapEmpty();
  }

  /** Keeps the grant {@code token} alive for a lease; fails 409 not_held once it was lost. */
  public Future<Permit> heartbeat(String name, String owner, FencingToken token) {
    return request(SemaphoreWire.HEARTBEAT, body(name, owner, token)).map(Permit::of);
  }

  /** The semaphore's permit count, holders and waiters. */
  public Future<State> state(String name) {
    return request(SemaphoreWire.STATE, new JsonObject().put("name", name)).map(State::of);
  }

  /**
   * Ends the acquires of {@code owner} waiting on the serving node (they fail 409 abandoned) and takes it out of the
   * queue; completes with how many it ended.
   */
  public Future<Integer> abandon(String name, String owner) {
    return request(SemaphoreWire.ABANDON, nameAndOwner(name, owner)).map(PrimitiveClient::abandoned);
  }

  /** As {@link #permit(String, int, LockOptions)} with the default options: a random owner, a 10 s wait. */
  public Future<ClientPermit> permit(String name, int permits) {
    return permit(name, permits, new LockOptions());
  }

  /**
   * Takes one of the {@code permits} permits of {@code name} and keeps it until {@link ClientPermit#release()}: it
   * heartbeats on the caller's context, reports a loss through {@link ClientPermit#lost()}, and is released when the
   * caller's context closes. Fails with 409 timed_out when no permit was free within {@code options.getTimeout()}.
   */
  public Future<ClientPermit> permit(String name, int permits, LockOptions options) {
    return hold(options, owner -> acquire(name, owner, permits, options.getTimeout()),
        (context, p, renew, sentAt) -> new ClientPermit(this, context, p, renew, sentAt));
  }

  private static JsonObject body(String name, String owner, FencingToken token) {
    return nameAndOwner(name, owner).put("token", token == null ? null : token.toString());
  }
}
