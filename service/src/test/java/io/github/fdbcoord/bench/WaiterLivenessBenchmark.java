package io.github.fdbcoord.bench;

import io.github.fdbcoord.embedded.EmbeddedDatabase;
import io.github.fdbcoord.client.CoordinationClient;
import io.github.fdbcoord.service.CoordinationVerticle;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetSocket;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * How fast a waiter that went away stops delaying the live waiters behind it, through HTTP on one
 * in-memory engine:
 *
 * <ol>
 *   <li><b>disconnect</b> (lease 10 s): a holder holds; an HTTP acquirer queues, a live HTTP
 *       acquirer queues behind it; the first closes its connection, then the holder releases at once.
 *       Measured: from the disconnect to the live acquirer's 200 (the grant), and from the
 *       disconnect to the entry's leaving the queue.</li>
 *   <li><b>silent</b> (lease {@code bench.silentLeaseMs}, 2 s): five {@code wait:false} waiters
 *       that never heartbeat queue ahead of a live acquirer; the holder releases at once. Measured:
 *       from the release to the live acquirer's grant.</li>
 * </ol>
 *
 * <pre>mvn -q -o test-compile exec:java -Dexec.mainClass=io.github.fdbcoord.bench.WaiterLivenessBenchmark
 *     -Dexec.classpathScope=test [-Dbench.rounds=30 -Dbench.silentRounds=5 -Dbench.silentLeaseMs=2000]</pre>
 */
public final class WaiterLivenessBenchmark {
  private static final int ROUNDS = Integer.getInteger("bench.rounds", 30);
  private static final int SILENT_ROUNDS = Integer.getInteger("bench.silentRounds", 5);
  private static final long SILENT_LEASE_MS = Long.getLong("bench.silentLeaseMs", 2000);

  public static void main(String[] args) throws Exception {
    Vertx vertx = Vertx.vertx();
    EmbeddedDatabase db = EmbeddedDatabase.inMemory();
    try {
      disconnect(vertx, db);
      silent(vertx, db);
    } finally {
      vertx.close().await(30, TimeUnit.SECONDS);
      db.close();
    }
  }

  private static CoordinationVerticle deploy(Vertx vertx, EmbeddedDatabase db, JsonObject mutex) throws Exception {
    JsonObject config = new JsonObject().put("rootDirectory", new JsonArray().add("bench").add(UUID.randomUUID().toString()))
        .put("http", new JsonObject().put("port", 0)).put("workerPoolSize", 4).put("mutex", mutex);
    CoordinationVerticle service = new CoordinationVerticle(config, db);
    vertx.deployVerticle(service).await(30, TimeUnit.SECONDS);
    return service;
  }

  private static void disconnect(Vertx vertx, EmbeddedDatabase db) throws Exception {
    CoordinationVerticle service = deploy(vertx, db, new JsonObject().put("leaseMs", 10_000));
    CoordinationClient client = service.client();
    WebClient web = WebClient.create(vertx);
    NetClient net = vertx.createNetClient();
    List<Double> toGrant = new ArrayList<>();
    List<Double> toLeave = new ArrayList<>();
    for (int round = 0; round < ROUNDS; round++) {
      String name = "d-" + round;
      await(client.tryAcquire(name, "holder"));
      NetSocket gone = await(net.connect(service.httpPort(), "127.0.0.1"));
      String body = new JsonObject().put("owner", "gone").put("timeoutMs", 60_000).encode();
      await(gone.write("POST /mutexes/" + name + "/acquire HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
          + "Content-Length: " + body.length() + "\r\n\r\n" + body));
      waitForQueue(client, name, 1);
      Future<HttpResponse<Buffer>> live = web.post(service.httpPort(), "127.0.0.1", "/mutexes/" + name + "/acquire")
          .sendJsonObject(new JsonObject().put("owner", "live").put("timeoutMs", 60_000));
      waitForQueue(client, name, 2);

      long start = System.nanoTime();
      await(gone.close());
      await(client.release(name, "holder", null));
      long[] granted = {0};
      live.onSuccess(r -> granted[0] = System.nanoTime());
      while (await(client.mutexState(name)).queue().stream().anyMatch(q -> q.owner().equals("gone"))) {
        Thread.sleep(1);
      }
      toLeave.add((System.nanoTime() - start) / 1e6);
      HttpResponse<Buffer> r = await(live);
      if (r.statusCode() != 200 || !"live".equals(r.bodyAsJsonObject().getString("owner"))) {
        throw new IllegalStateException("round " + round + ": the live waiter got " + r.bodyAsString());
      }
      while (granted[0] == 0) {
        Thread.sleep(1);
      }
      toGrant.add((granted[0] - start) / 1e6);
      await(client.release(name, "live", null));
    }
    System.out.printf("disconnect, lease 10 s, %d rounds: disconnect -> next live waiter's grant %s; "
        + "disconnect -> entry gone from the queue %s%n", ROUNDS, stats(toGrant), stats(toLeave));
    web.close();
    net.close();
    vertx.undeploy(vertx.deploymentIDs().iterator().next()).await(30, TimeUnit.SECONDS);
  }

  private static void silent(Vertx vertx, EmbeddedDatabase db) throws Exception {
    CoordinationVerticle service = deploy(vertx, db, new JsonObject().put("leaseMs", SILENT_LEASE_MS));
    CoordinationClient client = service.client();
    WebClient web = WebClient.create(vertx);
    List<Double> toGrant = new ArrayList<>();
    for (int round = 0; round < SILENT_ROUNDS; round++) {
      String name = "s-" + round;
      await(client.tryAcquire(name, "holder"));
      for (int i = 0; i < 5; i++) {
        await(web.post(service.httpPort(), "127.0.0.1", "/mutexes/" + name + "/acquire")
            .sendJsonObject(new JsonObject().put("owner", "silent-" + i).put("wait", false)));
      }
      Future<HttpResponse<Buffer>> live = web.post(service.httpPort(), "127.0.0.1", "/mutexes/" + name + "/acquire")
          .sendJsonObject(new JsonObject().put("owner", "live").put("timeoutMs", 60_000));
      waitForQueue(client, name, 6);
      long start = System.nanoTime();
      await(client.release(name, "holder", null));
      HttpResponse<Buffer> r = await(live);
      toGrant.add((System.nanoTime() - start) / 1e6);
      if (r.statusCode() != 200) {
        throw new IllegalStateException("round " + round + ": the live waiter got " + r.bodyAsString());
      }
      await(client.release(name, "live", null));
    }
    System.out.printf("silent wait:false waiters, lease %d ms, %d rounds: release -> live waiter's grant %s%n",
        SILENT_LEASE_MS, SILENT_ROUNDS, stats(toGrant));
    web.close();
  }

  private static void waitForQueue(CoordinationClient client, String name, int size) throws Exception {
    while (await(client.mutexState(name)).queue().size() < size) {
      Thread.sleep(1);
    }
  }

  private static String stats(List<Double> ms) {
    List<Double> sorted = new ArrayList<>(ms);
    Collections.sort(sorted);
    return String.format("median %.1f ms, p90 %.1f ms, max %.1f ms", sorted.get(sorted.size() / 2),
        sorted.get((int) Math.ceil(sorted.size() * 0.9) - 1), sorted.get(sorted.size() - 1));
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.await(120, TimeUnit.SECONDS);
  }
}
