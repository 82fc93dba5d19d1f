package io.github.fdbcoord.cluster.impl;

import io.github.fdbcoord.fdb.FdbErrors;
import io.netty.channel.ConnectTimeoutException;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.internal.logging.Logger;
import io.vertx.core.internal.logging.LoggerFactory;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.NetSocket;
import io.vertx.core.spi.cluster.NodeInfo;

import java.net.ConnectException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;

/**
 * Notices a peer's death from its connection, at no cost while all is well: every node listens on
 * a TCP port (published with its record) and keeps one idle connection to every other member. When
 * a connection closes and an immediate reconnect is refused, as happens when the peer's process has
 * died and its host is up, the node records a suspicion of the peer in the store; the peer, if
 * alive, sees it through a watch and renews its record at once; after the suspicion window the
 * suspecter evicts the peer in the one transaction that commits only if the peer's record is still
 * the one it saw when it suspected it. A paused process keeps its sockets open, so it is never
 * suspected this way; a dead host or a partition closes nothing, and the node lease catches those.
 *
 * <p>The connections run on a small Vert.x instance of the detector's own (one event loop, closed
 * with the detector), not on the node's: they are no traffic of the node, so they must not show in
 * its metrics or keep its event loops busy. Internal to the cluster manager.
 *
 * <p>The server listens on the event bus's host only, and keeps only connections it can attribute
 * to a member: a connector sends its node id and a newline first, and a connection whose id is no
 * member's, or that says nothing within {@link #HANDSHAKE_MILLIS}, is closed. The server names its
 * own node the same way as soon as it accepts, and a connector keeps a connection only once the
 * node it meant answered: a dead node's port may be taken at once by another process (another
 * cluster's detector, any server), which accepts the connection but is not the node, so that answer
 * (another id, or a close before any) raises the suspicion as a refused connection does. At most
 * {@link #CONNECTIONS_PER_MEMBER} connections per member plus {@link #SPARE_CONNECTIONS} are open
 * at a time (a connection beyond is closed at once), so a flood of connections cannot use up the
 * process's file descriptors.
 */
public final class FailureDetector {

  private static final Logger log = LoggerFactory.getLogger(FailureDetector.class);
  private static final long RETRY_MILLIS = 100;
  private static final int CONNECT_TIMEOUT_MILLIS = 1000;
  /** How long a new connection may take to name its node. */
  static final long HANDSHAKE_MILLIS = 2000;
  /** Connections kept per member: one, and a reconnect overlapping the close of the one before. */
  static final int CONNECTIONS_PER_MEMBER = 2;
  /** Connections kept beyond those of the members: probes ({@link #refuses}) and members not yet known here. */
  static final int SPARE_CONNECTIONS = 16;
  /** A node id is a UUID: a first line longer than this is no node id. */
  private static final int MAX_HANDSHAKE_BYTES = 128;

  private final Duration window;
  private final AtomicBoolean closed = new AtomicBoolean();
  private Vertx vertx;
  private final NodeState state;
  private final Set<NetSocket> accepted = ConcurrentHashMap.newKeySet();
  private final Map<String, NetSocket> peers = new ConcurrentHashMap<>();
  private final Set<String> suspected = ConcurrentHashMap.newKeySet();
  private volatile NetServer server;
  private volatile NetClient client;
  private volatile String nodeId;
  private volatile ClusterStore store;
  private volatile NodeThreads threads;
  private volatile Membership membership;
  private volatile Predicate<String> isMember = id -> false;

  /** A detector of a node in {@code state}, suspecting for {@code window} before it evicts. */
  public FailureDetector(Duration window, NodeState state) {
    this.window = window;
    this.state = state;
  }

  /**
   * Starts listening on an ephemeral port of {@code host}, the host the node's event bus listens
   * on (peers reach the node there, and nothing else should reach the detector).
   */
  public CompletableFuture<FailureDetector> listen(String host) {
    vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1).setWorkerPoolSize(1).setInternalBlockingPoolSize(1));
    client = vertx.createNetClient(new NetClientOptions().setConnectTimeout(CONNECT_TIMEOUT_MILLIS).setTcpNoDelay(true));
    NetServer s = vertx.createNetServer();
    s.connectHandler(this::accept);
    server = s;
    this.host = host;
    return s.listen(0, host).toCompletionStage().toCompletableFuture().thenApply(x -> this);
  }

  private volatile String host;

  /**
   * Keeps a new connection while it names a member within the handshake time, and only while the
   * detector holds fewer than its bound. All on the detector's one event loop.
   */
  private void accept(NetSocket socket) {
    if (closed.get() || accepted.size() >= maxConnections()) {
      socket.close();
      return;
    }
    accepted.add(socket);
    socket.closeHandler(v -> accepted.remove(socket));
    socket.write(nodeId + "\n");
    long timer = vertx.setTimer(HANDSHAKE_MILLIS, t -> socket.close());
    Buffer first = Buffer.buffer();
    AtomicBoolean named = new AtomicBoolean();
    socket.handler(b -> {
      if (named.get()) {
        return; // the connection carries nothing more: only its closing means something
      }
      first.appendBuffer(b);
      int end = indexOfNewline(first);
      if (end < 0) {
        if (first.length() > MAX_HANDSHAKE_BYTES) {
          socket.close();
        }
        return;
      }
      named.set(true);
      String peer = firstLine(first, end);
      isMemberAnywhere(peer).whenComplete((member, err) -> vertx.runOnContext(v -> {
        if (Boolean.TRUE.equals(member)) {
          vertx.cancelTimer(timer);
        } else {
          socket.close();
        }
      }));
    });
  }

  private static String firstLine(Buffer b, int end) {
    return b.getString(0, end, StandardCharsets.UTF_8.name()).strip();
  }

  private static int indexOfNewline(Buffer b) {
    for (int i = 0; i < b.length(); i++) {
      if (b.getByte(i) == '\n') {
        return i;
      }
    }
    return -1;
  }

  /**
   * Whether {@code peer} is a member: in this node's view, or, for a node that joined an instant
   * ago and connects before this node saw it join, in the store.
   */
  private CompletableFuture<Boolean> isMemberAnywhere(String peer) {
    if (peer.isEmpty() || peer.equals(nodeId)) {
      return CompletableFuture.completedFuture(false);
    }
    if (isMember.test(peer)) {
      return CompletableFuture.completedFuture(true);
    }
    ClusterStore s = store;
    if (s == null || state.stopped()) {
      return CompletableFuture.completedFuture(false);
    }
    return s.read(tr -> s.schema().readNodeRecord(tr, peer)).thenApply(record -> record != null);
  }

  /** The most connections the server keeps open at a time. */
  int maxConnections() {
    Membership m = membership;
    int members = m == null ? 0 : m.nodes().size();
    return CONNECTIONS_PER_MEMBER * members + SPARE_CONNECTIONS;
  }

  /** The peers this node holds a connection to now (answered or not yet). */
  Set<String> connectedPeers() {
    return Set.copyOf(peers.keySet());
  }

  /** The connections the server holds open now (named or still in their handshake). */
  int acceptedConnections() {
    return accepted.size();
  }

  /**
   * Listens on {@code host} instead, when the event bus turned out to listen there (Vert.x's
   * {@code EventBusOptions} named it): completes with the new port, null when the detector already
   * listens on {@code host}. The old server stays open until {@link #closeReplaced()}, so that the
   * peers connected to it are not refused before they can read the new port.
   */
  CompletableFuture<Integer> moveTo(String newHost) {
    if (newHost == null || newHost.isEmpty() || newHost.equals(host) || closed.get()) {
      return CompletableFuture.completedFuture(null);
    }
    NetServer s = vertx.createNetServer();
    s.connectHandler(this::accept);
    return s.listen(0, newHost).toCompletionStage().toCompletableFuture().thenApply(x -> {
      replaced = server;
      server = s;
      host = newHost;
      return s.actualPort();
    });
  }

  private volatile NetServer replaced;

  /** Closes the server {@link #moveTo} replaced, once the new port is published. */
  void closeReplaced() {
    NetServer old = replaced;
    replaced = null;
    if (old != null) {
      old.close();
    }
  }

  /** The port peers connect to. */
  int port() {
    return server.actualPort();
  }

  /** The host the server listens on. */
  String host() {
    return host;
  }

  /** Binds the detector to its joined node. */
  public void attach(String nodeId, ClusterStore store, NodeThreads threads, Membership membership) {
    this.nodeId = nodeId;
    this.store = store;
    this.threads = threads;
    this.membership = membership;
    this.isMember = membership::isMember;
  }

  /** Connects to member {@code peer} (no-op for a peer that runs no detector). */
  void watch(String peer) {
    if (peer.equals(nodeId)) {
      return;
    }
    connect(peer);
  }

  /** Stops watching a peer that left. */
  void forget(String peer) {
    NetSocket s = peers.remove(peer);
    suspected.remove(peer);
    if (s != null) {
      s.close();
    }
  }

  /**
   * Connects to the peer at its node info's host (the event bus's, which is set just after the
   * join; until then "localhost", Vert.x's own default host): a node that cannot be reached there
   * is suspected, and a live one refutes, after which the connect is tried again with its info.
   */
  private void connect(String peer) {
    if (state.stopped() || !isMember.test(peer) || peers.containsKey(peer)) {
      return;
    }
    address(peer).thenAccept(address -> {
      if (address == null) {
        return; // a peer without a detector
      }
      String host = address.host() == null ? "localhost" : address.host();
      // Connected from the detector's event loop, so the handlers below are set before that loop can see the
      // connection close: from a store thread, the completion could run after the close, whose handler was then
      // never called, and the dead peer's socket stayed in the map, never suspected.
      vertx.runOnContext(onLoop -> client.connect(address.port(), host).onComplete(ar -> {
        if (ar.succeeded()) {
          NetSocket socket = ar.result();
          if (state.stopped() || !isMember.test(peer) || peers.putIfAbsent(peer, socket) != null) {
            socket.close();
            return;
          }
          String where = host + ":" + address.port();
          AtomicBoolean answered = new AtomicBoolean();
          Buffer answer = Buffer.buffer();
          socket.handler(b -> {
            if (answered.get()) {
              return;
            }
            answer.appendBuffer(b);
            int end = indexOfNewline(answer);
            if (end < 0 && answer.length() <= MAX_HANDSHAKE_BYTES) {
              return;
            }
            answered.set(true);
            String who = end < 0 ? "" : firstLine(answer, end);
            if (!who.equals(peer)) {
              notThePeer(peer, socket, where + " answered as " + (who.isEmpty() ? "no node" : "node " + who));
            }
          });
          socket.closeHandler(v -> {
            if (answered.get()) {
              lost(peer, socket);
            } else {
              notThePeer(peer, socket, "a connection to " + where + " closed before the node answered");
            }
          });
          socket.write(nodeId + "\n");
        } else {
          suspect(peer, "cannot connect to " + host + ":" + address.port() + " (" + ar.cause().getMessage() + ")");
        }
      }));
    }).exceptionally(e -> {
      if (!state.stopped()) {
        log.debug("node " + nodeId + ": no address for " + peer + " yet: " + FdbErrors.unwrap(e));
        later(RETRY_MILLIS, () -> connect(peer));
      }
      return null;
    });
  }

  private record Address(String host, int port) {}

  private CompletableFuture<Address> address(String peer) {
    ClusterSchema schema = store.schema();
    return store.read(tr -> schema.readProbePort(tr, peer).thenCombine(schema.readNodeInfo(tr, peer),
        (port, info) -> port == null ? null : new Address(info == null ? null : hostOf(info), port)));
  }

  private static String hostOf(NodeInfo info) {
    String h = info.host();
    return h == null || h.isEmpty() ? null : h;
  }

  /** The connection closed: the peer left, died, or the network reset it. A reconnect tells which. */
  private void lost(String peer, NetSocket socket) {
    peers.remove(peer, socket);
    if (state.stopped() || !isMember.test(peer)) {
      return;
    }
    connect(peer);
  }

  /**
   * The connection reached something that is not the peer (a live peer's detector holds its port and
   * answers with its id): the peer's process is gone, as a refused connection says. Suspected, not
   * reconnected at once: a foreign server that closes each connection would be reconnected to for ever.
   */
  private void notThePeer(String peer, NetSocket socket, String why) {
    peers.remove(peer, socket);
    socket.close();
    suspect(peer, why);
  }

  /**
   * Records the suspicion with the peer's record as it is now, then, after the window, evicts the
   * peer unless that record changed (the peer refuted or heartbeat meanwhile). A refuted peer is
   * connected to again, and suspected again if that still fails.
   */
  private void suspect(String peer, String why) {
    if (state.stopped() || !state.isActive() || !isMember.test(peer) || !suspected.add(peer)) {
      return;
    }
    String me = nodeId;
    ClusterSchema schema = store.schema();
    long since = System.nanoTime();
    store.run(tr -> schema.readNodeRecord(tr, peer).thenApply(record -> {
      if (record != null) {
        schema.writeSuspicion(tr, peer, me);
      }
      return record;
    })).whenComplete((record, err) -> {
      if (err != null || record == null) {
        suspected.remove(peer);
        if (err != null && !state.stopped()) {
          // The store could not take the suspicion: connecting again tells again whether the peer is gone.
          log.warn("node " + me + " could not record its suspicion of node " + peer + ", trying again: " + FdbErrors.unwrap(err));
          later(RETRY_MILLIS, () -> connect(peer));
        }
        return;
      }
      log.warn("node " + me + " suspects node " + peer + ": " + why + "; evicting it in " + window.toMillis()
          + " ms unless it answers");
      later(window.toMillis(), () -> membership.evict(peer, record, "its connection failed (" + why + ") and it did not answer a suspicion in "
          + window.toMillis() + " ms (detected in " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since) + " ms)")
          .whenComplete((evicted, e) -> {
            suspected.remove(peer);
            if (!Boolean.TRUE.equals(evicted)) {
              connect(peer);
            }
          }));
    });
  }

  /**
   * Whether a fresh connection to {@code peer} is refused right now, which is what a dead process
   * on a live host gives; a refusal also raises the suspicion at once. Completes false when the
   * connection opens, times out (a dead host or a partition: only the lease can tell) or the peer
   * runs no detector. A paused process's kernel still accepts, so a pause never looks refused.
   */
  CompletableFuture<Boolean> refuses(String peer, NodeInfo info, int port) {
    if (state.stopped() || peer.equals(nodeId)) {
      return CompletableFuture.completedFuture(false);
    }
    String host = hostOf(info) == null ? "localhost" : hostOf(info);
    CompletableFuture<Boolean> refused = new CompletableFuture<>();
    client.connect(port, host).onComplete(ar -> {
      if (ar.succeeded()) {
        ar.result().close();
        refused.complete(false);
      } else if (isRefusal(ar.cause())) {
        suspect(peer, "a connection to " + host + ":" + port + " was refused");
        refused.complete(true);
      } else {
        refused.complete(false);
      }
    });
    return refused;
  }

  private static boolean isRefusal(Throwable cause) {
    return cause instanceof ConnectException && !(cause instanceof ConnectTimeoutException);
  }

  /** For tests: suspects {@code peer} as a failed connection would. */
  void suspectNow(String peer, String why) {
    suspect(peer, why);
  }

  private void later(long millis, Runnable task) {
    try {
      threads.timer().schedule(task, millis, TimeUnit.MILLISECONDS);
    } catch (RuntimeException e) {
      // the node's threads stopped: a dead process detects nothing
    }
  }

  /** Closes the server, its connections and the connections to peers, as the death of the process would. */
  public Future<Void> close() {
    if (!closed.compareAndSet(false, true) || vertx == null) {
      return Future.succeededFuture();
    }
    peers.values().forEach(NetSocket::close);
    peers.clear();
    accepted.forEach(NetSocket::close);
    NetServer s = server;
    NetClient c = client;
    closeReplaced();
    Future<Void> serverClosed = s == null ? Future.succeededFuture() : s.close();
    if (c != null) {
      c.close();
    }
    Vertx transport = vertx;
    return serverClosed.andThen(ar -> transport.close());
  }
}
