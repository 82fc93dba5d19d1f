package io.github.fdbcoord.service.eventbus;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.client.wire.ElectionWire;
import io.github.fdbcoord.election.LeaderElection;
import io.github.fdbcoord.mutex.MutexService;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;

/**
 * Leader election on its address ({@code <prefix>.election}). Actions: campaign, leader, resign, handover,
 * heartbeat, abandon (docs/vertx.md).
 *
 * <p>An election is the mutex of the same name in the service's {@link MutexService} ({@link LeaderElection#over}):
 * its leader is the mutex's holder, its epoch the grant's fencing token. This verticle only renames: each action is
 * the mutex verticle's own, on the same instance, so a leadership held for a requester over the event bus or HTTP
 * lives exactly like a mutex grant held for one. A campaign waits through {@link MutexVerticle#awaitGrant} (its
 * queue entry kept alive while the request waits, its requester pinged at its {@code liveness} address, ended by
 * {@code abandon}, by the requester's departure and by the node's stop); nothing heartbeats for a remote leader,
 * which calls {@code heartbeat} more often than the lease, or loses the leadership to the next candidate when it
 * stops (the reaper's {@code EXPIRED}); the leaderships won through this node and still held are resigned when the
 * mutex verticle stops. A campaign answered {@code store_unavailable} that leads later is resigned at once, as a
 * late acquire is released.
 *
 * <p>Leader changes are the mutex's lock events ({@code <prefix>.mutex.events.<election>}, the WebSocket's
 * {@code subscribe}): no channel of their own.
 */
public final class ElectionVerticle extends LayerVerticle {
  private final MutexVerticle mutex;
  private final LeaderElection elections;

  /** Serves the elections of {@code mutexes} on {@code address} through {@code mutex}, the verticle serving them. */
  public ElectionVerticle(String address, MutexVerticle mutex, MutexService mutexes, StoreWorkers workers,
      Metrics metrics) {
    super(address, workers, metrics);
    this.mutex = mutex;
    this.elections = LeaderElection.over(mutexes);
  }

  /** Registers the election actions (see the class comment). */
  @Override
  protected void registerActions() {
    action(ElectionWire.CAMPAIGN, body -> {
      String election = election(body);
      String candidate = candidate(body);
      String liveness = Requests.optionalString(body, "liveness");
      return mutex.awaitGrant(election, candidate, mutex.acquireTimeout(body), liveness)
          .map(epoch -> leading(election, candidate, epoch));
    }, body -> mutex.acquireTimeout(body).plus(mutex.afterWait()), (body, late) ->
        mutex.withdraw(body.getString("election"), body.getString("candidate"),
            FencingToken.parse(late.getString("epoch"))));
    action(ElectionWire.LEADER, body -> {
      String election = election(body);
      return store(() -> elections.leader(election)).map(leader -> new JsonObject().put("election", election)
          .put("leader", leader.map(l -> ElectionWire.leader(l.candidate(), l.epoch())).orElse(null)));
    });
    action(ElectionWire.RESIGN, body -> {
      String election = election(body);
      String candidate = candidate(body);
      FencingToken epoch = epoch(body);
      return mutex.release(election, candidate, epoch).map(event -> ElectionWire.leading(election, candidate, epoch)
          .put("resigned", true)
          .put("leader", event.owner().map(next -> ElectionWire.leader(next, event.sequence())).orElse(null)));
    });
    action(ElectionWire.HANDOVER, body -> {
      String election = election(body);
      String candidate = candidate(body);
      FencingToken epoch = epoch(body);
      String successor = Requests.mutexName(body, "successor");
      if (successor.equals(candidate)) {
        throw FailureCodes.badRequest("field 'successor' names the leader '" + candidate + "' itself: name a"
            + " candidate that is campaigning in election '" + election + "'");
      }
      return mutex.releaseTo(election, candidate, epoch, successor).map(event ->
          ElectionWire.leading(election, candidate, epoch).put("handedOver", true)
              .put("leader", ElectionWire.leader(successor, event.sequence())));
    });
    action(ElectionWire.HEARTBEAT, body -> {
      String election = election(body);
      String candidate = candidate(body);
      FencingToken epoch = epoch(body);
      return mutex.heartbeat(election, candidate, epoch).map(owner -> leading(election, candidate, owner.token()));
    });
    action(ElectionWire.ABANDON, body -> {
      String election = election(body);
      String candidate = candidate(body);
      return mutex.abandon(election, candidate).map(n -> new JsonObject().put("election", election)
          .put("candidate", candidate).put("abandoned", n));
    });
  }

  /** A leader's reply: the lease travels with it, as with a mutex grant (the leader heartbeats within it). */
  private JsonObject leading(String election, String candidate, FencingToken epoch) {
    return ElectionWire.leading(election, candidate, epoch).put("leaseMs", mutex.lease().toMillis());
  }

  private static String election(JsonObject body) {
    return Requests.mutexName(body, "election");
  }

  private static String candidate(JsonObject body) {
    return Requests.mutexName(body, "candidate");
  }

  private static FencingToken epoch(JsonObject body) {
    FencingToken epoch = Requests.optionalToken(body, "epoch");
    if (epoch == null) {
      throw FailureCodes.badRequest("field 'epoch' is missing: expected the leadership's epoch (20 hex digits, as"
          + " campaign answered)");
    }
    return epoch;
  }
}
