package io.github.fdbcoord.cluster.process;

import io.github.fdbcoord.cluster.FdbLock;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.shareddata.Lock;
import io.vertx.core.spi.cluster.ClusterManager;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What a cluster node started with Vert.x's launcher ({@code VertxApplication NodeVerticle -cluster})
 * runs for {@link CrossProcessClusterTest}: a consumer on {@code node.<nodeId>} that answers with its
 * node id, and a command loop on standard input whose answers go to standard output, one line each:
 * {@code <n> <command> [args]} is answered by {@code R <n> ok <result>} or {@code R <n> err <message>};
 * a held lock that is lost prints {@code E lost <name> <token>}. Commands: {@code id}, {@code nodes}
 * (sorted, comma-separated), {@code request <address> <body>}, {@code lock <name> <timeoutMillis>}
 * (answers the fencing token once granted), {@code release <name>}.
 */
public class NodeVerticle extends VerticleBase {
  private final Map<String, Lock> held = new ConcurrentHashMap<>();

  @Override
  public Future<?> start() {
    String nodeId = clusterManager().getNodeId();
    return vertx.eventBus().<String>consumer("node." + nodeId, m -> m.reply(nodeId + ":" + m.body())).completion()
        .onSuccess(v -> {
          Thread commands = new Thread(this::readCommands, "node-commands");
          commands.setDaemon(true);
          commands.start();
          print("READY " + nodeId);
        });
  }

  private ClusterManager clusterManager() {
    return ((VertxInternal) vertx).clusterManager();
  }

  private void readCommands() {
    try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
      String line;
      while ((line = in.readLine()) != null) {
        String[] words = line.trim().split(" ", 3);
        if (words.length >= 2) {
          String n = words[0];
          execute(words[1], words.length > 2 ? words[2] : "")
              .onComplete(ar -> print("R " + n + (ar.succeeded() ? " ok " + ar.result() : " err " + ar.cause())));
        }
      }
    } catch (IOException ignored) {
      // the test closed our input: nothing more to do
    }
  }

  private Future<String> execute(String command, String args) {
    String[] a = args.split(" ", 2);
    return switch (command) {
      case "id" -> Future.succeededFuture(clusterManager().getNodeId());
      case "nodes" -> Future.succeededFuture(String.join(",", new TreeSet<>(clusterManager().getNodes())));
      case "request" -> vertx.eventBus().<String>request(a[0], a.length > 1 ? a[1] : "").map(m -> m.body());
      case "lock" -> vertx.sharedData().getLockWithTimeout(a[0], Long.parseLong(a[1])).map(lock -> {
        held.put(a[0], lock);
        FdbLock fdb = (FdbLock) lock;
        String token = fdb.token().toString();
        fdb.lost().thenRun(() -> print("E lost " + a[0] + " " + token));
        return token;
      });
      case "release" -> {
        Lock lock = held.remove(a[0]);
        if (lock == null) {
          yield Future.failedFuture("not held: " + a[0]);
        }
        yield Future.fromCompletionStage(((FdbLock) lock).releaseAsync()).map(e -> "released");
      }
      default -> Future.failedFuture("unknown command " + command);
    };
  }

  private static synchronized void print(String line) {
    System.out.println(line);
    System.out.flush();
  }
}
