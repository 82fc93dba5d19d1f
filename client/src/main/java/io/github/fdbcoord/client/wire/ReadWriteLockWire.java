package io.github.fdbcoord.client.wire;

import io.vertx.core.json.JsonObject;

/**
 * The read-write lock's messages on {@code <prefix>.rwlock} (docs/vertx.md). A grant's token is the versionstamp of
 * the commit that made it, as 24 hex digits (10 bytes of commit version and order, 2 of user version telling apart
 * the readers one commit let in): tokens of one lock sort in grant order as strings.
 */
public final class ReadWriteLockWire {
  /** The action "acquire": waits until the owner holds the lock in the mode asked for. */
  public static final String ACQUIRE = "acquire";
  /** The action "release": ends a grant; the queue's head goes next. */
  public static final String RELEASE = "release";
  /** The action "heartbeat": keeps a grant alive (more often than the lease). */
  public static final String HEARTBEAT = "heartbeat";
  /** The action "downgrade": a write grant becomes a read grant with a new token, no writer in between. */
  public static final String DOWNGRADE = "downgrade";
  /** The action "state": the lock's holders and queue. */
  public static final String STATE = "state";
  /** The action "abandon": ends the acquires of an owner waiting on the node that answers. */
  public static final String ABANDON = "abandon";
  /** The shared mode, as the wire spells it. */
  public static final String READ = "read";
  /** The exclusive mode, as the wire spells it. */
  public static final String WRITE = "write";
  /** Hex digits of a token. */
  public static final int TOKEN_HEX_LENGTH = 24;

  private ReadWriteLockWire() {}

  /** The reply of an acquire, a heartbeat or a downgrade: {@code owner} holds {@code name} in {@code mode}. */
  public static JsonObject grant(String name, String owner, String mode, String token) {
    return new JsonObject().put("name", name).put("owner", owner).put("mode", mode).put("token", token);
  }

  /** {@code {owner, mode, token}}: one holder inside a state reply. */
  public static JsonObject holder(String owner, String mode, String token) {
    return new JsonObject().put("owner", owner).put("mode", mode).put("token", token);
  }

  /** {@code {owner, mode}}: one waiting request inside a state reply. */
  public static JsonObject waiter(String owner, String mode) {
    return new JsonObject().put("owner", owner).put("mode", mode);
  }
}
