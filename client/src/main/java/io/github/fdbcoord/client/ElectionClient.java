package io.github.fdbcoord.client;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.client.wire.ElectionWire;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;

import java.time.Duration;
import java.util.Optional;

/**
 * Leader election ({@code <prefix>.election}, docs/vertx.md) through a {@link CoordinationClient}: an election is
 * the mutex of the same name, its leader the holder, its epoch the grant's fencing token. Each call completes, on
 * the caller's context, with a typed reply or a {@link io.vertx.core.eventbus.ReplyException} with the failure code
 * of docs/vertx.md (400 bad request, 409 timed_out / not_held / not_owner / abandoned, 503 unavailable), as the
 * mutex's calls do.
 *
 * <pre>
 * client.elections().lead("billing").onSuccess(leadership -&gt; {
 *   leadership.lost().onSuccess(epoch -&gt; stopBilling());
 *   startBilling(leadership.epoch());            // writes carry the epoch: a stale leader's are refused
 * });
 * </pre>
 */
public final class ElectionClient extends PrimitiveClient {
  ElectionClient(CoordinationClient client) {
    super(client, client.electionAddress());
  }

  /**
   * A leadership as the service answered it.
   *
   * @param election the election
   * @param candidate the candidate that leads
   * @param epoch the leadership's epoch: greater than every earlier leadership's of the election
   * @param lease how long the leadership lives without a {@link #heartbeat}
   */
  public record Leadership(String election, String candidate, FencingToken epoch, Duration lease) {
    static Leadership of(JsonObject j) {
      return new Leadership(j.getString("election"), j.getString("candidate"), FencingToken.parse(j.getString("epoch")),
          LeaseKeeper.lease(j));
    }
  }

  /** Who leads an election, under which epoch. */
  public record Leader(String candidate, FencingToken epoch) {
    static Optional<Leader> of(JsonObject j) {
      return j == null ? Optional.empty()
          : Optional.of(new Leader(j.getString("candidate"), FencingToken.parse(j.getString("epoch"))));
    }
  }

  /**
   * The end of a leadership: {@code next} is the candidate that leads from the same transaction, empty when nobody
   * waited.
   */
  public record Resignation(String election, String candidate, FencingToken epoch, Optional<Leader> next) {
    static Resignation of(JsonObject j) {
      return new Resignation(j.getString("election"), j.getString("candidate"),
          FencingToken.parse(j.getString("epoch")), Leader.of(j.getJsonObject("leader")));
    }
  }

  /**
   * Waits up to {@code timeout} until {@code candidate} leads {@code election} (FIFO among the candidates); fails
   * 409 timed_out after leaving the line. The leader then {@link #heartbeat}s more often than the lease, or uses
   * {@link #lead(String, LockOptions)}, which does. While it waits, this client answers the service's liveness
   * pings, so the candidate leaves the line when this node goes away.
   */
  public Future<Leadership> campaign(String election, String candidate, Duration timeout) {
    return waiting(ElectionWire.CAMPAIGN, body(election, candidate), timeout).map(Leadership::of);
  }

  /** Who leads {@code election} now, if anyone. */
  public Future<Optional<Leader>> leader(String election) {
    return request(ElectionWire.LEADER, new JsonObject().put("election", election))
        .map(j -> Leader.of(j.getJsonObject("leader")));
  }

  /** Keeps a leadership alive for a lease; fails 409 not_owner / not_held once it was lost. */
  public Future<Leadership> heartbeat(String election, String candidate, FencingToken epoch) {
    return request(ElectionWire.HEARTBEAT, body(election, candidate, epoch)).map(Leadership::of);
  }

  /** Ends a leadership; the next candidate leads. Fails 409 not_owner / not_held when it was not current. */
  public Future<Resignation> resign(String election, String candidate, FencingToken epoch) {
    return request(ElectionWire.RESIGN, body(election, candidate, epoch)).map(Resignation::of);
  }

  /**
   * Ends the campaigns of {@code candidate} waiting on the serving node (they fail 409 abandoned) and takes it out
   * of the line; completes with how many it ended.
   */
  public Future<Integer> abandon(String election, String candidate) {
    return request(ElectionWire.ABANDON, body(election, candidate)).map(PrimitiveClient::abandoned);
  }

  /** As {@link #lead(String, LockOptions)} with the default options: a random candidate name, a 10 s wait. */
  public Future<ClientLeadership> lead(String election) {
    return lead(election, new LockOptions());
  }

  /**
   * Campaigns in {@code election} as {@code options.getOwner()} (or a random name) and keeps the leadership until
   * {@link ClientLeadership#resign()}: it heartbeats on the caller's context, reports a loss through
   * {@link ClientLeadership#lost()}, and resigns when the caller's context closes. Fails with 409 timed_out when it
   * did not lead within {@code options.getTimeout()}.
   */
  public Future<ClientLeadership> lead(String election, LockOptions options) {
    return hold(options, candidate -> campaign(election, candidate, options.getTimeout()),
        (context, l, renew, sentAt) -> new ClientLeadership(this, context, l, renew, sentAt));
  }

  private static JsonObject body(String election, String candidate) {
    return new JsonObject().put("election", election).put("candidate", candidate);
  }

  private static JsonObject body(String election, String candidate, FencingToken epoch) {
    return body(election, candidate).put("epoch", epoch == null ? null : epoch.toString());
  }
}
