package io.github.fdbcoord.client.wire;

import io.github.fdbcoord.api.FencingToken;
import io.github.fdbcoord.api.LockEvent;
import io.github.fdbcoord.api.MutexInspection;
import io.github.fdbcoord.api.MutexOwner;
import io.github.fdbcoord.api.MutexState;
import io.github.fdbcoord.api.QueueEntry;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.time.Duration;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The mutex's messages: action names, grants, owner records, states and lock events as JSON.
 * Tokens and sequences travel as their 20 hex digits; queue tickets as the 12-byte versionstamp
 * of the enqueue (the ticket's 10 bytes and user version 0) in hex.
 */
public final class MutexWire {
  /** The mutex's action "tryAcquire". */
  public static final String TRY_ACQUIRE = "tryAcquire";
  /** The mutex's action "acquire". */
  public static final String ACQUIRE = "acquire";
  /**
   * The mutex's action "acquireAll": several mutexes at once, all or none ({@code names}, {@code owner},
   * {@code timeoutMs}); the reply's {@code grants} are {@code {name, token}} objects.
   */
  public static final String ACQUIRE_ALL = "acquireAll";
  /** The mutex's action "releaseAll": the grants {@code [{name, token}]} of {@code owner}, in one transaction. */
  public static final String RELEASE_ALL = "releaseAll";
  /** The mutex's action "release". */
  public static final String RELEASE = "release";
  /** The mutex's action "heartbeat". */
  public static final String HEARTBEAT = "heartbeat";
  /** The mutex's action "abandon". */
  public static final String ABANDON = "abandon";
  /** The mutex's action "leave". */
  public static final String LEAVE = "leave";
  /** The mutex's action "state". */
  public static final String STATE = "state";
  /** The mutex's action "inspect". */
  public static final String INSPECT = "inspect";
  /** The mutex's action "held". */
  public static final String HELD = "held";
  /** The mutex's action "watch". */
  public static final String WATCH = "watch";
  /** The mutex's action "unwatch". */
  public static final String UNWATCH = "unwatch";
  /** The mutex's action "position": the event log's current position, to watch {@code since} later. */
  public static final String POSITION = "position";

  private static final HexFormat HEX = HexFormat.of();
  /** The user version of a queue ticket's versionstamp: always 0, two bytes. */
  private static final String TICKET_USER_VERSION = "0000";

  private MutexWire() {}

  /** The reply of an acquire that holds the mutex. */
  public static JsonObject held(String name, String owner, FencingToken token) {
    return new JsonObject().put("name", name).put("owner", owner).put("held", true).put("token", token.toString());
  }

  /**
   * The reply of a tryAcquire (or waiter heartbeat) that is queued at {@code position}; {@code
   * ticket} is the enqueue's 12-byte versionstamp, or null.
   */
  public static JsonObject queued(String name, String owner, int position, byte[] ticket) {
    return new JsonObject().put("name", name).put("owner", owner).put("held", false).put("position", position)
        .put("ticket", ticket == null ? null : HEX.formatHex(ticket));
  }

  /**
   * The service's lease, which a holding reply (acquire, tryAcquire, heartbeat) reports so that a
   * client renews often enough; empty from a service that does not report it.
   */
  public static OptionalLong leaseMs(JsonObject reply) {
    Long ms = reply.getLong("leaseMs");
    return ms == null ? OptionalLong.empty() : OptionalLong.of(ms);
  }

  /** Whether an acquire reply holds the mutex. */
  public static boolean isHeld(JsonObject grant) {
    return grant.getBoolean("held");
  }

  /** The token of a holding acquire reply; empty when queued. */
  public static Optional<FencingToken> token(JsonObject grant) {
    return isHeld(grant) ? Optional.of(FencingToken.parse(grant.getString("token"))) : Optional.empty();
  }

  /** The queue position of an acquire reply; 0 when held. */
  public static int position(JsonObject grant) {
    return isHeld(grant) ? 0 : grant.getInteger("position");
  }

  /** The reply of a holder's heartbeat: the owner record of mutex {@code name}, with {@code held}. */
  public static JsonObject owner(String name, MutexOwner o) {
    return new JsonObject().put("name", name).mergeIn(ownerRecord(o));
  }

  /** The owner record in a heartbeat reply or a state's {@code owner}. */
  public static MutexOwner owner(JsonObject j) {
    return new MutexOwner(j.getString("owner"), FencingToken.parse(j.getString("token")), j.getLong("heartbeats"));
  }

  private static JsonObject ownerRecord(MutexOwner o) {
    return new JsonObject().put("owner", o.owner()).put("token", o.token().toString()).put("heartbeats", o.heartbeats());
  }

  /** The reply of state: {@code name}, {@code held}, {@code owner} (null when free), {@code queue}. */
  public static JsonObject state(MutexState s) {
    JsonArray queue = new JsonArray();
    for (QueueEntry q : s.queue()) {
      queue.add(new JsonObject().put("owner", q.owner()).put("ticket", ticket(q.ticket())));
    }
    return new JsonObject().put("name", s.name()).put("held", s.isHeld())
        .put("owner", s.owner().map(MutexWire::ownerRecord).orElse(null))
        .put("queue", queue);
  }

  /** The state a {@link #state(MutexState)} reply describes. */
  public static MutexState state(JsonObject j) {
    JsonObject o = j.getJsonObject("owner");
    List<QueueEntry> queue = new ArrayList<>();
    for (Object q : j.getJsonArray("queue")) {
      JsonObject e = (JsonObject) q;
      queue.add(new QueueEntry(e.getString("owner"), ticket(e.getString("ticket"))));
    }
    return new MutexState(j.getString("name"), o == null ? Optional.empty() : Optional.of(owner(o)), queue);
  }

  /**
   * The reply of inspect: the {@link #state(MutexState)} reply with {@code heldMs} and
   * {@code leaseLeftMs} (null when empty).
   */
  public static JsonObject inspection(MutexInspection i) {
    return state(i.state()).put("heldMs", i.heldFor().map(Duration::toMillis).orElse(null))
        .put("leaseLeftMs", i.leaseLeft().map(Duration::toMillis).orElse(null));
  }

  /** The inspection an inspect reply describes. */
  public static MutexInspection inspection(JsonObject j) {
    return new MutexInspection(state(j), millis(j.getLong("heldMs")), millis(j.getLong("leaseLeftMs")));
  }

  private static Optional<Duration> millis(Long ms) {
    return ms == null ? Optional.empty() : Optional.of(Duration.ofMillis(ms));
  }

  /** A queue ticket as it travels: its versionstamp's 12 bytes in hex. */
  public static String ticket(FencingToken ticket) {
    return ticket + TICKET_USER_VERSION;
  }

  /** The ticket of a {@link #ticket(FencingToken)} string. */
  public static FencingToken ticket(String hex) {
    return FencingToken.of(Arrays.copyOf(HEX.parseHex(hex), FencingToken.LENGTH));
  }

  /** A lock event as published and replayed; {@code token} is redundant (the sequence when granted) but part of the contract. */
  public static JsonObject event(LockEvent e) {
    return new JsonObject()
        .put("type", e.type().name())
        .put("mutex", e.mutex())
        .put("sequence", e.sequence().toString())
        .put("owner", e.owner().orElse(null))
        .put("token", e.token().map(FencingToken::toString).orElse(null))
        .put("previousOwner", e.previousOwner().orElse(null))
        .put("previousToken", e.previousToken().map(FencingToken::toString).orElse(null));
  }

  /** The lock event of a {@link #event(LockEvent)} message. */
  public static LockEvent event(JsonObject j) {
    return new LockEvent(LockEvent.Type.valueOf(j.getString("type")), j.getString("mutex"),
        FencingToken.parse(j.getString("sequence")), Optional.ofNullable(j.getString("previousOwner")),
        Optional.ofNullable(j.getString("previousToken")).map(FencingToken::parse),
        Optional.ofNullable(j.getString("owner")));
  }

  /** The reply of leave. */
  public static JsonObject left(String name, String owner, boolean left) {
    return new JsonObject().put("name", name).put("owner", owner).put("left", left);
  }

  /** Whether a leave reply left a queue. */
  public static boolean left(JsonObject j) {
    return j.getBoolean("left");
  }

  /** The reply of held: a page of held mutex names, {@code nextAfter} when the page is full. */
  public static JsonObject heldPage(List<String> names, int limit) {
    return new JsonObject().put("names", WireProtocol.array(names))
        .put("nextAfter", names.size() == limit ? names.get(names.size() - 1) : null);
  }

  /** The names of a held reply. */
  public static List<String> heldNames(JsonObject j) {
    return WireProtocol.strings(j.getJsonArray("names"));
  }
}
