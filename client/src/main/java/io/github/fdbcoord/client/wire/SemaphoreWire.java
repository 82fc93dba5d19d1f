package io.github.fdbcoord.client.wire;

import io.github.fdbcoord.api.FencingToken;
import io.vertx.core.json.JsonObject;

/**
 * The fenced semaphore's messages on {@code <prefix>.semaphore} (docs/vertx.md): a grant is one permit held by an
 * owner, its fencing token as 20 hex digits.
 */
public final class SemaphoreWire {
  /** The semaphore's action "acquire": waits until the owner holds one of the semaphore's permits. */
  public static final String ACQUIRE = "acquire";
  /** The semaphore's action "release": ends a grant; the first waiter gets the permit. */
  public static final String RELEASE = "release";
  /** The semaphore's action "heartbeat": keeps a grant alive (more often than the lease). */
  public static final String HEARTBEAT = "heartbeat";
  /** The semaphore's action "state": the permit count, holders and waiters. */
  public static final String STATE = "state";
  /** The semaphore's action "abandon": ends the acquires of an owner waiting on the node that answers. */
  public static final String ABANDON = "abandon";
  /** Most permits a semaphore may have (the layer's limit). */
  public static final int MAX_PERMITS = 10_000;

  private SemaphoreWire() {}

  /** The reply of an acquire that holds a permit, or of a holder's heartbeat. */
  public static JsonObject held(String name, String owner, FencingToken token) {
    return new JsonObject().put("name", name).put("owner", owner).put("token", token.toString());
  }

  /** {@code {owner, token}}: a holder inside a state. */
  public static JsonObject holder(String owner, FencingToken token) {
    return new JsonObject().put("owner", owner).put("token", token.toString());
  }
}
