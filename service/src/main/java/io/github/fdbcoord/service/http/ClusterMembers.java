package io.github.fdbcoord.service.http;

import io.github.fdbcoord.cluster.FdbClusterManager;
import io.vertx.core.Context;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.spi.cluster.ClusterManager;
import io.vertx.core.spi.cluster.NodeInfo;

import java.io.IOException;
import java.net.InetAddress;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.IntSupplier;

/**
 * This node and the other members of its Vert.x cluster as {@code /nodes} lists them: each with a
 * name a person can map (the configured {@code nodeName}, else the {@code name} of the node's Vert.x
 * cluster metadata, else {@code host:pid}), its host, process and uptime; a member that went stays
 * listed, marked left or evicted since when, for {@link HttpOptions#getDepartedRetention()} (at most
 * {@link HttpOptions#getMaxDepartedNodes()} of them, the latest).
 *
 * <p>A member running this service answers its details at {@code <prefix>.node.<nodeId>}; of any
 * other member, the cluster manager's node info gives the event bus's host and port. Whether a
 * member left or was evicted comes from {@link FdbClusterManager#departureCause}; under another
 * cluster manager it is unknown ({@code GONE}). The members are read every second, so one that
 * comes and goes between two reads of {@code /nodes} is still listed.
 *
 * <p>Used on the HTTP verticle's event loop only: no locking.
 */
final class ClusterMembers {
  private static final long REFRESH_MS = 1_000;
  private static final long DETAILS_TIMEOUT_MS = 2_000;

  private final Vertx vertx;
  private final HttpOptions options;
  private final IntSupplier httpPort;
  private final String host = localHostName();
  private final long pid = ProcessHandle.current().pid();
  private final Instant startedAt = Instant.now();
  private final long startedNanos = System.nanoTime();
  /** Live members other than this node, by id: their details as last fetched (empty until then). */
  private final Map<String, Member> members = new HashMap<>();
  /** Members that went, oldest first. */
  private final LinkedHashMap<String, Departed> departed = new LinkedHashMap<>();
  /** Members whose details are being fetched. */
  private final Set<String> fetching = new HashSet<>();
  private MessageConsumer<Object> detailsConsumer;
  private Context context;
  private long timer = -1;

  /** A member's details and, on this node's clock, when they were fetched (its uptime then is in them). */
  private record Member(JsonObject details, long fetchedNanos) {}

  private record Departed(Member member, String status, Instant at, long atNanos) {}

  ClusterMembers(Vertx vertx, HttpOptions options, IntSupplier httpPort) {
    this.vertx = vertx;
    this.options = options;
    this.httpPort = httpPort;
  }

  /** When clustered: answers this node's details to the other members and starts following the membership. */
  void start() {
    ClusterManager cm = clusterManager();
    if (cm == null) {
      return;
    }
    context = vertx.getOrCreateContext();
    detailsConsumer = vertx.eventBus().consumer(detailsAddress(cm.getNodeId()), m -> m.reply(self()));
    refresh();
    timer = vertx.setPeriodic(REFRESH_MS, id -> refresh());
  }

  void stop() {
    if (timer >= 0) {
      vertx.cancelTimer(timer);
    }
    if (detailsConsumer != null) {
      detailsConsumer.unregister();
    }
  }

  /** This node's id: the cluster manager's when clustered, else host and process. */
  String nodeId() {
    ClusterManager cm = clusterManager();
    return cm != null ? cm.getNodeId() : host + "/" + pid;
  }

  /** This node's details (name, host, pid, start, uptime, HTTP address), as the other members read them. */
  JsonObject self() {
    return new JsonObject()
        .put("id", nodeId())
        .put("name", selfName())
        .put("host", host)
        .put("pid", pid)
        .put("startedAt", startedAt.toString())
        .put("uptimeMs", (System.nanoTime() - startedNanos) / 1_000_000)
        .put("http", options.getHost() + ":" + httpPort.getAsInt());
  }

  /** The other live members, sorted by id. */
  JsonArray others() {
    JsonArray out = new JsonArray();
    ClusterManager cm = clusterManager();
    if (cm == null) {
      return out;
    }
    String self = cm.getNodeId();
    long now = System.nanoTime();
    // Read now, not at the last refresh: a member that joined since is listed at once.
    cm.getNodes().stream().filter(id -> !id.equals(self)).sorted()
        .forEach(id -> out.add(entry(id, members.get(id), now).put("status", "MEMBER")));
    return out;
  }

  /** The members that went and are still kept, latest first. */
  JsonArray departed() {
    JsonArray out = new JsonArray();
    ClusterManager cm = clusterManager();
    if (cm == null) {
      return out;
    }
    Set<String> live = new HashSet<>(cm.getNodes());
    long now = System.nanoTime();
    List<Map.Entry<String, Departed>> gone = List.copyOf(departed.entrySet());
    for (int i = gone.size() - 1; i >= 0; i--) {
      String id = gone.get(i).getKey();
      Departed d = gone.get(i).getValue();
      if (!live.contains(id)) { // else back again (a paused node re-joins with its id) since the last refresh
        out.add(entry(id, d.member(), d.atNanos()).put("status", d.status())
            .put("departedAt", d.at().toString()).put("departedMs", Math.max(0, (now - d.atNanos()) / 1_000_000)));
      }
    }
    return out;
  }

  /** A member's entry; its uptime counted on to {@code asOfNanos} from when its details were fetched. */
  private static JsonObject entry(String id, Member m, long asOfNanos) {
    JsonObject details = m == null ? new JsonObject() : m.details();
    Long uptime = details.getLong("uptimeMs");
    return new JsonObject()
        .put("id", id)
        .put("self", false)
        .put("clustered", true)
        .put("name", details.getString("name", id))
        .put("host", details.getString("host"))
        .put("pid", details.getLong("pid"))
        .put("startedAt", details.getString("startedAt"))
        .put("uptimeMs", uptime == null ? null : uptime + Math.max(0, (asOfNanos - m.fetchedNanos()) / 1_000_000))
        .put("http", details.getString("http"))
        .put("eventBus", details.getString("eventBus"));
  }

  /** Fetches the details of members not seen before; moves the members that went to the departed. */
  private void refresh() {
    ClusterManager cm = clusterManager();
    String self = cm.getNodeId();
    Set<String> live = new HashSet<>(cm.getNodes());
    live.remove(self);
    for (String id : live) {
      if (!members.containsKey(id)) {
        members.put(id, null);
        departed.remove(id);
      }
      // Again until the member answers itself: it joins the cluster before its info is written and
      // before its service (if any) is deployed.
      Member m = members.get(id);
      if ((m == null || !m.details().containsKey("pid")) && fetching.add(id)) {
        fetch(cm, id, m != null);
      }
    }
    for (Iterator<Map.Entry<String, Member>> it = members.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<String, Member> e = it.next();
      if (!live.contains(e.getKey())) {
        it.remove();
        depart(cm, e.getKey(), e.getValue());
      }
    }
    long now = System.nanoTime();
    long retention = options.getDepartedRetention().toNanos();
    departed.values().removeIf(d -> now - d.atNanos() > retention);
    while (departed.size() > options.getMaxDepartedNodes()) {
      departed.remove(departed.keySet().iterator().next());
    }
  }

  private void depart(ClusterManager cm, String id, Member member) {
    String status = "GONE";
    Instant at = Instant.now();
    if (cm instanceof FdbClusterManager fdb) {
      status = fdb.departureCause(id).map(c -> c.equals("evicted") ? "EVICTED" : "LEFT").orElse(status);
      at = fdb.departedAt(id).orElse(at);
    }
    long atNanos = System.nanoTime() - Math.max(0, Instant.now().toEpochMilli() - at.toEpochMilli()) * 1_000_000;
    departed.put(id, new Departed(member, status, at, atNanos));
  }

  /**
   * The member's own details when it runs this service; else, from its node info, the event bus's
   * address and the {@code name} of its metadata.
   */
  private void fetch(ClusterManager cm, String id, boolean haveNodeInfo) {
    vertx.eventBus().<JsonObject>request(detailsAddress(id), null, new DeliveryOptions().setSendTimeout(DETAILS_TIMEOUT_MS))
        .onSuccess(reply -> {
          fetching.remove(id);
          record(id, reply.body());
        })
        .onFailure(e -> {
          if (haveNodeInfo) {
            fetching.remove(id);
            return;
          }
          Promise<NodeInfo> info = Promise.promise();
          cm.getNodeInfo(id, info);
          // The cluster manager completes on a thread of its own: back to this verticle's event loop.
          info.future().onComplete(ar -> context.runOnContext(v -> {
            fetching.remove(id);
            if (ar.succeeded()) {
              NodeInfo i = ar.result();
              JsonObject metadata = i.metadata();
              String eventBus = i.host() + ":" + i.port();
              record(id, new JsonObject().put("host", i.host()).put("eventBus", eventBus)
                  .put("name", metadata != null && metadata.getValue("name") instanceof String n ? n : eventBus));
            }
          }));
        });
  }

  private void record(String id, JsonObject details) {
    Member m = new Member(details, System.nanoTime());
    if (members.containsKey(id)) {
      members.put(id, m);
    } else if (departed.containsKey(id) && departed.get(id).member() == null) {
      Departed d = departed.get(id);
      departed.put(id, new Departed(m, d.status(), d.at(), d.atNanos()));
    }
  }

  private String selfName() {
    if (options.getNodeName() != null) {
      return options.getNodeName();
    }
    ClusterManager cm = clusterManager();
    NodeInfo info = cm == null ? null : cm.getNodeInfo();
    if (info != null && info.metadata() != null && info.metadata().getValue("name") instanceof String n && !n.isBlank()) {
      return n;
    }
    return host + ":" + pid;
  }

  private String detailsAddress(String nodeId) {
    return options.getAddressPrefix() + ".node." + nodeId;
  }

  private ClusterManager clusterManager() {
    return vertx instanceof VertxInternal v ? v.clusterManager() : null;
  }

  private static String localHostName() {
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      return "localhost";
    }
  }
}
