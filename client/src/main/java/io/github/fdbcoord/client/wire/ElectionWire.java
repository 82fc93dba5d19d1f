package io.github.fdbcoord.client.wire;

import io.github.fdbcoord.api.FencingToken;
import io.vertx.core.json.JsonObject;

/**
 * Leader election's messages on {@code <prefix>.election} (docs/vertx.md): an election is the mutex of the same
 * name, its leader the mutex's holder and its epoch the grant's fencing token, as 20 hex digits.
 */
public final class ElectionWire {
  /** The election's action "campaign": waits until the candidate leads. */
  public static final String CAMPAIGN = "campaign";
  /** The election's action "leader": who leads now, if anyone. */
  public static final String LEADER = "leader";
  /** The election's action "resign": ends a leadership; the next candidate leads. */
  public static final String RESIGN = "resign";
  /**
   * The election's action "handover": ends a leadership and makes the named candidate, which must be campaigning, the
   * leader in the same transaction (those in line before it keep their places).
   */
  public static final String HANDOVER = "handover";
  /** The election's action "heartbeat": keeps a leadership alive (more often than the lease). */
  public static final String HEARTBEAT = "heartbeat";
  /** The election's action "abandon": ends the campaigns of a candidate waiting on the node that answers. */
  public static final String ABANDON = "abandon";

  private ElectionWire() {}

  /** The reply of a campaign that leads, or of a leader's heartbeat. */
  public static JsonObject leading(String election, String candidate, FencingToken epoch) {
    return new JsonObject().put("election", election).put("candidate", candidate).put("epoch", epoch.toString());
  }

  /** {@code {candidate, epoch}}: a leader inside a reply. */
  public static JsonObject leader(String candidate, FencingToken epoch) {
    return new JsonObject().put("candidate", candidate).put("epoch", epoch.toString());
  }
}
